/**
 * Rate-limit counts in Redis without a round trip per request (issue 23, docs/api.md#rate-limits), for
 * `@fastify/rate-limit` when `REDIS_URL` is set. Each instance takes a range of a caller's window
 * from Redis with one INCRBY (a lease: counts `top - size + 1` to `top` are this instance's to
 * hand out) and answers the caller's next requests from it in memory; it goes back to Redis when
 * the range is spent. A caller's first lease of a window is 1 and each next one doubles, up to
 * `LEASE_SHARE` of the limit and never past what was left of it when the last range came: a
 * caller's first requests of a window take leases of 1, 2, 4..., and a busy caller costs about one
 * round trip per twentieth of its limit. A limit under 40 (the sign-in limit's 20 among them) has no leases:
 * one INCRBY per request, exact, as the plugin's own Redis store counts.
 *
 * The approximation: ranges are disjoint slices of one shared count, so all instances together
 * never let a caller past the limit in a window; but what an instance holds and does not spend is
 * lost to the caller, who may be refused up to about one lease per instance early (5% of the
 * limit each; less near the limit, where leases shrink to what is left). Once a range reaches past
 * the limit, the caller is refused until the window ends without asking Redis again (its count
 * can only grow). The window is the plugin's Redis store's: fixed, from the first count, kept by
 * the key's expiry in Redis; an instance's lease ends with it, on its own clock from the key's
 * time to live.
 */
import type { FastifyRateLimitStore } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';

/** A lease is at most this share of the caller's limit (at least 1). */
export const LEASE_SHARE = 0.05;

/**
 * Callers whose leases one instance keeps, the least recently leased forgotten beyond: a flood of
 * distinct callers cannot grow memory, and a forgotten lease only costs its caller what it held.
 */
export const MAX_LEASES = 10_000;

// Adds the lease to the caller's count and answers the count and the window's time left; the
// first count of a window (a key with no expiry yet) starts the window.
const TAKE_LEASE = `
local count = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {count, ttl}`;

interface Lease {
  /** The next count of the caller's window this instance hands out. */
  next: number;
  /** The last count of the range this instance holds: the shared count when the range came. */
  top: number;
  /** When the window ends, on this process's clock. */
  endsAt: number;
  /** The range last taken: the next one doubles it, up to the cap. */
  size: number;
  /** A range being taken: counts that find this lease spent meanwhile wait for it. */
  taking: Promise<void> | undefined;
}

type Callback = (error: Error | null, result?: { current: number; ttl: number }) => void;

export class RedisLeaseStore implements FastifyRateLimitStore {
  private readonly leases = new Map<string, Lease>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly maxLeases = MAX_LEASES,
  ) {}

  // The plugin passes each limiter's window (ms) and limit after the callback; its types omit them.
  incr(key: string, callback: Callback, timeWindow?: number, max?: number): void {
    if (timeWindow === undefined || max === undefined) {
      callback(new Error('the rate-limit plugin passed no time window or limit'));
      return;
    }
    const now = Date.now();
    let lease = this.leases.get(key);
    if (lease?.taking) {
      // Counted once the range being taken has come (or failed with it: fail open).
      lease.taking.then(
        () => this.incr(key, callback, timeWindow, max),
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
      return;
    }
    if (lease && lease.endsAt <= now) {
      this.leases.delete(key);
      lease = undefined;
    }
    // Within the range held, or past the limit already (no count of this window can fall back under it).
    if (lease && (lease.next <= lease.top || lease.top > max)) {
      callback(null, { current: lease.next++, ttl: lease.endsAt - now });
      return;
    }
    const cap = Math.max(1, Math.floor(max * LEASE_SHARE));
    if (cap === 1) {
      this.countEach(key, callback, timeWindow, max);
      return;
    }
    const size = lease ? Math.max(1, Math.min(lease.size * 2, cap, max - lease.top)) : 1;
    const held: Lease = lease ?? { next: 1, top: 0, endsAt: 0, size: 0, taking: undefined };
    const taking = this.take(key, size, timeWindow).then(([count, ttl]) => {
      held.top = count;
      held.next = count - size + 1;
      held.size = size;
      held.endsAt = Date.now() + ttl;
      held.taking = undefined;
    });
    held.taking = taking;
    this.remember(key, held);
    // Registered before any waiter's: this count takes the range's first.
    taking.then(
      () => callback(null, { current: held.next++, ttl: Math.max(0, held.endsAt - Date.now()) }),
      (error: unknown) => {
        if (this.leases.get(key) === held) this.leases.delete(key);
        callback(error instanceof Error ? error : new Error(String(error)));
      },
    );
  }

  /**
   * A limit too small for leases: each count is its own INCRBY 1, sent at once (concurrent counts
   * of one caller do not queue behind each other); only a count past the limit is kept, so that
   * the rest of the window is refused without asking Redis.
   */
  private countEach(key: string, callback: Callback, timeWindow: number, max: number): void {
    this.take(key, 1, timeWindow).then(
      ([count, ttl]) => {
        const known = this.leases.get(key);
        if (count > max && !(known && known.next > count)) this.remember(key, { next: count + 1, top: count, endsAt: Date.now() + ttl, size: 1, taking: undefined });
        callback(null, { current: count, ttl });
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
    );
  }

  /** Most recently leased last, so that the first is the one to forget when there are too many. */
  private remember(key: string, lease: Lease): void {
    this.leases.delete(key);
    this.leases.set(key, lease);
    if (this.leases.size > this.maxLeases) {
      const oldest = this.leases.keys().next();
      if (!oldest.done) this.leases.delete(oldest.value);
    }
  }

  /** Keys of this store's limiters already differ (`sub:`, `ip:`, `oauth:ip:`), and each count names its own limit. */
  child(): FastifyRateLimitStore {
    return this;
  }

  private async take(key: string, size: number, timeWindow: number): Promise<[number, number]> {
    const answer = await this.redis.eval(TAKE_LEASE, 1, this.prefix + key, size, timeWindow);
    if (!Array.isArray(answer) || typeof answer[0] !== 'number' || typeof answer[1] !== 'number') throw new Error('the rate-limit lease script answered an unexpected value');
    return [answer[0], answer[1]];
  }
}

/** The plugin's `store` option: a class it constructs itself (with its options, which this store does not need). */
export function redisLeaseStore(redis: Redis, prefix: string): new () => FastifyRateLimitStore {
  return class extends RedisLeaseStore {
    constructor() {
      super(redis, prefix);
    }
  };
}
