/**
 * What every part of the OpenAPI document refers to: the shared headers and parameters
 * (components, referenced), the security of an operation and the words that say who may call it,
 * and the shape of a part described beside its endpoints (health, OAuth).
 */
import { isPublic, type Policy } from '../auth/policy.ts';
import type { ProblemSlug } from '../errors/problems.ts';
import { IDEMPOTENCY_HEADER } from '../trpc/idempotency.ts';

export type Json = Record<string, unknown>;
type Scheme = 'bearerAuth' | 'oauth2';
type Security = Partial<Record<Scheme, string[]>>[];

export const ref = (section: 'schemas' | 'headers' | 'parameters', name: string) => ({ $ref: `#/components/${section}/${name}` });
export const problemPage = (slug: string) => `/problems/${slug}`;

/**
 * A part of the document described beside its endpoints rather than from the router (the health
 * checks, server/http/health-openapi.ts; the OAuth 2.0 endpoints, server/oauth/openapi-paths.ts):
 * its tag, paths, the problems they answer and the components they use. The caller that assembles
 * the service hands the module ones in, so the document builder knows nothing of them.
 */
export interface DocumentPart {
  tag: { name: string; description: string };
  paths: Readonly<Record<string, unknown>>;
  /** The problems whose schemas (`<Slug>Problem`) its paths refer to. */
  problems?: readonly ProblemSlug[];
  schemas?: Readonly<Record<string, Json>>;
  headers?: Readonly<Record<string, unknown>>;
  securitySchemes?: Readonly<Record<string, unknown>>;
}

const ROLE_NAMES = { customer: 'customers', admin: 'admins', service: 'service clients' } as const;

/**
 * Security per operation: public operations take a token but need none (`{}` first: anonymous
 * is enough; an invalid token is still 401); the others need a bearer token, which an OAuth 2.0
 * flow grants with the operation's scope.
 */
export function securityOf(policy: Policy | undefined): Security {
  if (policy === undefined || isPublic(policy)) return [{}, { bearerAuth: [] }];
  return [{ bearerAuth: [] }, { oauth2: [policy.scope] }];
}

export function accessText(policy: Policy | undefined): string {
  if (policy === undefined || isPublic(policy)) {
    return '**Access:** public; a token is optional (an invalid or expired one is still refused with 401).';
  }
  const who = policy.roles.map((role) => ROLE_NAMES[role]);
  const callers = who.length > 1 ? `${who.slice(0, -1).join(', ')} or ${who.at(-1)}` : who[0];
  return (
    `**Access:** ${callers}, with a token granting \`${policy.scope}\` (a token without a \`scope\` claim grants what its role allows; ` +
    'service clients always need the scope).'
  );
}

// ---------------------------------------------------------------------------------------------
// Headers and parameters shared by every operation (components, referenced).

const headerObject = (description: string, schema: Json = { type: 'string' }) => ({ description, schema });
const COUNT = { type: 'integer', minimum: 0, maximum: 2_147_483_647 };
export const HEADERS = {
  'X-Request-Id': headerObject('The request id (echoed when the request sent a valid one); problems repeat it as `request_id`.'),
  'RateLimit-Limit': headerObject('Requests allowed per window for this caller.', COUNT),
  'RateLimit-Remaining': headerObject('Requests left in the current window.', COUNT),
  'RateLimit-Reset': headerObject('Seconds until the window resets.', COUNT),
  ETag: headerObject('Strong entity tag of the representation (send it back in `If-Match` or `If-None-Match`).'),
  'Last-Modified': headerObject('Time of the last change, as an HTTP date.'),
  'Cache-Control': headerObject('Caching policy: `public, max-age=60` (products), `private, max-age=0, must-revalidate` (orders, users, fulfillments) or `no-store` (payments, writes, errors).'),
  Location: headerObject('Path of the resource, under `/api/v1`.'),
  Link: headerObject('RFC 8288 links to the other pages: `rel="next"` and `rel="prev"` when they exist.'),
  'Idempotent-Replayed': headerObject('`true` on an answer replayed for a repeated `Idempotency-Key`.', { type: 'string', enum: ['true'] }),
  'Retry-After': headerObject('Seconds to wait before retrying.', COUNT),
  'WWW-Authenticate': headerObject('The Bearer challenge (RFC 6750), with `error="invalid_token"` or `error="insufficient_scope"`.'),
  'Accept-Post': headerObject('Media types this POST accepts.'),
  'Accept-Patch': headerObject('Media types this PATCH accepts.'),
} as const;
export type HeaderName = keyof typeof HEADERS;
export const headers = (...names: HeaderName[]) => Object.fromEntries(names.map((name) => [name, ref('headers', name)]));
const RATE_LIMIT: HeaderName[] = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];
/** On every answer, problems included. */
export const ALWAYS: HeaderName[] = ['X-Request-Id', ...RATE_LIMIT];

/**
 * Conditional request headers (RFC 9110 section 13.1). `If-Match` must be `*` or a list of entity
 * tags; one that is not can never match, so the write is refused with 412. `If-None-Match` and
 * `If-Modified-Since` with a value that is not a tag list / HTTP date match nothing and are
 * ignored (RFC 9110 sections 13.1.2 and 13.1.3).
 */
const ENTITY_TAG = '(W/)?"[\\x21\\x23-\\x7E]*"';
export const PARAMETERS = {
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    required: false,
    schema: { type: 'string', pattern: `^(\\*|${ENTITY_TAG}([ \\t]*,[ \\t]*${ENTITY_TAG})*)$` },
    description: 'Entity tag from a previous read (or `*`); a stale or malformed one answers 412 and changes nothing.',
  },
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    schema: { type: 'string' },
    description:
      'Entity tags of representations the client has (or `*`); when one is current the answer is 304. Wins over If-Modified-Since; a value that is no tag list matches nothing.',
  },
  IfModifiedSince: {
    name: 'If-Modified-Since',
    in: 'header',
    required: false,
    schema: { type: 'string' },
    description: 'An HTTP date; when the resource has not changed since, the answer is 304. A value that is no HTTP date is ignored.',
  },
  IdempotencyKey: {
    name: IDEMPOTENCY_HEADER,
    in: 'header',
    required: false,
    // docs/api.md#idempotency (server/trpc/idempotency.ts).
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]{1,255}$', example: 'order-17-payment-1' },
    description:
      'Makes a retry safe: the first request with a key runs once; the same key with the same request answers its stored ' +
      'result (200, `Idempotent-Replayed: true`); with another request 422 `idempotency-key-mismatch`; while the first still runs, the retry waits for ' +
      'it (409 `idempotency-key-in-use` with `Retry-After` after 10 s). Scoped to the caller, kept 24 hours; a failed attempt leaves the key free.',
  },
} as const;
