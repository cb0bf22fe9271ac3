/**
 * PKCE (RFC 7636) with the S256 method only: `plain` would hand the verifier to anyone who sees
 * the authorization request.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** BASE64URL(SHA256(verifier)) is always 43 characters. */
export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** code-verifier = 43*128unreserved (section 4.1). */
export const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export function verifierMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const stored = Buffer.from(challenge);
  return computed.length === stored.length && timingSafeEqual(computed, stored);
}
