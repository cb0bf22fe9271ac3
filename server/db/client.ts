/**
 * Opening the database (docs/architecture.md#the-database): PGlite (a data directory, or in memory)
 * or PostgreSQL through postgres.js, the migrations under their lock, a ping for the health check
 * and LISTEN for the live updates. Transactions are unit-of-work.ts's job; a PGlite data
 * directory's lock and permissions are pglite-data-dir.ts's.
 */
import { chmodSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import postgres from 'postgres';
import { projectRoot } from '../lib/project-root.ts';
import { migrationLockWaitMessage, underMigrationLock, type MigrationLockWait } from './migration-lock.ts';
import { guardLostConnections, lostConnectionOptions, singleSessionClient } from './postgres-js-lost-connections.ts';
import type { Db } from './handle.ts';
import { lockDataDirectory, makePrivate } from './pglite-data-dir.ts';
import * as schema from './schema.ts';
import { gateTransactions } from './unit-of-work.ts';

export type { Db, Schema } from './handle.ts';
export { DataDirectoryLockedError } from './pglite-data-dir.ts';

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** Answers true when the database responds to a trivial query in time. */
  ping(timeoutMs?: number): Promise<boolean>;
  /**
   * PostgreSQL: the pool as far as we gate it (postgres.js shows no connection states): its size,
   * transactions holding a slot, and those waiting for one (for /metrics). Absent on PGlite.
   */
  poolState?: () => PoolState;
  /**
   * LISTEN on `channel` (server/events/live.ts): `onNotify` gets each payload NOTIFYed there,
   * after its transaction commits; `onListen` is called each time the LISTEN is in place (on
   * PostgreSQL again after its connection was lost and remade: notifications sent meanwhile are
   * lost). Resolves with the function that stops listening.
   */
  listen(channel: string, onNotify: (payload: string) => void, onListen: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** A LISTEN on a channel, as `Database['listen']` makes it (the live updates and the webhook worker take one). */
export type Listen = Database['listen'];

export interface PoolState {
  /** Connections of the request pool (`DATABASE_POOL_SIZE`). */
  size: number;
  /** Of those, how many transactions may hold at once (`transactionSlots`). */
  transactionSlots: number;
  /** Transactions holding a slot (each on a connection of its own). */
  activeTransactions: number;
  /** Transactions waiting for a slot. */
  waitingTransactions: number;
}

export const migrationsFolder = join(projectRoot, 'drizzle');

/**
 * Bounds on every wait for PostgreSQL, so an outage or a locked row answers 503 in seconds
 * instead of holding requests (and the pool) for as long as the cause lasts.
 */
export interface DatabaseTimeouts {
  /** Establishing a connection (postgres.js `connect_timeout`). */
  connectTimeoutMs: number;
  /** A pooled connection unused this long is closed, so stale ones do not linger after an outage. */
  idleTimeoutMs: number;
  /** Server side: one statement runs at most this long (`statement_timeout`). */
  statementTimeoutMs: number;
  /**
   * Server side: waiting for a row or table lock (`lock_timeout`). Short, so writers queued on a
   * locked row give their connection back quickly; writes to one order normally hold its lock
   * for milliseconds.
   */
  lockTimeoutMs: number;
  /** Server side: a transaction left idle this long is ended and its locks released. */
  idleInTransactionTimeoutMs: number;
  /** Waiting for a transaction slot of the pool (postgres.js itself would queue forever). */
  acquireTimeoutMs: number;
}

export const defaultDatabaseTimeouts: DatabaseTimeouts = {
  connectTimeoutMs: 5_000,
  idleTimeoutMs: 60_000,
  statementTimeoutMs: 10_000,
  lockTimeoutMs: 3_000,
  idleInTransactionTimeoutMs: 30_000,
  acquireTimeoutMs: 5_000,
};

export interface OpenDatabaseOptions {
  /** `postgres://...`, `memory://`, or undefined for PGlite under `dataDir`. */
  url: string | undefined;
  dataDir: string;
  poolSize?: number;
  /** PostgreSQL only; each unset field keeps its default (`defaultDatabaseTimeouts`). */
  timeouts?: Partial<DatabaseTimeouts>;
  /** An already created PGlite instance (tests clone a migrated one); it must load `pg_trgm` (`extensions`). */
  pglite?: PGlite;
  /**
   * Apply the migrations in `drizzle/` on opening (default). `false` (`MIGRATE_ON_START=false`,
   * for deploys that run `npm run migrate` as a step of their own): nothing is applied, and a
   * database that lacks one of them is refused with `MigrationsPendingError`.
   */
  migrate?: boolean;
  /**
   * Called every few seconds while another session holds the migration lock (PostgreSQL,
   * docs/operations.md#migrations); by default a line on stderr (`migrationLockWaitMessage`).
   */
  onMigrationLockWait?: (wait: MigrationLockWait) => void;
  /**
   * Called with the text of every statement the service runs (drizzle's logger): how tests count
   * statements (one per expansion per page, docs/api.md#expand). Unset in the service.
   */
  onQuery?: (text: string) => void;
}

/** drizzle's logger for `onQuery`, or none. */
const queryLogger = (onQuery: OpenDatabaseOptions['onQuery']) => (onQuery ? { logger: { logQuery: (text: string) => onQuery(text) } } : {});

/** The database lacks migrations this code needs, and opening it was asked not to apply them. */
export class MigrationsPendingError extends Error {
  readonly code = 'MIGRATIONS_PENDING';

  constructor(readonly pending: number) {
    super(`The database lacks ${pending} of this version's migrations and MIGRATE_ON_START=false: run \`npm run migrate\` first.`);
    this.name = 'MigrationsPendingError';
  }
}

/**
 * Migrations of `drizzle/` not yet applied, by drizzle's own rule: it records each applied one in
 * `drizzle.__drizzle_migrations` with its folder time, and applies those newer than the latest.
 */
async function pendingMigrations(db: Pick<Db, 'execute'>): Promise<number> {
  const migrations = readMigrationFiles({ migrationsFolder });
  // postgres.js answers an array of rows, PGlite an object holding them.
  const rowsOf = (result: unknown) => (Array.isArray(result) ? result : ((result as { rows?: unknown[] }).rows ?? [])) as Record<string, unknown>[];
  const [table] = rowsOf(await db.execute(sql`select to_regclass('drizzle.__drizzle_migrations') is not null as present`));
  if (table?.present !== true) return migrations.length;
  const [latest] = rowsOf(await db.execute(sql`select max(created_at)::text as applied_until from drizzle.__drizzle_migrations`));
  const appliedUntil = typeof latest?.applied_until === 'string' ? Number(latest.applied_until) : -Infinity;
  return migrations.filter((migration) => migration.folderMillis > appliedUntil).length;
}

/**
 * Applies the pending migrations with `apply`, or with `migrate: false` only checks there are
 * none, under the migration lock (migration-lock.ts, docs/operations.md#migrations): the other
 * processes wait (however long the migrations take, saying so through `onWait`) and then find them
 * applied. `db` must run everything on one session: the migrator's `singleSessionClient` on
 * PostgreSQL; PGlite has only one. On PGlite the lock changes nothing (its data directory has one
 * process at a time), and taking it keeps one code path for both.
 */
async function migrateUnderLock(db: Pick<Db, 'execute'>, migrate: boolean, apply: () => Promise<void>, onWait: (wait: MigrationLockWait) => void): Promise<void> {
  await underMigrationLock(
    db,
    async () => {
      if (migrate) return apply();
      const pending = await pendingMigrations(db);
      if (pending > 0) throw new MigrationsPendingError(pending);
    },
    onWait,
  );
}

/** Without an `onMigrationLockWait`, a waiting process says so on stderr (`npm run migrate`, the admin CLI). */
const sayOnStderr = (wait: MigrationLockWait) => void process.stderr.write(`${migrationLockWaitMessage(wait)}\n`);

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const { url } = options;
  if (url && /^postgres(ql)?:\/\//.test(url)) return openPostgres(url, options);
  const migrate = options.migrate !== false;
  if (options.pglite) return openPglite(options.pglite, migrate, () => {}, options.onQuery);
  // PGlite is loaded only when it is used: its module alone is about 45 MB of a process's memory.
  // pg_trgm backs product search (drizzle/0014_pg_trgm.sql): PGlite loads an extension only when
  // it is passed where PGlite is created, so every PGlite is created here with it.
  const [{ PGlite }, { pg_trgm }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite/contrib/pg_trgm')]);
  const extensions = { pg_trgm };
  if (url === 'memory://') return openPglite(new PGlite({ extensions }), migrate, () => {}, options.onQuery);

  const dataDir = resolve(options.dataDir);
  // The data directory holds password hashes: only the service's user may enter it. mkdir
  // leaves an existing directory's mode alone, and an older install's may be world-readable.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  const release = lockDataDirectory(dataDir);
  try {
    const pgdata = resolve(dataDir, 'pgdata');
    const client = new PGlite(pgdata, { extensions });
    await client.waitReady;
    // PGlite unpacks its initial cluster 0666 and writes files opened with fopen() 0666
    // whatever the umask: tighten them once it is up, and again when it closes.
    makePrivate(pgdata);
    return await openPglite(
      client,
      migrate,
      () => {
        try {
          makePrivate(pgdata);
        } finally {
          release();
        }
      },
      options.onQuery,
    );
  } catch (error) {
    release();
    throw error;
  }
}

async function openPostgres(url: string, options: OpenDatabaseOptions): Promise<Database> {
  const timeouts = { ...defaultDatabaseTimeouts, ...options.timeouts };
  const poolSize = options.poolSize ?? 10;
  const connectTimeout = Math.max(1, Math.ceil(timeouts.connectTimeoutMs / 1000));
  // Migrations get a connection of their own: a long migration must not hit the request timeouts,
  // and the migration lock is held by that one session, which must run the migrations too: a
  // statement after its connection was lost is refused, never run on a new one (singleSessionClient).
  const migrator = singleSessionClient(url, {
    onnotice: () => {},
    connect_timeout: connectTimeout,
    connection: { application_name: 'order-service migrations' },
  });
  try {
    const migratorDb = drizzlePostgres(migrator);
    await migrateUnderLock(
      migratorDb as unknown as Db,
      options.migrate !== false,
      () => migratePostgres(migratorDb, { migrationsFolder }),
      options.onMigrationLockWait ?? sayOnStderr,
    );
  } finally {
    await migrator.end({ timeout: 5 });
  }
  const client = postgres(url, {
    ...lostConnectionOptions,
    max: poolSize,
    onnotice: () => {},
    connect_timeout: connectTimeout,
    idle_timeout: Math.max(1, Math.ceil(timeouts.idleTimeoutMs / 1000)),
    connection: {
      application_name: 'order-service',
      statement_timeout: timeouts.statementTimeoutMs,
      lock_timeout: timeouts.lockTimeoutMs,
      idle_in_transaction_session_timeout: timeouts.idleInTransactionTimeoutMs,
    },
  });
  // A transaction whose connection PostgreSQL closed must not send postgres.js anything more:
  // on 3.4.9 that ends the process (postgres-js-lost-connections.ts says why and how).
  const db = drizzlePostgres(guardLostConnections(client), { schema, ...queryLogger(options.onQuery) }) as unknown as Db;
  const slotsState = gateTransactions(db, poolSize, timeouts.acquireTimeoutMs);
  return {
    db,
    kind: 'postgres',
    ping: (timeoutMs) => pingDb(db, timeoutMs),
    poolState: () => {
      const { slots, active, waiting } = slotsState();
      return { size: poolSize, transactionSlots: slots, activeTransactions: active, waitingTransactions: waiting };
    },
    // postgres.js listens on a connection of its own, outside the pool, and listens again
    // (calling onListen) when that connection is remade.
    listen: async (channel, onNotify, onListen) => {
      const { unlisten } = await client.listen(channel, onNotify, onListen);
      return unlisten;
    },
    close: async () => {
      await client.end({ timeout: 5 });
    },
  };
}

async function openPglite(client: PGlite, migrate: boolean, release: () => void, onQuery?: OpenDatabaseOptions['onQuery']): Promise<Database> {
  const [{ drizzle: drizzlePglite }, { migrate: migratePglite }] = await Promise.all([import('drizzle-orm/pglite'), import('drizzle-orm/pglite/migrator')]);
  const db = drizzlePglite(client, { schema, ...queryLogger(onQuery) }) as unknown as Db;
  try {
    const migratorDb = drizzlePglite(client);
    // One process per database: the lock is always free here, so nobody waits for it.
    await migrateUnderLock(migratorDb as unknown as Db, migrate, () => migratePglite(migratorDb, { migrationsFolder }), sayOnStderr);
  } catch (error) {
    if (!client.closed) await client.close();
    throw error;
  }
  return {
    db,
    kind: 'pglite',
    ping: (timeoutMs) => pingDb(db, timeoutMs),
    // One connection: a NOTIFY of this process reaches its own LISTEN after the commit.
    listen: async (channel, onNotify, onListen) => {
      const unlisten = await client.listen(channel, onNotify);
      onListen();
      return async () => {
        if (!client.closed) await unlisten();
      };
    },
    close: async () => {
      if (!client.closed) await client.close();
      release();
    },
  };
}

async function pingDb(db: Db, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolvePing) => {
    timer = setTimeout(() => resolvePing(false), timeoutMs);
  });
  try {
    return await Promise.race([db.execute(sql`select 1`).then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
