/**
 * The lock every process's migrations run under (docs/operations.md#migrations). Without it,
 * instances started together on a fresh PostgreSQL database raced in drizzle's migrator: two
 * `CREATE TABLE IF NOT EXISTS` of its journal at once fail on `pg_type_typname_nsp_index`, and two
 * transactions applying the same migration fail on each other's objects.
 *
 * A session advisory lock: it belongs to the connection that took it, and PostgreSQL releases it
 * when that connection ends. So the lock, the migrations and the unlock must run on one session
 * (`db`: on PostgreSQL the migrator's `singleSessionClient`, which refuses every statement once its
 * connection is gone instead of going on in a new session without the lock; PGlite has only one).
 */
import { setTimeout as pause } from 'node:timers/promises';
import { sql, type SQL } from 'drizzle-orm';

/** What the lock needs of a database: a statement run on its one session (client.ts's Db is one; not imported, which would make a circle). */
interface Session {
  execute(query: SQL): Promise<unknown>;
}

/** One number for this service, whatever else shares the server (advisory locks are per database). */
export const MIGRATION_LOCK_KEY = '7319604182259113573';

/** How often a waiting process asks for the lock again. */
const RETRY_MS = 500;
/** How often a waiting process says it is waiting (the first time at once). */
const SAY_EVERY_MS = 5_000;

/** A process waiting for the migration lock: who holds it, and for how long we have waited. */
export interface MigrationLockWait {
  /** The PostgreSQL backend pid of the session holding the lock (`pg_stat_activity.pid`). */
  holderPid: number;
  /** That session's `application_name` (`order-service migrations` for ours), when PostgreSQL shows it. */
  holderName: string | undefined;
  waitedMs: number;
}

/** The line a waiting process logs (docs/operations.md#migrations). */
export function migrationLockWaitMessage({ holderPid, holderName, waitedMs }: MigrationLockWait): string {
  return (
    `waiting for the migration lock held by pid ${holderPid}${holderName ? ` (${holderName})` : ''} for ${Math.round(waitedMs / 1000)} s: ` +
    'another process is migrating this database, or a stopped one (a suspended npm run migrate) still holds the lock (docs/operations.md#migrations)'
  );
}

// postgres.js answers an array of rows, PGlite an object holding them.
const rowsOf = (result: unknown) => (Array.isArray(result) ? result : ((result as { rows?: unknown[] }).rows ?? [])) as Record<string, unknown>[];

/**
 * Runs `work` holding the migration lock on `db`'s session, and releases it on every path. The
 * lock is asked for with `pg_try_advisory_lock` every RETRY_MS rather than waited for in one
 * `pg_advisory_lock`: no statement stays open for however long the holder takes, and while it is
 * held elsewhere `onWait` hears who holds it, at once and then every SAY_EVERY_MS.
 */
export async function underMigrationLock<T>(db: Session, work: () => Promise<T>, onWait: (wait: MigrationLockWait) => void): Promise<T> {
  await takeMigrationLock(db, onWait);
  try {
    return await work();
  } finally {
    // An unlock that fails has nothing left to release: it fails only when the session is gone,
    // and its locks went with it. Its error must not hide the work's own.
    await db.execute(sql.raw(`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`)).catch(() => undefined);
  }
}

async function takeMigrationLock(db: Session, onWait: (wait: MigrationLockWait) => void): Promise<void> {
  const start = performance.now();
  let saidAt: number | undefined;
  for (;;) {
    const [attempt] = rowsOf(await db.execute(sql.raw(`select pg_try_advisory_lock(${MIGRATION_LOCK_KEY}) as taken`)));
    if (attempt?.taken === true) return;
    const now = performance.now();
    if (saidAt === undefined || now - saidAt >= SAY_EVERY_MS) {
      // A bigint advisory key shows in pg_locks as classid (its high half), objid (its low half)
      // and objsubid 1 (the PostgreSQL manual, "pg_locks").
      const [holder] = rowsOf(
        await db.execute(
          sql.raw(
            `select l.pid, a.application_name from pg_locks l left join pg_stat_activity a on a.pid = l.pid ` +
              `where l.locktype = 'advisory' and l.granted and l.objsubid = 1 ` +
              `and l.database = (select oid from pg_database where datname = current_database()) ` +
              `and ((l.classid::bigint << 32) | l.objid::bigint) = ${MIGRATION_LOCK_KEY} limit 1`,
          ),
        ),
      );
      // No holder: it let go in between, and the next attempt takes the lock.
      if (typeof holder?.pid === 'number') {
        const name = typeof holder.application_name === 'string' && holder.application_name !== '' ? holder.application_name : undefined;
        onWait({ holderPid: holder.pid, holderName: name, waitedMs: now - start });
        saidAt = now;
      }
    }
    await pause(RETRY_MS);
  }
}
