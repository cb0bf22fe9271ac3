/**
 * Rate-limit counters in the service's own database, for `@fastify/rate-limit` when no Redis is
 * configured: every instance on one database counts against the same limit, as the contract's
 * limits mean (a process's memory would give each instance a limit of its own).
 *
 * One statement per count, an upsert of the caller's row: the first hit of a window inserts it
 * (`hits` 1, `resets_at` a window from now); later hits add one, or start a new window once the
 * row's has ended. The database's clock decides, so instances with skewed clocks agree, and the
 * row's lock orders concurrent hits, so none is lost. The semantics are those of the plugin's
 * Redis store (a fixed window from the first hit).
 */
import type { FastifyRateLimitStore } from '@fastify/rate-limit';
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { rateLimitCounters as counters } from '../db/schema.ts';
import { statement } from '../db/statements.ts';
import { deleteInBatches } from '../lib/purge.ts';

/** A count that has not answered by then is given up (the limiter fails open), as Redis's command timeout does. */
export const COUNT_TIMEOUT_MS = 500;

/**
 * Counts sent and not yet settled, at most: past it a count fails open at once. A count given up
 * at the timeout still runs, so without a bound a slow database would collect a queue that grows
 * with the request rate.
 */
export const MAX_COUNTS_IN_FLIGHT = 1024;

/** Counts stop at this, well inside `integer`: past the limit, more counting changes nothing. */
const MAX_HITS = 2_147_483_646;

const expired = sql`${counters.resetsAt} <= now()`;

const countHit = statement('rate_limit_count', (db) =>
  db
    .insert(counters)
    .values({
      key: sql.placeholder('key'),
      hits: 1,
      resetsAt: sql`now() + ${sql.placeholder('windowMs')}::float8 * interval '1 millisecond'`,
    })
    .onConflictDoUpdate({
      target: counters.key,
      set: {
        hits: sql`case when ${expired} then 1 else least(${counters.hits}, ${sql.raw(String(MAX_HITS))}) + 1 end`,
        resetsAt: sql`case when ${expired} then excluded.resets_at else ${counters.resetsAt} end`,
      },
    })
    .returning({
      hits: counters.hits,
      ttlMs: sql<number>`(extract(epoch from ${counters.resetsAt} - now()) * 1000)::float8`,
    }),
);

/**
 * A counter store of `@fastify/rate-limit`. Keys need no prefix per limiter: the service's keys
 * (`sub:`, `ip:`) and /oauth's (`oauth:ip:`) already differ.
 */
export class DatabaseCounterStore implements FastifyRateLimitStore {
  private inFlight = 0;

  constructor(
    private readonly db: Db,
    private readonly maxInFlight = MAX_COUNTS_IN_FLIGHT,
  ) {}

  /** Counts sent and not yet settled (answered, failed, or still running after the timeout). */
  get pending(): number {
    return this.inFlight;
  }

  // The plugin passes each limiter's window (ms) and limit after the callback; its types omit them.
  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow?: number): void {
    if (timeWindow === undefined) {
      callback(new Error('the rate-limit plugin passed no time window'));
      return;
    }
    if (this.inFlight >= this.maxInFlight) {
      callback(new Error(`${this.inFlight} rate-limit counts are still running`));
      return;
    }
    // The first of the answer, a failure (thrown or rejected) and the timeout is the callback's;
    // nothing is left to reject unheard.
    let answered = false;
    const answer = (error: Error | null, result?: { current: number; ttl: number }) => {
      if (answered) return;
      answered = true;
      clearTimeout(timer);
      callback(error, result);
    };
    const timer = setTimeout(() => answer(new Error(`the rate-limit count did not answer within ${COUNT_TIMEOUT_MS} ms`)), COUNT_TIMEOUT_MS);
    const failed = (error: unknown) => answer(error instanceof Error ? error : new Error(String(error)));
    const settled = () => {
      this.inFlight--;
    };
    try {
      const counting = countHit(this.db, { key, windowMs: timeWindow });
      this.inFlight++;
      counting.then(settled, settled);
      counting.then((rows) => {
        const row = rows[0];
        if (row === undefined) answer(new Error('the rate-limit count returned no row'));
        // `resets_at` keeps milliseconds and `now()` microseconds: a fresh window can read 0.5 ms
        // longer than itself, so the time left is bounded by the window.
        else answer(null, { current: row.hits, ttl: Math.min(timeWindow, Math.max(0, Math.ceil(row.ttlMs))) });
      }, failed);
    } catch (error) {
      failed(error);
    }
  }

  child(): FastifyRateLimitStore {
    return this;
  }
}

/** The plugin's `store` option: a class it constructs itself (with its options, which this store does not need). */
export function databaseCounterStore(db: Db): new () => FastifyRateLimitStore {
  return class extends DatabaseCounterStore {
    constructor() {
      super(db);
    }
  };
}

/**
 * Deletes the counters whose window has ended (an ended window counts as no row), in batches,
 * skipping rows a count holds. Returns how many.
 */
export const purgeExpiredCounters = (db: Db): Promise<number> => deleteInBatches(db, counters, expired);
