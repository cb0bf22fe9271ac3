/**
 * server/db/postgres-js-lost-connections.ts against the postgres.js we run: each test is one way
 * postgres.js 3.4.9 ended the process (or ran a statement outside its transaction) when
 * PostgreSQL closed a connection, made to happen on purpose through our own `openDatabase`. If
 * an upgrade of postgres.js or drizzle changes what the guard relies on, one of these fails.
 * PostgreSQL only: PGlite has no connections to lose.
 */
import { once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../server/db/client.ts';
import { databaseProblem } from '../../server/errors/db-errors.ts';
import { copyTemplateDatabase, onPostgres } from '../helpers/db.ts';

/** Errors thrown outside any promise, and rejections nobody handled: each would end the service. */
const escaped: unknown[] = [];
const record = (error: unknown) => escaped.push(error);

/** Lets every pending immediate (postgres.js flushes writes from one) and microtask run. */
const turns = async (count = 3) => {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
};

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const backendPid = async (db: Db): Promise<number> => {
  const rows = (await db.execute(sql`select pg_backend_pid() as pid`)) as unknown as { pid: number }[];
  const pid = rows[0]?.pid;
  if (pid === undefined) throw new Error('no backend pid');
  return pid;
};

/**
 * The pool answers again on a new backend. Its first statement there may still fail with 503:
 * postgres.js 3.4.9 keeps a terminated connection's FATAL error and hands it to the first
 * statement after the reconnect (its issue #1223); a 503 the client retries, once per connection.
 */
async function answersAgain(db: Db, oldPid: number | undefined): Promise<void> {
  const first = await failureOf(backendPid(db));
  if (first !== undefined) expectUnavailable(first);
  expect(await backendPid(db)).not.toBe(oldPid);
}

/** How a promise ended: its error, or undefined when it resolved. */
const failureOf = (promise: Promise<unknown>): Promise<unknown> => promise.then(
  () => undefined,
  (error: unknown) => error,
);

function expectUnavailable(error: unknown): void {
  expect(error, 'the transaction should have failed').toBeDefined();
  expect(databaseProblem(error)?.slug, String(error)).toBe('service-unavailable');
}

describe.skipIf(!onPostgres)('postgres.js: a transaction whose connection PostgreSQL closes (server/db/postgres-js-lost-connections.ts)', () => {
  let url: string;
  let drop: () => Promise<void>;
  let admin: postgres.Sql;

  beforeAll(async () => {
    ({ url, drop } = await copyTemplateDatabase());
    admin = postgres(url, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await admin?.end();
    await drop?.();
  });
  beforeEach(() => {
    escaped.length = 0;
    process.on('uncaughtException', record);
    process.on('unhandledRejection', record);
  });
  afterEach(() => {
    process.off('uncaughtException', record);
    process.off('unhandledRejection', record);
  });

  const terminate = (pid: number) => admin`select pg_terminate_backend(${pid})`;

  it('terminated while a statement runs: the transaction fails with 503, and no ROLLBACK is written to the closed socket (TypeError in nextWrite)', async () => {
    // One connection: the one the transaction lost is the one the pool reconnects.
    const database = await openDatabase({ url, dataDir: '', poolSize: 1 });
    try {
      let pid: number | undefined;
      const transaction = database.db.transaction(async (tx) => {
        pid = await backendPid(tx);
        await tx.execute(sql`select pg_sleep(60)`);
      });
      await terminate(await until('the transaction to start', () => pid));
      expectUnavailable(await failureOf(transaction));
      await turns();
      expect(escaped).toEqual([]);
      await answersAgain(database.db, pid);
    } finally {
      await database.close();
    }
  });

  it('terminated inside a savepoint (a nested transaction): the same, and no ROLLBACK TO SAVEPOINT is written either', async () => {
    const database = await openDatabase({ url, dataDir: '', poolSize: 1 });
    try {
      let pid: number | undefined;
      const transaction = database.db.transaction(async (tx) => {
        pid = await backendPid(tx);
        await tx.transaction(async (inner) => {
          await inner.execute(sql`select pg_sleep(60)`);
        });
      });
      await terminate(await until('the savepoint to start', () => pid));
      expectUnavailable(await failureOf(transaction));
      await turns();
      expect(escaped).toEqual([]);
      await answersAgain(database.db, pid);
    } finally {
      await database.close();
    }
  });

  it('terminated between statements: the callback\'s next statement is refused (503), not run on the connection the pool has reconnected meanwhile, and nothing is committed', async () => {
    // One connection: the pool must reconnect the very connection object the transaction held.
    const database = await openDatabase({ url, dataDir: '', poolSize: 1 });
    try {
      let pid: number | undefined;
      let resume: () => void = () => {};
      const paused = new Promise<void>((resolve) => (resume = resolve));
      let late: { error: unknown } | undefined;
      const transaction = database.db.transaction(async (tx) => {
        pid = await backendPid(tx);
        await paused;
        late = { error: await failureOf(tx.execute(sql`select pg_backend_pid() as pid`)) };
      });
      await terminate(await until('the transaction to start', () => pid));
      expectUnavailable(await failureOf(transaction));
      // The pool's one connection serves other work again, on a new backend.
      const reconnected = await backendPid(database.db);
      expect(reconnected).not.toBe(pid);

      resume();
      const { error: lateFailure } = await until('the late statement to settle', () => late);
      await turns();
      expect(escaped).toEqual([]);
      // Unguarded, postgres.js ran it on `reconnected`'s backend, outside any transaction.
      expectUnavailable(lateFailure);
      // And the connection is in no transaction: a statement sees its own, fresh one.
      const rows = (await database.db.execute(sql`select txid_current_if_assigned() as txid`)) as unknown as { txid: string | null }[];
      expect(rows[0]?.txid).toBeNull();
    } finally {
      await database.close();
    }
  });

  describe('a connection closed by PostgreSQL right after it is established (fetch_types)', () => {
    let proxy: KillingProxy;
    beforeAll(async () => {
      proxy = await KillingProxy.start(new URL(url));
    });
    afterAll(async () => {
      await proxy?.close();
    });

    it('fails its first statement with 503 and leaves no unhandled rejection behind', async () => {
      const database = await openDatabase({ url: proxy.url(url), dataDir: '', poolSize: 1 });
      try {
        proxy.killNextConnectionsFirstStatement();
        const error = await failureOf(database.db.execute(sql`select 1`));
        await turns();
        expect(escaped).toEqual([]);
        expectUnavailable(error);
        expect(proxy.killed).toBe(1);
        // Reconnected through the proxy, which lets the new connection be.
        await answersAgain(database.db, undefined);
        await turns();
        expect(escaped).toEqual([]);
      } finally {
        await database.close();
      }
    });
  });
});

/** PostgreSQL's ReadyForQuery message ('Z', length 5): the server's side of a finished startup. */
const READY_FOR_QUERY = Buffer.from([0x5a, 0, 0, 0, 5]);

/** The ErrorResponse PostgreSQL sends a terminated backend's client before closing (57P01, FATAL). */
function adminShutdown(): Buffer {
  const fields = Buffer.from('SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0');
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeUInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

/**
 * A TCP proxy in front of PostgreSQL that, when armed, ends the next connection as a terminated
 * backend would (57P01, then close) the moment its client sends the first message after startup:
 * the one place where pg_terminate_backend cannot be aimed from outside.
 */
class KillingProxy {
  killed = 0;
  private armed = false;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly target: URL,
  ) {}

  static async start(target: URL): Promise<KillingProxy> {
    const server = createServer();
    const proxy = new KillingProxy(server, target);
    server.on('connection', (client) => proxy.relay(client));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return proxy;
  }

  url(databaseUrl: string): string {
    const address = this.server.address();
    if (!address || typeof address === 'string') throw new Error('proxy not listening');
    const through = new URL(databaseUrl);
    through.hostname = '127.0.0.1';
    through.port = String(address.port);
    return through.toString();
  }

  killNextConnectionsFirstStatement(): void {
    this.armed = true;
  }

  private relay(client: Socket): void {
    const server = connect(Number(this.target.port || 5432), this.target.hostname);
    this.sockets.add(client).add(server);
    const doomed = this.armed;
    this.armed = false;
    let started = false;
    server.on('data', (chunk: Buffer) => {
      if (chunk.includes(READY_FOR_QUERY)) started = true;
      client.write(chunk);
    });
    client.on('data', (chunk: Buffer) => {
      if (doomed && started) {
        this.killed += 1;
        server.destroy();
        client.end(adminShutdown());
        return;
      }
      server.write(chunk);
    });
    const closeBoth = () => {
      client.destroy();
      server.destroy();
      this.sockets.delete(client);
      this.sockets.delete(server);
    };
    client.on('close', closeBoth).on('error', closeBoth);
    server.on('close', closeBoth).on('error', closeBoth);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.server.close();
    await once(this.server, 'close');
  }
}
