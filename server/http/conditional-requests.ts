/**
 * Conditional requests (RFC 9110 section 13) on the REST facade: the validators a representation
 * is sent with (ETag, Last-Modified) and the 304 they allow on reads. The 412 of a stale
 * `If-Match` is decided inside the write's transaction (server/lib/preconditions.ts), against
 * the same tag (server/lib/etag.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bytesTag, parseEntityTags } from '../lib/etag.ts';
import type { RestMeta } from '../trpc/meta.ts';

export interface Validators {
  etag: string;
  /** Single resources only: `updated_at`, or `created_at` for one that never changes (a refund). */
  lastModified: Date | undefined;
}

const updatedAt = (output: unknown): string | undefined => {
  if (typeof output !== 'object' || output === null) return undefined;
  const { updated_at: updated, created_at: created } = output as { updated_at?: unknown; created_at?: unknown };
  if (typeof updated === 'string') return updated;
  return typeof created === 'string' ? created : undefined;
};

/** The latest `updated_at` (or `created_at`) of `output` and every object inside it. */
function newestUpdate(output: unknown): string | undefined {
  let newest = updatedAt(output);
  const inner = Array.isArray(output) ? output : typeof output === 'object' && output !== null ? Object.values(output) : [];
  for (const value of inner) {
    const candidate = newestUpdate(value);
    if (candidate !== undefined && (newest === undefined || Date.parse(candidate) > Date.parse(newest))) newest = candidate;
  }
  return newest;
}

/**
 * Sets `ETag` (and `Last-Modified` on a single resource) for the representation sent, `body` its
 * JSON text: the tag of those bytes, the one a service checks `If-Match` against
 * (server/lib/preconditions.ts, through the same output schema). A representation that holds
 * other resources (an order's `expand`) was last modified when its newest part was; one that holds
 * none is dated by its own `updated_at`.
 */
export function sendValidators(reply: FastifyReply, output: unknown, body: string, kind: RestMeta['kind']): Validators {
  const etag = bytesTag(body);
  reply.header('etag', etag);
  const modified = kind === 'item' ? newestUpdate(output) : undefined;
  const lastModified = modified === undefined ? undefined : new Date(modified);
  if (lastModified) reply.header('last-modified', lastModified.toUTCString());
  return { etag, lastModified };
}

/** RFC 9110 13.1.2/13.1.3: If-None-Match wins; If-Modified-Since only without it. */
export function notModified(request: FastifyRequest, { etag, lastModified }: Validators): boolean {
  const ifNoneMatch = parseEntityTags(request.headers['if-none-match']);
  if (ifNoneMatch !== undefined) {
    const bare = etag.replace(/^W\//, '');
    return ifNoneMatch.some((tag) => tag === '*' || tag.replace(/^W\//, '') === bare);
  }
  const since = request.headers['if-modified-since'];
  if (since !== undefined && lastModified !== undefined) {
    const sinceMs = Date.parse(since);
    return !Number.isNaN(sinceMs) && Math.floor(lastModified.getTime() / 1000) * 1000 <= sinceMs;
  }
  return false;
}
