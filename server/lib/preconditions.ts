import { DomainError } from '../errors/problems.ts';
import type { z } from 'zod';
import { representationTag } from './etag.ts';

/** What a conditional write asks of the current representation; services take it as given. */
export interface Preconditions {
  /** Entity tags from `If-Match`; `['*']` matches any existing resource. */
  ifMatch?: string[];
}

/**
 * `If-Match` (RFC 9110 13.1.1) against the current representation, checked inside the write's
 * transaction after the row is locked, so a concurrent writer cannot slip in between. `schema` is
 * the read's output schema: the tag is the one a read sends as `ETag` (server/lib/etag.ts),
 * whatever order `current` has its keys in.
 */
export function assertIfMatch<S extends z.ZodType>(preconditions: Preconditions, schema: S, current: z.input<S>): void {
  const tags = preconditions.ifMatch;
  if (tags === undefined || tags.includes('*')) return;
  const currentTag = representationTag(schema, current);
  // Strong comparison: weak tags never match.
  if (!tags.includes(currentTag)) {
    throw new DomainError('precondition-failed', 'The resource has changed since you read it: If-Match does not match its current ETag.', {
      extensions: { current_etag: currentTag },
    });
  }
}
