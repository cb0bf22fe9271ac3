/**
 * Concurrent migrations (docs/api.md#migrations, issue 36 item 2): replicas started together on a
 * fresh database (`MIGRATE_ON_START=true`, the default) and `npm run migrate` run twice at once
 * must all succeed, the schema migrated once. Without a lock around the migrator one of them died
 * with `duplicate key value violates unique constraint "pg_type_typname_nsp_index"` (two
 * `CREATE TABLE IF NOT EXISTS` of drizzle's journal at once) or on objects the other had just made.
 *
 * Each process compiles the service under tsx first, seconds apart on a busy machine, which alone
 * would rarely make them meet. So they reach PostgreSQL through a barrier: a proxy that holds the
 * first connection of each (the migrator's) until all have one waiting, then lets them through
 * together. PostgreSQL only: PGlite is one process's database (its data directory has a lock).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { resolve } from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { migrationsFolder } from '../../server/db/client.ts';
import { onPostgres } from '../helpers/db.ts';
import { dropDatabase, withDatabase } from '../helpers/postgres-url.ts';
import { serviceEnv, startService, START_TIMEOUT_MS, stopService, type Service } from '../helpers/service-process.ts';

const root = resolve(import.meta.dirname, '../..');
const migrationCount = readdirSync(migrationsFolder).filter((name) => name.endsWith('.sql')).length;
const SERVICES = 3;
const MIGRATE_RUNS = 2;

/**
 * A TCP proxy to `target` that holds the first `parties` connections (nothing reaches the server,
 * their startup messages wait in the socket) until that many have arrived, then connects them all
 * at once; later connections pass straight through.
 */
async function barrierProxy(target: { host: string; port: number }, parties: number): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const held: Socket[] = [];
  let open = false;
  const forward = (client: Socket) => {
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const server: Server = createServer((client) => {
    if (open) return forward(client);
    sockets.add(client);
    client.on('error', () => undefined);
    held.push(client);
    if (held.length < parties) return;
    open = true;
    for (const waiting of held.splice(0)) forward(waiting);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    close: async () => {
      const closed = new Promise<void>((done) => server.close(() => done()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** `npm run migrate` as the script runs it (tsx), resolving with its exit code and output. */
function runMigrate(env: NodeJS.ProcessEnv): { child: ChildProcess; done: Promise<{ code: number | null; output: string }> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/migrate.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const done = once(child, 'exit').then(([code]) => ({ code: code as number | null, output }));
  return { child, done };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.skipIf(!onPostgres)('migrations started together on an empty database (docs/api.md#migrations)', () => {
  it(
    `${SERVICES} instances and ${MIGRATE_RUNS} npm run migrate at once all succeed, and the schema is migrated once`,
    { timeout: 3 * START_TIMEOUT_MS },
    async () => {
      const server = process.env.TEST_DATABASE_URL;
      if (!server) throw new Error('TEST_DATABASE_URL is not set');
      const name = `order_service_race_${process.pid}_${Date.now()}`;
      const admin = postgres(server, { max: 1, onnotice: () => {} });
      await admin.unsafe(`create database ${name}`);
      await admin.end();
      cleanups.push(() => dropDatabase(server, name));

      const serverAddress = new URL(server);
      const proxy = await barrierProxy({ host: serverAddress.hostname, port: Number(serverAddress.port || 5432) }, SERVICES + MIGRATE_RUNS);
      cleanups.push(proxy.close);
      const throughProxy = new URL(withDatabase(server, name));
      throughProxy.host = `127.0.0.1:${proxy.port}`;
      // The barrier holds each first connection until every process has compiled and connected:
      // its wait must not count as a connection that failed to start.
      const env = serviceEnv({ url: throughProxy.toString() }, { DATABASE_CONNECT_TIMEOUT_MS: '600000' });

      const migrations = Array.from({ length: MIGRATE_RUNS }, () => runMigrate(env));
      for (const { child } of migrations) cleanups.push(() => void child.kill('SIGKILL'));
      const starts = Array.from({ length: SERVICES }, () => startService(env));
      const services: Service[] = [];
      for (const start of starts) void start.then((service) => cleanups.push(() => stopService(service)), () => undefined);

      const started = await Promise.allSettled(starts);
      for (const result of started) {
        if (result.status === 'rejected') throw result.reason;
        services.push(result.value);
      }
      for (const { done } of migrations) {
        const { code, output } = await done;
        expect(code, output).toBe(0);
        expect(output).toContain('Migrations applied');
      }

      for (const service of services) expect((await fetch(`${service.base}/api/v1/products`)).status, service.output()).toBe(200);
      const check = postgres(withDatabase(server, name), { max: 1, onnotice: () => {} });
      try {
        const [journal] = await check<{ n: number }[]>`select count(*)::int as n from drizzle.__drizzle_migrations`;
        expect(journal?.n).toBe(migrationCount);
      } finally {
        await check.end();
      }
    },
  );
});
