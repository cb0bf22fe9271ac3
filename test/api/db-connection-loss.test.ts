/**
 * Issue 21, item 1: PostgreSQL closing the service's connections ends requests (503), never the
 * process. Two triggers on real PostgreSQL, each on a service process of its own:
 *   - the process is stalled (SIGSTOP) while keyed payments hold transactions open, long enough
 *     for PostgreSQL to end them (`idle_in_transaction_session_timeout`, lowered here so the
 *     stall is short), then resumed (SIGCONT);
 *   - its backends are terminated (`pg_terminate_backend`) every 250 ms while keyed payments run
 *     and big request bodies keep its event loop busy.
 * postgres.js 3.4.9 then wrote a transaction's ROLLBACK or COMMIT to the closed connection and
 * the process died (`TypeError: Cannot read properties of null (reading 'write')` in
 * `nextWrite`). Each trigger must leave the process up, answering 503 for what the fault cut
 * off and 200/201 again afterwards, with every order paid exactly once when its key is retried.
 * PostgreSQL only: PGlite has no connections to lose.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { openDatabase, type Database } from '../../server/db/client.ts';
import { transactionSlots } from '../../server/db/unit-of-work.ts';
import { createUserRow, TEST_JWT, type TestUser } from '../helpers/app.ts';
import { onPostgres } from '../helpers/db.ts';
import type { OrderBody } from '../helpers/orders.ts';
import type { PaymentBody } from '../helpers/payments.ts';
import { productInput } from '../helpers/products.ts';
import { callService, createPostgresDatabase, serviceEnv, START_TIMEOUT_MS, startService, stopService, type HttpAnswer, type Service } from '../helpers/service-process.ts';
import { paced, settlesWithin, until as untilFound } from '../helpers/waits.ts';

/** The application name of the service's pool (server/db/client.ts). */
const APPLICATION_NAME = 'order-service';
/** The service's default pool size, and its transaction slots (server/db/unit-of-work.ts `transactionSlots`). */
const POOL_SIZE = 10;
const TRANSACTION_SLOTS = transactionSlots(POOL_SIZE);
const KILL_EVERY_MS = 250;
/** Bound on every wait for a condition; generous, for a loaded machine. */
const DEADLINE_MS = 30_000;

const until = <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => untilFound(what, probe, { timeoutMs: DEADLINE_MS });

const exited = (service: Service): boolean => service.child.exitCode !== null || service.child.signalCode !== null;

/**
 * A request that got no answer: the error, and how the process ended if it did (its exit is
 * reported a moment after its sockets close, so that is awaited a little).
 */
async function noAnswer(service: Service, error: unknown): Promise<Error> {
  const reason = error instanceof Error ? error.message : String(error);
  if (!exited(service)) await settlesWithin(once(service.child, 'exit'), 5_000);
  if (!exited(service)) return new Error(reason);
  return new Error(`${reason}: the service exited (${String(service.child.exitCode ?? service.child.signalCode)}):\n${service.output().slice(-4000)}`);
}

/** The process is still running; if not, the failure shows how it ended. */
function expectAlive(service: Service): void {
  expect(exited(service), `the service exited (${String(service.child.exitCode ?? service.child.signalCode)}):\n${service.output().slice(-4000)}`).toBe(false);
}

/** A 503 as the contract has it: the service-unavailable problem, with Retry-After. */
function expectUnavailable(answer: HttpAnswer): void {
  expect(answer.body.type).toBe('/problems/service-unavailable');
  expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
  // The client learns that it may retry, not why: no driver message or address.
  expect(JSON.stringify(answer.body)).not.toMatch(/CONNECTION|127\.0\.0\.1|socket/i);
}

describe.skipIf(!onPostgres)('a connection PostgreSQL closes ends a request with 503, never the process', () => {
  const tokens = new TokenService(TEST_JWT);
  let url: string;
  let drop: (() => Promise<void>) | undefined;
  let database: Database;
  /** The test's own connections: locks, pg_stat_activity, pg_terminate_backend. */
  let admin: postgres.Sql;
  let adminUser: TestUser;
  let customer: TestUser;
  /** One service per trigger, started together (each start compiles the service: seconds). */
  let stalling: Service | undefined;
  let terminating: Service | undefined;

  beforeAll(async () => {
    ({ url, drop } = await createPostgresDatabase());
    database = await openDatabase({ url, dataDir: '' });
    admin = postgres(url, { max: 2, onnotice: () => {} });
    adminUser = await createUserRow(database.db, tokens, 'admin');
    customer = await createUserRow(database.db, tokens, 'customer');
    [stalling, terminating] = await Promise.all([
      startService(
        serviceEnv(
          { url },
          {
            // PostgreSQL ends a stalled transaction after 300 ms (the default's 30 s, scaled down).
            DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '300',
            // The payments wait on the test's row locks for as long as the scene needs.
            DATABASE_LOCK_TIMEOUT_MS: '60000',
            DATABASE_STATEMENT_TIMEOUT_MS: '60000',
          },
        ),
      ),
      startService(serviceEnv({ url })),
    ]);
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.all(
      [stalling, terminating].map(async (service) => {
        if (!service) return;
        // Resumed whatever happened, so SIGTERM is heard.
        if (!exited(service)) service.child.kill('SIGCONT');
        await stopService(service);
      }),
    );
    await admin?.end();
    await database?.close();
    await drop?.();
  });

  const call = (s: Service, method: string, path: string, body?: unknown, key?: string, token = customer.token) => callService(s.base, method, path, token, body, key);

  /** `count` confirmed orders of the customer, each one unit of a product of its own price. */
  async function confirmedOrders(s: Service, count: number): Promise<OrderBody[]> {
    const product = await call(s, 'POST', '/products', productInput({ price: 700, stock: 10_000 }), undefined, adminUser.token);
    expect(product.status, JSON.stringify(product.body)).toBe(201);
    const seeded: OrderBody[] = [];
    for (let i = 0; i < count; i++) {
      const order = await call(s, 'POST', '/orders', { items: [{ product_id: product.body.id, quantity: 1 + (i % 4) }], address: '1 Main St' });
      expect(order.status, JSON.stringify(order.body)).toBe(201);
      const confirmed = await call(s, 'POST', `/orders/${String(order.body.id)}/confirm`);
      expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
      seeded.push(confirmed.body as unknown as OrderBody);
    }
    return seeded;
  }

  /** The service's backends (request pool) in this test's database. */
  const backends = (extra: postgres.PendingQuery<postgres.Row[]>) =>
    admin<{ pid: number }[]>`select pid from pg_stat_activity where datname = current_database() and application_name = ${APPLICATION_NAME} and ${extra}`;

  /**
   * After the fault: health answers 200, and every key retried pays its order exactly once.
   * `answered` holds the 201s the client got during the fault: each is still its key's payment.
   * A retry may still meet a 503 once per pooled connection: postgres.js 3.4.9 hands a terminated
   * connection's error to the first statement after its reconnect (its issue #1223).
   */
  async function expectRecovered(s: Service, orders: OrderBody[], keys: string[], answered: Map<number, PaymentBody>): Promise<void> {
    await until('/api/health to answer 200', async () => ((await fetch(`${s.base}/api/health`)).status === 200 ? true : undefined));
    expectAlive(s);
    let replayedErrors = 0;
    const retried = await Promise.all(
      orders.map(async (o, i) => {
        for (let attempt = 0; ; attempt++) {
          const answer = await call(s, 'POST', '/payments', { order_id: o.id, amount: o.total, method: 'card' }, keys[i]);
          if (answer.status !== 503 || attempt >= POOL_SIZE) return answer;
          expectUnavailable(answer);
          replayedErrors += 1;
        }
      }),
    );
    expect(replayedErrors, '503s after the fault (at most one per pooled connection)').toBeLessThanOrEqual(POOL_SIZE);
    retried.forEach((answer, i) => {
      const order = orders[i];
      if (!order) throw new Error('order missing');
      const earlier = answered.get(i);
      if (earlier) {
        // Paid during the fault: the retry replays that payment, nothing is charged twice.
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        expect(answer.body).toEqual(earlier);
      } else {
        expect([200, 201], JSON.stringify(answer.body)).toContain(answer.status);
      }
      expect(answer.body.order_id).toBe(order.id);
    });
    const ids = orders.map((o) => o.id);
    const rows = await admin<{ id: number; status: string; payments: number }[]>`
      select o.id, o.status, (select count(*)::int from payments p where p.order_id = o.id) as payments
      from orders o where o.id in ${admin(ids)}`;
    expect(rows).toHaveLength(orders.length);
    for (const row of rows) expect(row, `order ${row.id}`).toMatchObject({ status: 'paid', payments: 1 });
    expectAlive(s);
  }

  it(
    'stalled (SIGSTOP) until PostgreSQL ends its open payment transactions, then resumed: it stays up, answers those 503, and pays every order exactly once on retry',
    async () => {
      const s = stalling;
      if (!s) throw new Error('no service');
      const orders = await confirmedOrders(s, TRANSACTION_SLOTS + 4);
      const run = randomBytes(4).toString('hex');
      const keys = orders.map((_, i) => `stall-${run}-${i}`);

      // The scene: every order row locked by the test, so every payment transaction the service
      // opens waits on one; the ones beyond the transaction slots wait for a slot.
      const holder = await admin.reserve();
      let inFlight: Promise<HttpAnswer | Error>[] = [];
      let stalled: number[] = [];
      try {
        await holder`begin`;
        await holder`select id from orders where id in ${holder(orders.map((o) => o.id))} for update`;
        inFlight = orders.map((o, i) =>
          call(s, 'POST', '/payments', { order_id: o.id, amount: o.total, method: 'card' }, keys[i]).catch((error: unknown) => noAnswer(s, error)),
        );
        stalled = await until(`${TRANSACTION_SLOTS} payment transactions waiting on the row locks`, async () => {
          const waiting = await backends(admin`wait_event_type = 'Lock'`);
          return waiting.length >= TRANSACTION_SLOTS ? waiting.map((b) => b.pid) : undefined;
        });
        s.child.kill('SIGSTOP');
      } finally {
        // Released: the payments' statements complete, but the stopped process reads nothing and
        // sends nothing, so its transactions sit idle until PostgreSQL ends them.
        await holder`commit`;
        holder.release();
      }
      await until('PostgreSQL to end the stalled transactions', async () => {
        const left = await admin<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where pid in ${admin(stalled)}`;
        return left[0]?.n === 0 ? true : undefined;
      });
      s.child.kill('SIGCONT');

      const answers = await Promise.all(inFlight);
      expectAlive(s);
      const paidDuringFault = new Map<number, PaymentBody>();
      answers.forEach((answer, i) => {
        if (answer instanceof Error) throw new Error(`payment ${i}: ${answer.message}`);
        if (answer.status === 201) paidDuringFault.set(i, answer.body as unknown as PaymentBody);
        else {
          expect(answer.status, JSON.stringify(answer.body)).toBe(503);
          expectUnavailable(answer);
        }
      });
      // The transactions PostgreSQL ended can only have failed.
      expect(answers.filter((a) => !(a instanceof Error) && a.status === 503).length).toBeGreaterThanOrEqual(TRANSACTION_SLOTS);

      await expectRecovered(s, orders, keys, paidDuringFault);
    },
    60_000,
  );

  it(
    `backends terminated every ${KILL_EVERY_MS} ms while keyed payments run and big bodies keep the event loop busy: it stays up, answers 503 for what was cut off, and pays every order exactly once on retry`,
    async () => {
      const s = terminating;
      if (!s) throw new Error('no service');
      const product = await call(s, 'POST', '/products', productInput({ price: 900, stock: 1_000_000 }), undefined, adminUser.token);
      expect(product.status, JSON.stringify(product.body)).toBe(201);
      const run = randomBytes(4).toString('hex');

      let faulting = true;
      let unavailable = 0;
      const statuses = new Map<number, number>();
      /** `send` until it answers other than 503 (each 503 checked and counted), within the deadline. */
      const answered = async (send: () => Promise<HttpAnswer>): Promise<HttpAnswer> => {
        const deadline = Date.now() + DEADLINE_MS;
        for (;;) {
          const answer = await send();
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          if (answer.status !== 503 || Date.now() > deadline) return answer;
          expectUnavailable(answer);
          unavailable += 1;
        }
      };
      const orders: OrderBody[] = [];
      const keys: string[] = [];
      const paidDuringFault = new Map<number, PaymentBody>();
      // Each worker, while the fault lasts: an order (keyed), its confirmation, its keyed payment.
      const worker = async (w: number) => {
        for (let n = 0; faulting; n++) {
          const body = { items: [{ product_id: product.body.id, quantity: 1 + (n % 3) }], address: '1 Main St' };
          const created = await answered(() => call(s, 'POST', '/orders', body, `order-${run}-${w}-${n}`));
          expect([200, 201], JSON.stringify(created.body)).toContain(created.status);
          const id = String(created.body.id);
          // A 503 may still have committed (the connection closed after COMMIT): the order says.
          const confirmed = await answered(async () => {
            const answer = await call(s, 'POST', `/orders/${id}/confirm`);
            if (answer.status !== 409) return answer;
            const now = await answered(() => call(s, 'GET', `/orders/${id}`));
            return now.body.status === 'confirmed' ? now : answer;
          });
          expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
          const order = confirmed.body as unknown as OrderBody;
          const index = orders.push(order) - 1;
          const key = `pay-${run}-${w}-${n}`;
          keys.push(key);
          const paid = await answered(() => call(s, 'POST', '/payments', { order_id: order.id, amount: order.total, method: 'card' }, key));
          expect([200, 201], JSON.stringify(paid.body)).toContain(paid.status);
          if (paid.status === 201) paidDuringFault.set(index, paid.body as unknown as PaymentBody);
        }
      };
      // Bodies near the 1 MiB limit: parsing each holds the event loop for milliseconds.
      const bigBody = JSON.stringify({ items: Array.from({ length: 25_000 }, (_, i) => ({ product_id: i + 1, quantity: 1 })), address: 'x' });
      const bigSender = async () => {
        while (faulting) {
          const res = await fetch(`${s.base}/api/v1/orders`, {
            method: 'POST',
            headers: { authorization: `Bearer ${customer.token}`, 'content-type': 'application/json' },
            body: bigBody,
          });
          await res.arrayBuffer();
          expect(res.status).toBeLessThan(500);
        }
      };
      let rounds = 0;
      const killer = async () => {
        // At least 12 rounds, and on until a request has been cut off (a 503).
        while ((rounds < 12 || unavailable === 0) && rounds < 200 && faulting) {
          await admin`select pg_terminate_backend(pid) from pg_stat_activity
            where datname = current_database() and application_name like ${`${APPLICATION_NAME}%`}`;
          rounds += 1;
          await paced(KILL_EVERY_MS);
        }
        faulting = false;
      };
      const load = Promise.all([...Array.from({ length: 8 }, (_, w) => worker(w)), ...Array.from({ length: 3 }, bigSender)]);
      await Promise.all([
        killer(),
        load.catch(async (error: unknown) => {
          faulting = false;
          throw await noAnswer(s, error);
        }),
      ]);
      expectAlive(s);
      console.log(`terminate loop: ${rounds} rounds, ${orders.length} orders paid; answers ${JSON.stringify(Object.fromEntries(statuses))}`);
      expect(unavailable, 'requests cut off by a terminated backend').toBeGreaterThan(0);

      await expectRecovered(s, orders, keys, paidDuringFault);
    },
    // Bound by the waits' own deadlines, not by vitest: after the fault each worker may still
    // retry three calls for up to DEADLINE_MS each. 60 s ran out in CI (the whole suite beside
    // it, 2 cores) while the same test takes 5-8 s alone and beside stress-ng --cpu 2.
    4 * DEADLINE_MS + 60_000,
  );
});
