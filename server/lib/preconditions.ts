import { DomainError } from '../errors/problems.ts';
import type { Preconditions } from '../trpc/context.ts';
import { entityTag } from './etag.ts';

/**
 * `If-Match` (RFC 9110 13.1.1) against the current representation, checked inside the write's
 * transaction after the row is locked, so a concurrent writer cannot slip in between.
 */
export function assertIfMatch(preconditions: Preconditions, current: unknown): void {
  const tags = preconditions.ifMatch;
  if (tags === undefined || tags.includes('*')) return;
  const currentTag = entityTag(current);
  // Strong comparison: weak tags never match.
  if (!tags.includes(currentTag)) {
    throw new DomainError('precondition-failed', 'The resource has changed since you read it: If-Match does not match its current ETag.', {
      extensions: { current_etag: currentTag },
    });
  }
}
