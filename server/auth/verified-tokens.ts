/**
 * Access tokens already verified, by their exact text, with the caller each one names: a token's
 * text (signature included) verified once with a key the process holds for its whole life is
 * valid again on its next request, until it expires. Verifying an HS256 token through WebCrypto
 * costs about 30 us of CPU; a hit costs a map lookup.
 *
 * Only the expiry moves with time: a token whose `nbf` and `iat` were acceptable when it was
 * verified stays acceptable, so a hit checks `exp` alone (by jose's rule: expired once
 * `exp <= now` in whole seconds). Refused tokens are never stored, so nobody can fill the map but
 * holders of valid tokens; it holds at most `capacity` of them, dropping the least recently used.
 *
 * This is a cache of a pure function, not state: two processes each verify a token once, and
 * answer it alike.
 */
export class VerifiedTokens<T> {
  private readonly entries = new Map<string, { value: T; exp: number }>();

  constructor(private readonly capacity: number) {
    if (!(Number.isInteger(capacity) && capacity >= 0)) throw new RangeError('The capacity must be a whole number.');
  }

  /** What `token` was verified as, unless it was not or has expired since (then it is dropped). */
  get(token: string, nowSeconds: number): T | undefined {
    const entry = this.entries.get(token);
    if (entry === undefined) return undefined;
    this.entries.delete(token);
    if (entry.exp <= nowSeconds) return undefined;
    // Re-inserted: a Map iterates in insertion order, so the first key is the least recently used.
    this.entries.set(token, entry);
    return entry.value;
  }

  /** Records `token`, just verified, as `value` until `exp` (seconds since the epoch). */
  set(token: string, value: T, exp: number): void {
    if (this.capacity === 0) return;
    this.entries.delete(token);
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(token, { value, exp });
  }

  get size(): number {
    return this.entries.size;
  }
}
