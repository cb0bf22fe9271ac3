/**
 * The background purges (expired idempotency keys, OAuth grants and sign-in failures): how they
 * delete and how often they run.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { FastifyBaseLogger } from 'fastify';
import type { BackgroundJob } from '../lib/settings.ts';
import type { Db } from './client.ts';

/** Rows one DELETE of a purge removes at most: short statements, short locks. */
export const PURGE_BATCH = 1000;

/**
 * Deletes the rows of `table` matching `where`, a batch at a time. Rows a request holds are
 * skipped, never waited for (`FOR UPDATE SKIP LOCKED`), so a purge never blocks a request; the
 * next round finds them. Returns how many rows it deleted.
 */
export async function deleteInBatches(db: Db, table: PgTable, where: SQL): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await db.execute(sql`
      delete from ${table} where ctid in (
        select ctid from ${table} where ${where} limit ${PURGE_BATCH} for update skip locked)`);
    const count = rowCount(deleted);
    total += count;
    if (count < PURGE_BATCH) return total;
  }
}

/** Both drivers report a DELETE's row count, under different names. */
function rowCount(result: unknown): number {
  const r = result as { count?: unknown; affectedRows?: unknown };
  if (typeof r.count === 'number') return r.count;
  if (typeof r.affectedRows === 'number') return r.affectedRows;
  return 0;
}

/**
 * Runs `run` every `intervalMs` (unref'd: it never keeps the process alive), one round at a time.
 * A failure is logged and the next round tries again. Returns the stop function, which lets a
 * round in progress finish, so call it before the database closes.
 */
export function startPurge(log: FastifyBaseLogger, intervalMs: number, what: string, run: () => Promise<number>): () => Promise<void> {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = run()
      .then((deleted) => {
        if (deleted > 0) log.info({ deleted }, `${what} purged`);
      })
      .catch((error: unknown) => log.warn({ err: error }, `purge of ${what} failed; retrying next round`))
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/** `startPurge` as a module's background job: runs from `start()` until `stop()`. */
export function purgeJob(log: FastifyBaseLogger, intervalMs: number, what: string, run: () => Promise<number>): BackgroundJob {
  let stop: (() => Promise<void>) | undefined;
  return {
    name: `purge of ${what}`,
    start: () => {
      stop ??= startPurge(log, intervalMs, what, run);
    },
    stop: async () => {
      await stop?.();
    },
  };
}
