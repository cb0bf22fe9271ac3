/**
 * The `scope` parameter (RFC 6749 section 3.3): space-delimited tokens. A request may only
 * narrow: what a client asks must lie within what it is registered for (or, on a refresh, within
 * what was originally granted); without a `scope` it gets all of that.
 */
import { invalidScope } from './errors.ts';

/** scope-token = 1*( %x21 / %x23-5B / %x5D-7E ) */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** The requested tokens (undefined: no scope parameter); `invalid_scope` when malformed. */
export function parseScope(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const tokens = value.split(' ');
  if (tokens.some((token) => !SCOPE_TOKEN.test(token))) {
    throw invalidScope('The scope parameter must be scope names separated by single spaces.');
  }
  return [...new Set(tokens)];
}

/**
 * The scope to grant: `requested` if it lies within `allowed`, all of `allowed` when nothing was
 * requested; in `allowed`'s order. `invalid_scope` when a requested token is not allowed, or
 * when nothing would be granted.
 */
export function grantScope(requested: readonly string[] | undefined, allowed: readonly string[], within: string): string {
  const beyond = requested?.filter((token) => !allowed.includes(token)) ?? [];
  // The request's own words are not echoed: only what may be granted is named.
  if (beyond.length > 0) throw invalidScope(`The scope asks for more than ${within} (${allowed.join(' ') || 'none'}).`);
  const granted = requested === undefined ? [...allowed] : allowed.filter((token) => requested.includes(token));
  if (granted.length === 0) throw invalidScope(`There is no scope to grant: ${within} is empty.`);
  return granted.join(' ');
}

export const scopeTokens = (scope: string): string[] => scope.split(' ').filter(Boolean);
