/**
 * Opaque credentials of the authorization server: client secrets, authorization codes, refresh
 * tokens. Each is 256 random bits, so a plain SHA-256 is a sound way to keep it (no salt or slow
 * hash needed: nothing to guess); the database holds only the hash, and a presented value is
 * compared with it in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new random credential: 32 bytes, base64url (43 characters), with an optional readable prefix. */
export function newSecret(prefix = ''): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** The stored form of a credential: SHA-256, base64url. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('base64url');
}

/** Whether `secret` is the credential `storedHash` was made from, in time independent of where they differ. */
export function secretMatches(secret: string, storedHash: string | null | undefined): boolean {
  if (!storedHash) return false;
  const presented = Buffer.from(hashSecret(secret), 'utf8');
  const stored = Buffer.from(storedHash, 'utf8');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
