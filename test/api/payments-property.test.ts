/**
 * Payments under random traffic (issue 9, docs/api.md#resources, #errors and #idempotency), checked with fast-check:
 * a few customers and the admin send sequences of payments (some at once) with keys from a small
 * pool, so keys collide, and bodies that are right or wrong in every way a client gets one wrong:
 * the amount, the method, another customer's order, an order that does not exist, an order that
 * is not confirmed. Whatever the sequence:
 *   - no order ever has two payments, and a payment exists only for an answered 201;
 *   - one key is one operation: every 2xx a (caller, key) pair gets carries the same payment;
 *   - a 2xx answers only a right body; no answer is a 5xx; every 4xx is a problem+json.
 * Deterministic (a fixed seed) and on both projects; on PostgreSQL the batches really race.
 */
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { and, count, eq, inArray, like } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { idempotencyKeys } from '../../server/db/schema.ts';
import { payments } from '../../server/modules/payments/payments.table.ts';
import { type TestUser, useTestApp } from '../helpers/app.ts';
import { testDbKind } from '../helpers/db.ts';
import { orderInStatus, readOrder, type OrderBody, type OrderStatus } from '../helpers/orders.ts';
import { PAYMENTS, type PaymentBody } from '../helpers/payments.ts';
import { createProduct, type ProductBody } from '../helpers/products.ts';

const SEED = 20_240_609;
const NUM_RUNS = 30;
const CUSTOMERS = 3;
/** Per customer and run: two confirmed orders (payable) and one in another state. */
const CONFIRMED_PER_CUSTOMER = 2;
const OTHER_STATES: readonly OrderStatus[] = ['draft', 'cancelled', 'paid'];
const KEY_POOL = 4;
/** An id no order has (within Id's range, so it reaches the service's lookup, not validation). */
const UNKNOWN_ORDER = 2_000_000_000;

/** One request, as drawn: who sends it, with which key, and how its body is made. */
interface Draw {
  /** 0..CUSTOMERS-1: that customer; CUSTOMERS: the admin. */
  caller: number;
  /** Index into the key pool, or null for no Idempotency-Key. */
  key: number | null;
  /** The caller's own order (the admin: customer `slot`'s), the next customer's, or none at all. */
  target: 'own' | 'other' | 'unknown';
  /** Which of the customer's three orders: 0 and 1 are confirmed, 2 is in another state. */
  slot: number;
  amount: 'total' | 'off-by-one';
  /** `cash` is no payment method. */
  method: 'card' | 'bank_transfer' | 'wallet' | 'cash';
  /** Set: this request is a retry, the same as the `repeat % n`-th of the n drawn before it. */
  repeat: number | null;
}

const draw: fc.Arbitrary<Draw> = fc.record({
  caller: fc.integer({ min: 0, max: CUSTOMERS }),
  key: fc.option(fc.integer({ min: 0, max: KEY_POOL - 1 }), { nil: null, freq: 4 }),
  target: fc.constantFrom<Draw['target']>('own', 'own', 'own', 'other', 'unknown'),
  slot: fc.integer({ min: 0, max: CONFIRMED_PER_CUSTOMER }),
  amount: fc.constantFrom<Draw['amount']>('total', 'total', 'total', 'off-by-one'),
  method: fc.constantFrom<Draw['method']>('card', 'card', 'bank_transfer', 'wallet', 'cash'),
  repeat: fc.option(fc.nat(), { nil: null, freq: 2 }),
});
/** Batches run one after the other; the requests of one batch at once (Promise.all). */
const sequence = fc.array(fc.array(draw, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 8 });

let customers: TestUser[];
let product: ProductBody;
let run = 0;
/** Every answer (status and problem type) over all runs: the property says something only if each path was taken. */
const seen = new Map<string, number>();

const t = useTestApp();
beforeAll(async () => {
  customers = [];
  for (let i = 0; i < CUSTOMERS; i++) customers.push(await t.createUser('customer'));
  product = await createProduct(t, { price: 700, stock: 1_000_000 });
});

/** A run's fresh orders: `orders[c][slot]`, slots 0..1 confirmed, slot 2 in `OTHER_STATES[(run + c) % 3]`. */
async function freshOrders(runNo: number): Promise<OrderBody[][]> {
  const all: OrderBody[][] = [];
  for (const [c, owner] of customers.entries()) {
    const own: OrderBody[] = [];
    for (let slot = 0; slot <= CONFIRMED_PER_CUSTOMER; slot++) {
      const status = slot < CONFIRMED_PER_CUSTOMER ? 'confirmed' : (OTHER_STATES[(runNo + c) % OTHER_STATES.length] ?? 'draft');
      own.push(await orderInStatus(t, status, owner, { items: [{ product_id: product.id, quantity: 1 + slot }], address: '1 Main St, Springfield' }));
    }
    all.push(own);
  }
  return all;
}

interface Sent {
  draw: Draw;
  /** The caller's index (CUSTOMERS: the admin) and the key as sent. */
  scope: number;
  key: string | undefined;
  order: OrderBody | undefined;
  /** Whether the body could be taken: right amount and method, an existing confirmed order the caller may pay. */
  payable: boolean;
  res: LightMyRequestResponse;
}

function expectProblemJson(res: LightMyRequestResponse): void {
  expect(res.headers['content-type'], res.body).toMatch(/^application\/problem\+json/);
  const problem = res.json<{ type?: unknown; status?: unknown; title?: unknown }>();
  expect(problem.status).toBe(res.statusCode);
  expect(problem.type).toEqual(expect.stringMatching(/^\/problems\/[a-z-]+$/));
  expect(problem.title).toEqual(expect.stringMatching(/./));
}

async function play(batches: Draw[][]): Promise<void> {
  run += 1;
  const runNo = run;
  const orders = await freshOrders(runNo);
  const keyOf = (n: number) => `prop-${runNo}-${n}`;

  const send = async (d: Draw): Promise<Sent> => {
    const caller = customers[d.caller];
    const token = caller ? caller.token : t.admin.token;
    // The admin's "own" order is customer `slot`'s; "other" is always the next customer's.
    const owner = caller ? d.caller : d.slot % CUSTOMERS;
    const order = d.target === 'unknown' ? undefined : orders[d.target === 'own' ? owner : (owner + 1) % CUSTOMERS]?.[d.slot];
    const mayPay = caller === undefined || d.target === 'own';
    const body = {
      order_id: order?.id ?? UNKNOWN_ORDER,
      amount: (order?.total ?? 700) + (d.amount === 'total' ? 0 : 1),
      method: d.method,
    };
    const key = d.key === null ? undefined : keyOf(d.key);
    const res = await t.request({
      method: 'POST',
      url: PAYMENTS,
      payload: JSON.stringify(body),
      headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
      token,
    });
    const payable = order?.status === 'confirmed' && mayPay && d.amount === 'total' && d.method !== 'cash';
    return { draw: d, scope: d.caller, key, order, payable, res };
  };

  // Retries resolved in drawing order: a retry of a retry is the original request again.
  const drawn: Draw[] = [];
  const resolved = batches.map((batch) =>
    batch.map((d) => {
      const original = d.repeat === null || drawn.length === 0 ? d : (drawn[d.repeat % drawn.length] ?? d);
      drawn.push(original);
      return original;
    }),
  );
  const sent: Sent[] = [];
  for (const batch of resolved) sent.push(...(await Promise.all(batch.map(send))));

  const describeAll = () => sent.map((s) => `${JSON.stringify(s.draw)} -> ${s.res.statusCode}`).join('\n');
  const created = new Map<number, number>();
  const byKey = new Map<string, Set<number>>();
  for (const s of sent) {
    const status = s.res.statusCode;
    const outcome = status >= 400 ? `${status} ${String(s.res.json<{ type?: unknown }>().type)}` : String(status);
    seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
    expect(status, `no 5xx:\n${describeAll()}\n${s.res.body}`).toBeLessThan(500);
    if (status >= 400) {
      expectProblemJson(s.res);
      continue;
    }
    expect([200, 201], s.res.body).toContain(status);
    // A 2xx answers only a body the service could take; a replay has the same body as its first.
    expect(s.payable, `a 2xx for a body that could not be paid:\n${describeAll()}`).toBe(true);
    const payment = s.res.json<PaymentBody>();
    expect(payment.order_id).toBe(s.order?.id);
    if (status === 201) {
      expect(created.has(payment.order_id), `two 201s for order ${payment.order_id}:\n${describeAll()}`).toBe(false);
      created.set(payment.order_id, payment.id);
    } else {
      // 200 is only ever a replay of a stored result.
      expect(s.key, 'a 200 without a key').toBeDefined();
      expect(s.res.headers['idempotent-replayed']).toBe('true');
    }
    if (s.key !== undefined) {
      const pair = `${s.scope}/${s.key}`;
      byKey.set(pair, (byKey.get(pair) ?? new Set()).add(payment.id));
    }
  }
  for (const [pair, ids] of byKey) expect(ids.size, `key ${pair} answered with payments ${[...ids].join(', ')}:\n${describeAll()}`).toBe(1);

  // The tables agree: one payment at most per order, and exactly the payments answered 201 (the
  // orders created paid by the scene have their one seeded payment).
  const all = orders.flat();
  const rows = await t.db
    .select({ orderId: payments.orderId, n: count() })
    .from(payments)
    .where(inArray(payments.orderId, all.map((o) => o.id)))
    .groupBy(payments.orderId);
  const stored = new Map(rows.map((r) => [r.orderId, r.n]));
  for (const order of all) {
    const expected = order.status === 'paid' || created.has(order.id) ? 1 : 0;
    expect(stored.get(order.id) ?? 0, `payments of order ${order.id} (${order.status} at the start):\n${describeAll()}`).toBe(expected);
    // Paid exactly when a payment was answered; refused requests changed nothing.
    const now = (await readOrder(t, order.id)).order.status;
    expect(now, `order ${order.id}`).toBe(created.has(order.id) ? 'paid' : order.status);
  }
  // Each key row of the run holds the one payment its 2xx answers carried.
  const keyRows = await t.db
    .select({ scope: idempotencyKeys.scope, key: idempotencyKeys.key, body: idempotencyKeys.responseBody })
    .from(idempotencyKeys)
    .where(and(like(idempotencyKeys.key, `prop-${runNo}-%`), eq(idempotencyKeys.operation, 'payments.create')));
  const scopeIndex = (scope: string) => {
    const found = customers.findIndex((c) => scope === `user:${c.id}`);
    return found === -1 ? CUSTOMERS : found;
  };
  for (const row of keyRows) {
    const ids = byKey.get(`${scopeIndex(row.scope)}/${row.key}`);
    expect(ids, `key row ${row.scope}/${row.key} without a 2xx answer`).toBeDefined();
    expect(ids?.has((JSON.parse(row.body) as PaymentBody).id)).toBe(true);
  }
  expect(keyRows.length).toBe(byKey.size);
}

describe(`random payment traffic (${testDbKind}, fast-check seed ${SEED})`, () => {
  it('never two payments for one order, never two operations for one key, never a 5xx; every 4xx a problem+json', async () => {
    await fc.assert(fc.asyncProperty(sequence, play), { seed: SEED, numRuns: NUM_RUNS });
    // Payments made and replayed, wrong bodies, others' and unknown orders, unpayable orders and
    // reused keys: each was met, or the generator went astray and the property proved little.
    const outcomes = JSON.stringify(Object.fromEntries([...seen].sort()));
    const expected = [
      '200',
      '201',
      '404 /problems/not-found',
      '409 /problems/invalid-state-transition',
      '422 /problems/validation-error',
      '422 /problems/idempotency-key-mismatch',
    ];
    for (const outcome of expected) expect(seen.get(outcome) ?? 0, outcomes).toBeGreaterThan(0);
    // What the runs covered, for reading a failure.
    console.log(`${testDbKind}: ${outcomes}`);
  }, 120_000);
});
