/**
 * Payments over REST (docs/api.md#resources, #order-states, #reads-lists-and-caching and #authentication-and-authorization): paying a confirmed order captures one
 * payment and makes the order paid in one step; the amount must be the order's total; customers
 * pay and see only their own; payments are never cached.
 */
import { count, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { payments } from '../../server/modules/payments/payments.table.ts';
import { type TestApp, useTestApp } from '../helpers/app.ts';
import { alter } from '../helpers/bodies.ts';
import {
  advanceOrder,
  createOrderScene,
  draftOrder,
  expectOrderUnchanged,
  ORDERS,
  orderAction,
  readOrder,
  type OrderBody,
  type OrderScene,
} from '../helpers/orders.ts';
import { sendToFulfillment, shipOrder } from '../helpers/fulfillments.ts';
import { PAYMENTS, paymentInput, payOrder, postPayment, type PaymentBody, type PaymentListBody } from '../helpers/payments.ts';
import { expectProblem } from '../helpers/problems.ts';
import { createProduct } from '../helpers/products.ts';

let scene: OrderScene;

const t = useTestApp();
beforeAll(async () => {
  scene = await createOrderScene(t);
});

/** A confirmed order of alice's (or `owner`'s): ready to pay. */
async function confirmedOrder(owner = scene.alice): Promise<OrderBody> {
  return advanceOrder(t, await draftOrder(t, scene, { owner }), 'confirmed', owner);
}

async function paymentRowsOf(orderId: number): Promise<number> {
  const [row] = await t.db.select({ n: count() }).from(payments).where(eq(payments.orderId, orderId));
  return row?.n ?? 0;
}

describe('POST /payments captures a payment and the order becomes paid (docs/api.md#payments)', () => {
  it('201 with Location, no-store, and the payment; the order is paid', async () => {
    const order = await confirmedOrder();
    const res = await postPayment(t, paymentInput(order, { method: 'wallet' }), scene.alice.token);

    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const payment = res.json<PaymentBody>();
    expect(res.headers.location).toBe(`${PAYMENTS}/${payment.id}`);
    const self = `${PAYMENTS}/${payment.id}`;
    expect(payment).toEqual({
      id: expect.any(Number),
      order_id: order.id,
      amount: order.total,
      amount_refunded: 0,
      currency: 'USD',
      method: 'wallet',
      status: 'captured',
      metadata: {},
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: payment.created_at,
      _links: {
        self: { href: self, method: 'GET' },
        order: { href: `/api/v1/orders/${order.id}`, method: 'GET' },
        refunds: { href: `${self}/refunds`, method: 'GET' },
        refund: { href: `${self}/refunds`, method: 'POST' },
      },
    });
    expect(Object.keys(payment)).toEqual(['id', 'order_id', 'amount', 'amount_refunded', 'currency', 'method', 'status', 'metadata', 'created_at', 'updated_at', '_links']);

    const { order: paid } = await readOrder(t, order.id, scene.alice.token);
    expect(paid.status).toBe('paid');
    expect(await paymentRowsOf(order.id)).toBe(1);
  });

  it('the Location answers the same payment, no-store', async () => {
    const order = await confirmedOrder();
    const res = await postPayment(t, paymentInput(order), scene.alice.token);
    const read = await t.request({ method: 'GET', url: String(res.headers.location), token: scene.alice.token });
    expect(read.statusCode).toBe(200);
    expect(read.headers['cache-control']).toBe('no-store');
    expect(read.json()).toEqual(res.json());
  });

  it('an admin pays a customer’s order; a service client with payments:write pays any order', async () => {
    const first = await confirmedOrder();
    expect((await payOrder(t, first, t.admin.token)).order_id).toBe(first.id);
    const second = await confirmedOrder(scene.bob);
    const service = await t.serviceToken(['payments:write']);
    expect((await payOrder(t, second, service, { method: 'bank_transfer' })).method).toBe('bank_transfer');
  });
});

describe('the amount must equal the order’s total: 422 naming amount, nothing changes', () => {
  it.each([
    ['one cent short', (total: number) => total - 1],
    ['one cent over', (total: number) => total + 1],
  ])('%s', async (_name, wrong) => {
    const order = await confirmedOrder();
    const before = await readOrder(t, order.id);
    const res = await postPayment(t, paymentInput(order, { amount: wrong(order.total) }), scene.alice.token);
    expectProblem(res, 422, 'validation-error', { fields: ['amount'], instance: PAYMENTS });
    await expectOrderUnchanged(t, before);
    expect(await paymentRowsOf(order.id)).toBe(0);
  });

  it.each([
    ['zero, for an order that is not free', { amount: 0 }, 'amount'],
    ['negative', { amount: -5 }, 'amount'],
    ['not an integer', { amount: 12.5 }, 'amount'],
    ['a string', { amount: '4548' }, 'amount'],
    ['an unknown method', { method: 'cash' }, 'method'],
    ['no order_id', { order_id: undefined }, 'order_id'],
    ['an unknown field', { tip: 100 }, 'tip'],
  ])('%s is 422 naming %s', async (_name, changes, field) => {
    const order = await confirmedOrder();
    const res = await postPayment(t, alter(paymentInput(order), changes), scene.alice.token);
    expectProblem(res, 422, 'validation-error', { fields: [field] });
    expect(await paymentRowsOf(order.id)).toBe(0);
  });
});

describe('a zero-total order is paid with amount 0 like any other (docs/api.md#payments, issue 21 item 4)', () => {
  /** A confirmed order of alice's whose every line is free: its total is 0. */
  async function freeOrder(): Promise<OrderBody> {
    const free = await createProduct(t, { price: 0, stock: 100 });
    const draft = await draftOrder(t, scene, { items: [{ product_id: free.id, quantity: 2 }] });
    const order = await advanceOrder(t, draft, 'confirmed', scene.alice);
    expect(order.total).toBe(0);
    return order;
  }

  it('amount 0 is 201, the order is paid and goes on to fulfillment', async () => {
    const order = await freeOrder();
    expect(order._links.pay).toEqual({ href: PAYMENTS, method: 'POST' });
    const payment = await payOrder(t, order, scene.alice.token, { amount: 0 });
    expect(payment).toMatchObject({ order_id: order.id, amount: 0, currency: 'USD', status: 'captured' });
    expect((await t.request({ method: 'GET', url: `${PAYMENTS}/${payment.id}`, token: scene.alice.token })).json()).toEqual(payment);
    expect((await readOrder(t, order.id, scene.alice.token)).order.status).toBe('paid');

    expect((await sendToFulfillment(t, order.id, t.admin.token)).statusCode).toBe(202);
    await shipOrder(t, order.id, t.admin.token);
    expect((await readOrder(t, order.id)).order.status).toBe('shipped');
  });

  it('any other amount is 422 naming amount, and nothing is paid', async () => {
    const order = await freeOrder();
    const before = await readOrder(t, order.id);
    expectProblem(await postPayment(t, paymentInput(order, { amount: 1 }), scene.alice.token), 422, 'validation-error', { fields: ['amount'] });
    await expectOrderUnchanged(t, before);
    expect(await paymentRowsOf(order.id)).toBe(0);
  });

  it('with an Idempotency-Key a retry replays the payment: one payment, paid once', async () => {
    const order = await freeOrder();
    const send = () =>
      t.request({ method: 'POST', url: PAYMENTS, payload: paymentInput(order, { amount: 0 }), headers: { 'idempotency-key': `free-${order.id}` }, token: scene.alice.token });
    const first = await send();
    expect(first.statusCode, first.body).toBe(201);
    const again = await send();
    expect(again.statusCode, again.body).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(await paymentRowsOf(order.id)).toBe(1);
  });
});

describe('only a confirmed order can be paid: 409 invalid-state-transition with allowed', () => {
  it('a draft is 409, allowed []', async () => {
    const order = await draftOrder(t, scene);
    const problem = expectProblem(await postPayment(t, paymentInput(order), scene.alice.token), 409, 'invalid-state-transition');
    expect(problem.allowed).toEqual([]);
    expect(await paymentRowsOf(order.id)).toBe(0);
  });

  it('a cancelled order is 409', async () => {
    const order = await draftOrder(t, scene);
    expect((await orderAction(t, order.id, 'cancel', scene.alice.token)).statusCode).toBe(200);
    expectProblem(await postPayment(t, paymentInput(order), scene.alice.token), 409, 'invalid-state-transition');
  });

  it('a second payment of a paid order is 409 and leaves one payment', async () => {
    const order = await confirmedOrder();
    await payOrder(t, order, scene.alice.token);
    const before = await readOrder(t, order.id);
    const problem = expectProblem(await postPayment(t, paymentInput(order, { method: 'wallet' }), scene.alice.token), 409, 'invalid-state-transition');
    expect(problem.allowed).toEqual([]);
    expect(problem.detail).toMatch(/already paid/);
    await expectOrderUnchanged(t, before);
    expect(await paymentRowsOf(order.id)).toBe(1);
  });

  it('the state is checked before the amount: a paid order with a wrong amount is 409, not 422', async () => {
    const order = await confirmedOrder();
    await payOrder(t, order, scene.alice.token);
    expectProblem(await postPayment(t, paymentInput(order, { amount: 1 }), scene.alice.token), 409, 'invalid-state-transition');
  });

  it('status=paid by PATCH stays 409: an order becomes paid only through POST /payments', async () => {
    const order = await confirmedOrder();
    const res = await t.request({
      method: 'PATCH',
      url: `${ORDERS}/${order.id}`,
      headers: { 'content-type': 'application/merge-patch+json' },
      payload: JSON.stringify({ status: 'paid' }),
      token: t.admin.token,
    });
    expectProblem(res, 409, 'invalid-state-transition');
  });
});

describe('customers pay only their own orders (another’s is 404, as a missing one)', () => {
  it('bob paying alice’s order is 404 and changes nothing', async () => {
    const order = await confirmedOrder();
    const before = await readOrder(t, order.id);
    expectProblem(await postPayment(t, paymentInput(order), scene.bob.token), 404, 'not-found');
    await expectOrderUnchanged(t, before);
  });

  it('an unknown order is 404', async () => {
    expectProblem(await postPayment(t, { order_id: 999_999, amount: 100, method: 'card' }, scene.alice.token), 404, 'not-found');
  });
});

describe('who may pay (docs/api.md#authentication-and-authorization)', () => {
  it('no token is 401', async () => {
    const order = await confirmedOrder();
    const res = await t.request({ method: 'POST', url: PAYMENTS, payload: paymentInput(order) });
    expectProblem(res, 401, 'unauthorized');
  });

  it('a service client without payments:write is 403', async () => {
    const order = await confirmedOrder();
    const token = await t.serviceToken(['orders:read', 'orders:write', 'fulfillments:write']);
    expectProblem(await postPayment(t, paymentInput(order), token), 403, 'insufficient-scope');
    expect(await paymentRowsOf(order.id)).toBe(0);
  });
});

describe('GET /payments/{id}: customers read their own, never cached', () => {
  let order: OrderBody;
  let payment: PaymentBody;
  beforeAll(async () => {
    order = await confirmedOrder();
    payment = await payOrder(t, order, scene.alice.token);
  });

  it('the owner reads it: 200, no-store, an ETag, Last-Modified from updated_at (its creation until a refund)', async () => {
    const res = await t.request({ method: 'GET', url: `${PAYMENTS}/${payment.id}`, token: scene.alice.token });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.etag).toEqual(expect.any(String));
    expect(res.headers['last-modified']).toBe(new Date(payment.created_at).toUTCString());
    expect(res.json()).toEqual(payment);
  });

  it('another customer gets 404, as for a missing payment', async () => {
    expectProblem(await t.request({ method: 'GET', url: `${PAYMENTS}/${payment.id}`, token: scene.bob.token }), 404, 'not-found');
    expectProblem(await t.request({ method: 'GET', url: `${PAYMENTS}/999999`, token: scene.alice.token }), 404, 'not-found');
  });

  it('an admin and a service client with orders:read read it; a service without is 403', async () => {
    expect((await t.request({ method: 'GET', url: `${PAYMENTS}/${payment.id}`, token: t.admin.token })).statusCode).toBe(200);
    const reader = await t.serviceToken(['orders:read']);
    expect((await t.request({ method: 'GET', url: `${PAYMENTS}/${payment.id}`, token: reader })).statusCode).toBe(200);
    const writerOnly = await t.serviceToken(['payments:write']);
    expectProblem(await t.request({ method: 'GET', url: `${PAYMENTS}/${payment.id}`, token: writerOnly }), 403, 'insufficient-scope');
  });
});

describe('GET /payments: own payments, paged, filtered by order_id, never cached', () => {
  let carol: Awaited<ReturnType<TestApp['createUser']>>;
  let paid: PaymentBody[];
  beforeAll(async () => {
    carol = await t.createUser('customer');
    paid = [];
    for (let i = 0; i < 3; i += 1) paid.push(await payOrder(t, await confirmedOrder(carol), carol.token));
  });

  it('a customer lists only their own payments, newest first, in the list envelope', async () => {
    const res = await t.request({ method: 'GET', url: PAYMENTS, token: carol.token });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const list = res.json<PaymentListBody>();
    expect(list).toEqual({ data: [...paid].reverse(), page: 1, limit: 20, has_more: false, next_cursor: null, prev_cursor: null });
  });

  it('pages with a Link header', async () => {
    const res = await t.request({ method: 'GET', url: `${PAYMENTS}?limit=2`, token: carol.token });
    const list = res.json<PaymentListBody>();
    expect(list.data.map((p) => p.id)).toEqual([paid[2]?.id, paid[1]?.id]);
    expect(list.has_more).toBe(true);
    expect(res.headers.link).toMatch(/rel="next"/);
    const second = await t.request({ method: 'GET', url: `${PAYMENTS}?limit=2&page=2`, token: carol.token });
    expect(second.json<PaymentListBody>().data.map((p) => p.id)).toEqual([paid[0]?.id]);
  });

  it('order_id filters; another customer’s order_id lists nothing', async () => {
    const target = paid[1];
    if (!target) throw new Error('no payment');
    const mine = await t.request({ method: 'GET', url: `${PAYMENTS}?order_id=${target.order_id}`, token: carol.token });
    expect(mine.json<PaymentListBody>().data).toEqual([target]);
    const theirs = await t.request({ method: 'GET', url: `${PAYMENTS}?order_id=${target.order_id}`, token: scene.bob.token });
    expect(theirs.json<PaymentListBody>().data).toEqual([]);
  });

  it('an admin lists everyone’s', async () => {
    const res = await t.request({ method: 'GET', url: `${PAYMENTS}?limit=100`, token: t.admin.token });
    const ids = res.json<PaymentListBody>().data.map((p) => p.id);
    expect(ids).toEqual(expect.arrayContaining(paid.map((p) => p.id)));
  });

  it('a non-integer order_id is 400; an out-of-range limit is 422', async () => {
    expectProblem(await t.request({ method: 'GET', url: `${PAYMENTS}?order_id=abc`, token: carol.token }), 400, 'malformed-request');
    expectProblem(await t.request({ method: 'GET', url: `${PAYMENTS}?limit=500`, token: carol.token }), 422, 'validation-error');
  });
});

describe('DELETE of an order with a payment is 409 order-has-payment (docs/api.md#order-states)', () => {
  it('a paid order cannot be deleted; the payment and the order stay', async () => {
    const order = await confirmedOrder();
    await payOrder(t, order, scene.alice.token);
    const before = await readOrder(t, order.id);
    expectProblem(await t.request({ method: 'DELETE', url: `${ORDERS}/${order.id}`, token: t.admin.token }), 409, 'order-has-payment');
    await expectOrderUnchanged(t, before);
    expect(await paymentRowsOf(order.id)).toBe(1);
  });
});
