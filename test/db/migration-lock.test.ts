/**
 * The migration lock (docs/operations.md#migrations, issue 36 item 2): a process that finds it held
 * waits and says who holds it, then migrates once it is free; and the migrations run on the very
 * session that holds it, never on a connection opened after that one was lost (the lock went with
 * it). Before: one blocking `pg_advisory_lock` that said nothing for however long it waited, and a
 * migrator that reconnected silently (postgres.js's `max_lifetime` alone closed its connection 30
 * to 60 minutes after connecting) and migrated without the lock. PostgreSQL only: PGlite is one
 * process's database (its data directory has a lock).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { migrationsFolder } from '../../server/db/client.ts';
import { MIGRATION_LOCK_KEY, underMigrationLock } from '../../server/db/migration-lock.ts';
import { singleSessionClient } from '../../server/db/postgres-js-lost-connections.ts';
import { onPostgres } from '../helpers/db.ts';
import { dropDatabase, withDatabase } from '../helpers/postgres-url.ts';
import { serviceEnv, START_TIMEOUT_MS } from '../helpers/service-process.ts';

const root = resolve(import.meta.dirname, '../..');
const migrationCount = readdirSync(migrationsFolder).filter((name) => name.endsWith('.sql')).length;

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A new, empty database (no migration applied), dropped after the file; its URL. */
async function emptyDatabase(label: string): Promise<string> {
  const server = process.env.TEST_DATABASE_URL;
  if (!server) throw new Error('TEST_DATABASE_URL is not set');
  const name = `order_service_${label}_${process.pid}_${Date.now()}`;
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  cleanups.push(() => dropDatabase(server, name));
  return withDatabase(server, name);
}

/** A plain postgres.js connection to `url`, ended after the file. */
function connectTo(url: string): postgres.Sql {
  const client = postgres(url, { max: 1, onnotice: () => {} });
  cleanups.push(() => client.end({ timeout: 5 }));
  return client;
}

async function journalSize(client: postgres.Sql): Promise<number | null> {
  const [table] = await client<{ present: boolean }[]>`select to_regclass('drizzle.__drizzle_migrations') is not null as present`;
  if (!table?.present) return null;
  const [journal] = await client<{ n: number }[]>`select count(*)::int as n from drizzle.__drizzle_migrations`;
  return journal?.n ?? 0;
}

/** The code of a failed statement's error; drizzle wraps the driver's error as its `cause`. */
function codeOf(error: unknown): unknown {
  const { code, cause } = error as { code?: unknown; cause?: { code?: unknown } };
  return code ?? cause?.code;
}

interface Watched {
  child: ChildProcess;
  /** Resolves once the process's stdout and stderr hold a match for `pattern`; rejects if it exits first. */
  waitFor: (pattern: RegExp) => Promise<RegExpExecArray>;
  exited: Promise<{ code: number | null; output: string }>;
  output: () => string;
}

/** `node --import tsx <script>` in the project, its output watched. */
function run(script: string, env: NodeJS.ProcessEnv): Watched {
  const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  cleanups.push(() => void child.kill('SIGKILL'));
  let output = '';
  const listeners = new Set<() => void>();
  const read = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', read);
  child.stderr?.on('data', read);
  const exited = once(child, 'exit').then(([code]) => ({ code: code as number | null, output }));
  const waitFor = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolveMatch, reject) => {
      const timer = setTimeout(() => finish(() => reject(new Error(`${script} never wrote ${pattern}:\n${output}`))), START_TIMEOUT_MS);
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        listeners.delete(check);
        settle();
      };
      const check = () => {
        const found = pattern.exec(output);
        if (found) finish(() => resolveMatch(found));
      };
      listeners.add(check);
      void exited.then(() => finish(() => reject(new Error(`${script} exited before it wrote ${pattern}:\n${output}`))));
      check();
    });
  return { child, waitFor, exited, output: () => output };
}

describe.skipIf(!onPostgres)('the migration lock (docs/operations.md#migrations)', () => {
  it(
    'a start and npm run migrate finding the lock held say they wait for its holder, apply nothing meanwhile, and migrate once it is released',
    { timeout: 3 * START_TIMEOUT_MS },
    async () => {
      const url = await emptyDatabase('lock_wait');
      const holder = connectTo(url);
      const [held] = await holder<{ pid: number }[]>`select pg_backend_pid() as pid, pg_advisory_lock(${MIGRATION_LOCK_KEY}::bigint)`;
      if (!held) throw new Error('no backend pid');
      const waiting = new RegExp(`waiting for the migration lock held by pid ${held.pid}\\b`);

      const env = serviceEnv({ url });
      const migration = run('server/migrate.ts', env);
      const service = run('server/main.ts', env);
      await Promise.all([migration.waitFor(waiting), service.waitFor(waiting)]);
      // The service says it in its JSON log, as a warning.
      expect(service.output()).toMatch(new RegExp(`"level":40,.*"holderPid":${held.pid}`));
      expect(await journalSize(holder)).toBeNull();

      await holder`select pg_advisory_unlock(${MIGRATION_LOCK_KEY}::bigint)`;
      const migrated = await migration.exited;
      expect(migrated.code, migrated.output).toBe(0);
      expect(migrated.output).toContain('Migrations applied');
      const [, base] = await service.waitFor(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/);
      expect((await fetch(`${base}/api/v1/products`)).status, service.output()).toBe(200);
      expect(await journalSize(holder)).toBe(migrationCount);

      service.child.kill('SIGTERM');
      expect((await service.exited).code).toBe(0);
    },
  );

  it('a migration whose connection was lost after it took the lock fails, and runs nothing on a new connection without the lock', async () => {
    const url = await emptyDatabase('lock_lost');
    const admin = connectTo(url);
    let closed: () => void = () => {};
    const connectionClosed = new Promise<void>((resolveClosed) => (closed = resolveClosed));
    const migrator = singleSessionClient(url, { onnotice: () => {}, onclose: () => closed() });
    cleanups.push(() => migrator.end({ timeout: 5 }));
    const db = drizzle(migrator);

    const migration = underMigrationLock(
      db,
      async () => {
        const [session] = await db.execute<{ pid: number }>(sql`select pg_backend_pid() as pid`);
        if (!session) throw new Error('no backend pid');
        await admin`select pg_terminate_backend(${session.pid})`;
        // The client has seen its connection close. The defect: the migrator then opened a new
        // one for the migrations, a session without the lock.
        await connectionClosed;
        await migrate(db, { migrationsFolder });
      },
      () => {},
    );

    expect(await migration.then(() => 'migrated', codeOf)).toBe('CONNECTION_CLOSED');
    expect(await journalSize(admin)).toBeNull();
    const [lock] = await admin<{ n: number }[]>`select count(*)::int as n from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())`;
    expect(lock?.n).toBe(0);
  });
});
