/**
 * Waiting for a condition, never for a length of time (docs/testing.md#no-fixed-sleeps): the suite
 * runs on shared, loaded machines, where "100 ms is enough for it to happen" is sometimes not.
 * These are the only places in test/ that pause (between two looks at the condition);
 * test/unit/no-fixed-sleeps.test.ts fails on a pause anywhere else. `vi.waitFor` does the same
 * for an assertion.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../server/db/client.ts';

/** Bound on a wait: generous, for a loaded machine. A passing test never waits for it. */
export const WAIT_DEADLINE_MS = 60_000;

/**
 * Polls `probe` until it answers something other than `undefined` or `false`, and answers that;
 * after `timeoutMs` fails naming `what`.
 */
export async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = WAIT_DEADLINE_MS, intervalMs = 20 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined && found !== false) return found;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** The sessions of `db`'s database waiting for a lock now (pg_stat_activity is the cluster's). */
export async function lockWaiters(db: Db): Promise<number> {
  const result = await db.execute(sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
  // postgres.js answers an array of rows, PGlite `{ rows }`.
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { n: number }[];
  return rows[0]?.n ?? 0;
}

/**
 * PostgreSQL: until at least `atLeast` sessions of `db`'s database wait for a lock, that is, the
 * call the test started has reached the rows the test holds. Polled from a connection of its own,
 * outside any transaction (inside one, pg_stat_activity is a snapshot that never changes).
 */
export const untilLockAwaited = (db: Db, what = 'a session waiting for the held rows', atLeast = 1): Promise<number> =>
  until(what, async () => {
    const waiting = await lockWaiters(db);
    return waiting >= atLeast && waiting;
  });

/**
 * Waits for `promise`, at most `ms`: a bound on waiting for something that should happen (a
 * process's exit), not a pause. Answers whether it settled in time.
 */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([promise.then(() => true as const, () => true as const), bound]).finally(() => clearTimeout(timer));
}

/**
 * Spaces out a stream the test makes (nudges at 200 a second, a fault every 250 ms): time as the
 * input of the test, never as a wait for something to happen. Each use is listed, with its
 * reason, in test/unit/no-fixed-sleeps.test.ts.
 */
export const paced = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
