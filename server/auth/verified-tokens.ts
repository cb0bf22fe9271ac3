/**
 * Access tokens already verified, by their exact text, with the caller each one names: a token's
 * text (signature included) verified once with a key the process holds for its whole life is
 * valid again on its next request, as long as the clock stays within the window in which its
 * time claims were acceptable. Verifying an HS256 token through WebCrypto costs about 30 us of
 * CPU; a hit costs a map lookup.
 *
 * The window is `[from, until)` in whole seconds since the epoch: `until` is `exp` (jose's rule:
 * expired once `exp <= now`), `from` the first second at which `nbf` and `iat` were acceptable.
 * Outside it (the token expired, or the clock was set back) the entry is dropped and the token
 * verified afresh, so a hit never accepts what a new verification would refuse. Refused tokens are
 * never stored, so nobody can fill the map but holders of valid tokens; it holds at most
 * `capacity` of them, dropping the least recently used.
 *
 * This is a cache of a pure function, not state: two processes each verify a token once, and
 * answer it alike.
 */
export interface Validity {
  /** The first second (since the epoch) the token is acceptable at. */
  from: number;
  /** The first second it is no longer acceptable at (its `exp`). */
  until: number;
}

export class VerifiedTokens<T> {
  private readonly entries = new Map<string, { value: T; validity: Validity }>();

  constructor(private readonly capacity: number) {
    if (!(Number.isInteger(capacity) && capacity >= 0)) throw new RangeError('The capacity must be a whole number.');
  }

  /** What `token` was verified as, unless it was not or `nowSeconds` lies outside its window (then it is dropped). */
  get(token: string, nowSeconds: number): T | undefined {
    const entry = this.entries.get(token);
    if (entry === undefined) return undefined;
    this.entries.delete(token);
    if (nowSeconds < entry.validity.from || nowSeconds >= entry.validity.until) return undefined;
    // Re-inserted: a Map iterates in insertion order, so the first key is the least recently used.
    this.entries.set(token, entry);
    return entry.value;
  }

  /** Records `token`, just verified, as `value` for the seconds of `validity`. */
  set(token: string, value: T, validity: Validity): void {
    if (this.capacity === 0) return;
    this.entries.delete(token);
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(token, { value, validity });
  }

  get size(): number {
    return this.entries.size;
  }
}
