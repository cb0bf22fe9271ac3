/**
 * Crash safety (issue 9, docs/api.md#resources and #idempotency): the service process is killed with SIGKILL
 * while payments with Idempotency-Keys are in flight, then started again on the same database.
 * A payment, its order's move to `paid` and its key's stored result are one transaction, so
 * whatever the kill interrupted is either all there or not there at all:
 *   - no payment without its order `paid`, no `paid` order without exactly one payment;
 *   - every key either replays its stored payment (200, Idempotent-Replayed) or is free (the
 *     retry is the operation, 201, once);
 *   - retrying every key after the restart leaves exactly one payment per order.
 *
 * PostgreSQL (a fresh database of the run's template) on the postgres project; PGlite on a data
 * directory (a dead process's `pgdata.lock` is taken over) on the pglite project.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { openDatabase, type Database, type Db } from '../../server/db/client.ts';
import { idempotencyKeys } from '../../server/db/schema.ts';
import { orders } from '../../server/modules/orders/orders.table.ts';
import { payments } from '../../server/modules/payments/payments.table.ts';
import { createUserRow, TEST_JWT, type TestUser } from '../helpers/app.ts';
import { onPostgres } from '../helpers/db.ts';
import type { OrderBody } from '../helpers/orders.ts';
import type { PaymentBody } from '../helpers/payments.ts';
import { productInput } from '../helpers/products.ts';
import { until } from '../helpers/waits.ts';
import {
  callService,
  createPostgresDatabase,
  killService,
  serviceEnv,
  START_TIMEOUT_MS,
  startService,
  stopService,
  type HttpAnswer,
  type Service,
} from '../helpers/service-process.ts';

const ORDERS = 40;
/** Every RETRY_EVERY-th key is sent twice at once: a client retrying while the first is in flight. */
const RETRY_EVERY = 3;

/** Where the service keeps its data, and how the test looks into it between the service's lives. */
interface Store {
  env: NodeJS.ProcessEnv;
  /**
   * Runs `fn` on the database in this process. PGlite allows one process per data directory, so
   * there it is opened only while no service runs; PostgreSQL stays open all along.
   */
  inspect<T>(fn: (db: Db) => Promise<T>): Promise<T>;
  /**
   * Resolves once nothing of the killed process runs in the database any more. PostgreSQL ends
   * a dead client's sessions only when it notices the closed socket, and a COMMIT already sent
   * still commits: the state is read after that, or a later commit would surprise the test.
   */
  settle(): Promise<void>;
  dispose(): Promise<void>;
}

async function postgresStore(): Promise<Store> {
  const { url, drop } = await createPostgresDatabase();
  const database = await openDatabase({ url, dataDir: '' });
  return {
    env: serviceEnv({ url }),
    inspect: (fn) => fn(database.db),
    settle: async () => {
      await until(
        "the killed service's sessions to end",
        async () => {
          const [busy] = await database.db
            .select({ n: sql<number>`count(*)::int` })
            .from(sql`pg_stat_activity`)
            .where(sql`datname = current_database() and pid <> pg_backend_pid() and state <> 'idle'`);
          return busy?.n === 0;
        },
        { timeoutMs: 10_000, intervalMs: 50 },
      );
    },
    dispose: async () => {
      await database.close();
      await drop();
    },
  };
}

function pgliteStore(): Store {
  const dataDir = mkdtempSync(join(tmpdir(), 'order-service-crash-'));
  return {
    env: serviceEnv({ dataDir }),
    inspect: async (fn) => {
      const database: Database = await openDatabase({ url: undefined, dataDir });
      try {
        return await fn(database.db);
      } finally {
        await database.close();
      }
    },
    // The service's process was the database: once it is dead, nothing more happens to the files.
    settle: () => Promise.resolve(),
    dispose: () => {
      rmSync(dataDir, { recursive: true, force: true });
      return Promise.resolve();
    },
  };
}

/** One attempt of the burst: the answer, or undefined when the kill cut it off. */
interface Attempt {
  index: number;
  answer: HttpAnswer | undefined;
}

/** The state the invariants speak about, read straight from the tables. */
interface Snapshot {
  /** Per order (in `orderIds` order): its status and how many payments it has. */
  orders: { id: number; status: string; payments: number }[];
  /** Payments, anywhere, whose order is not `paid`. */
  orphanPayments: number;
  /** The customer's key rows: key -> stored response (status 0 = claimed, never completed). */
  keys: Map<string, { status: number; payment: PaymentBody | undefined }>;
  /** Payment id -> order id. */
  paymentOrder: Map<number, number>;
}

async function snapshot(db: Db, orderIds: number[], customerId: number): Promise<Snapshot> {
  // One statement, one snapshot: the orders with their payment counts as of the same instant.
  const rows = await db
    .select({ id: orders.id, status: orders.status, payments: sql<number>`count(${payments.id})::int` })
    .from(orders)
    .leftJoin(payments, eq(payments.orderId, orders.id))
    .where(eq(orders.customerId, customerId))
    .groupBy(orders.id);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const [orphans] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(payments)
    .innerJoin(orders, eq(orders.id, payments.orderId))
    .where(sql`${orders.status} <> 'paid'`);
  const keyRows = await db
    .select({ key: idempotencyKeys.key, status: idempotencyKeys.responseStatus, body: idempotencyKeys.responseBody })
    .from(idempotencyKeys)
    .where(eq(idempotencyKeys.scope, `user:${customerId}`));
  const paymentRows = await db.select({ id: payments.id, orderId: payments.orderId }).from(payments);
  return {
    orders: orderIds.map((id) => {
      const row = byId.get(id);
      if (!row) throw new Error(`order ${id} is gone`);
      return row;
    }),
    orphanPayments: orphans?.n ?? 0,
    keys: new Map(keyRows.map((k) => [k.key, { status: k.status, payment: k.body ? (JSON.parse(k.body) as PaymentBody) : undefined }])),
    paymentOrder: new Map(paymentRows.map((p) => [p.id, p.orderId])),
  };
}

/**
 * The invariants that hold after any crash: each order is paid with exactly one payment or
 * confirmed with none; each key is free exactly when its order is unpaid, and a stored key holds
 * a completed 201 whose payment is its order's.
 */
function expectConsistent(state: Snapshot, keys: string[]): void {
  expect(state.orphanPayments, 'payments whose order is not paid').toBe(0);
  state.orders.forEach((order, i) => {
    const key = keys[i] ?? '';
    const stored = state.keys.get(key);
    if (order.status === 'paid') {
      expect(order.payments, `paid order ${order.id}: payments`).toBe(1);
      expect(stored?.status, `paid order ${order.id}: its key's stored status`).toBe(201);
      const payment = stored?.payment;
      expect(payment?.order_id, `paid order ${order.id}: its key's payment`).toBe(order.id);
      expect(payment && state.paymentOrder.get(payment.id), `paid order ${order.id}: the stored payment exists`).toBe(order.id);
    } else {
      expect(order.status, `order ${order.id}`).toBe('confirmed');
      expect(order.payments, `unpaid order ${order.id}: payments`).toBe(0);
      expect(stored, `unpaid order ${order.id}: its key is free`).toBeUndefined();
    }
  });
  // No key row without its order's payment (a claimed, never completed key would be one).
  expect(state.keys.size).toBe(state.orders.filter((o) => o.status === 'paid').length);
}

function crashSuite(kind: 'postgres' | 'pglite', makeStore: () => Promise<Store>): void {
  const tokens = new TokenService(TEST_JWT);
  let store: Store | undefined;
  let service: Service | undefined;
  let admin: TestUser;
  let customer: TestUser;

  beforeAll(async () => {
    store = await makeStore();
    ({ admin, customer } = await store.inspect(async (db) => ({
      admin: await createUserRow(db, tokens, 'admin'),
      customer: await createUserRow(db, tokens, 'customer'),
    })));
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    if (service) await stopService(service);
    await store?.dispose();
  });

  it(`SIGKILL with ${ORDERS} keyed payments in flight, then a restart: every order paid at most once, every key replays or is free, one retry of each pays each order once`, async () => {
    if (!store) throw new Error('no store');
    const s = store;
    service = await startService(s.env);
    const first = service;
    const call = (method: string, path: string, body?: unknown, key?: string, token = customer.token) => callService(first.base, method, path, token, body, key);

    // The scene: N confirmed orders of one customer, each one unit of its own price.
    const product = await call('POST', '/products', productInput({ price: 1250, stock: 1000 }), undefined, admin.token);
    expect(product.status, JSON.stringify(product.body)).toBe(201);
    const seeded: OrderBody[] = [];
    for (let i = 0; i < ORDERS; i++) {
      const order = await call('POST', '/orders', { items: [{ product_id: product.body.id, quantity: 1 + (i % 5) }], address: '1 Main St, Springfield' });
      expect(order.status, JSON.stringify(order.body)).toBe(201);
      const confirmed = await call('POST', `/orders/${String(order.body.id)}/confirm`);
      expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
      seeded.push(confirmed.body as unknown as OrderBody);
    }
    const run = randomBytes(4).toString('hex');
    const keys = seeded.map((_, i) => `crash-${run}-${i}`);
    const bodies = seeded.map((o) => ({ order_id: o.id, amount: o.total, method: 'card' }));

    // The burst: every order's payment at once, some twice with one key; the kill comes when a
    // random few (1-15) answers are back, so most requests are queued, mid-transaction or
    // committed-but-unanswered when the process dies.
    const killAfter = randomInt(1, 16);
    let answered = 0;
    let killing: Promise<void> | undefined;
    const send = (index: number): Promise<Attempt> =>
      call('POST', '/payments', bodies[index], keys[index]).then(
        (answer) => {
          answered += 1;
          if (answered >= killAfter) killing ??= killService(first);
          return { index, answer };
        },
        () => ({ index, answer: undefined }),
      );
    const burst = seeded.flatMap((_, i) => (i % RETRY_EVERY === 0 ? [send(i), send(i)] : [send(i)]));
    const attempts = await Promise.all(burst);
    // All answered before the kill got going: nothing was in flight, so the run proves nothing.
    killing ??= killService(first);
    await killing;
    const cut = attempts.filter((a) => a.answer === undefined).length;
    expect(cut, 'requests the kill cut off').toBeGreaterThan(0);
    await s.settle();

    // Straight after the crash, before any restart: consistent as it stands.
    const orderIds = seeded.map((o) => o.id);
    const afterCrash = await s.inspect((db) => snapshot(db, orderIds, customer.id));
    expectConsistent(afterCrash, keys);
    // Every answer the client did get before the kill is durable: its key holds that payment.
    for (const { index, answer } of attempts) {
      if (!answer) continue;
      expect([200, 201], JSON.stringify(answer.body)).toContain(answer.status);
      expect(afterCrash.keys.get(keys[index] ?? '')?.payment).toEqual(answer.body);
    }

    // The restart, on the same database (PGlite: the dead process's lock file is taken over).
    service = await startService(s.env);
    const second = service;
    const again = (index: number) => callService(second.base, 'POST', '/payments', customer.token, bodies[index], keys[index]);

    // Every key retried twice at once: a stored key replays its payment both times; a free key
    // runs the payment now, once (201), and the other retry replays that.
    const retries = await Promise.all(seeded.map(async (_, i) => ({ i, answers: await Promise.all([again(i), again(i)]) })));
    for (const { i, answers } of retries) {
      const stored = afterCrash.keys.get(keys[i] ?? '');
      const statuses = answers.map((a) => a.status).sort();
      if (stored) {
        expect(statuses, `stored key ${i}`).toEqual([200, 200]);
        for (const a of answers) {
          expect(a.headers.get('idempotent-replayed')).toBe('true');
          expect(a.body).toEqual(stored.payment);
        }
      } else {
        expect(statuses, `free key ${i}: ${JSON.stringify(answers.map((a) => a.body))}`).toEqual([200, 201]);
        const [replay, created] = [...answers].sort((a, b) => a.status - b.status);
        expect(replay?.headers.get('idempotent-replayed')).toBe('true');
        expect(replay?.body).toEqual(created?.body);
      }
      const order = await callService(second.base, 'GET', `/orders/${String(seeded[i]?.id)}`, customer.token);
      expect(order.body.status).toBe('paid');
    }

    // And in the tables: every order paid exactly once, by the payment its key holds.
    await stopService(second);
    const final = await s.inspect((db) => snapshot(db, orderIds, customer.id));
    expectConsistent(final, keys);
    expect(final.orders.every((o) => o.status === 'paid')).toBe(true);
    expect(final.paymentOrder.size).toBe(ORDERS);
    // The run's shape (where the kill landed), for reading a failure or a slow run.
    const unanswered = afterCrash.keys.size - new Set(attempts.filter((a) => a.answer).map((a) => a.index)).size;
    console.log(
      `${kind}: killed after ${killAfter} answers; ${cut} of ${attempts.length} requests cut off; ${afterCrash.keys.size} of ${ORDERS} orders paid before the restart, ${unanswered} of them unanswered`,
    );
  }, 4 * START_TIMEOUT_MS);
}

describe.skipIf(!onPostgres)('payments survive a SIGKILL of the service (PostgreSQL)', () => {
  crashSuite('postgres', postgresStore);
});

describe.skipIf(onPostgres)('payments survive a SIGKILL of the service (PGlite data directory)', () => {
  crashSuite('pglite', () => Promise.resolve(pgliteStore()));
});
