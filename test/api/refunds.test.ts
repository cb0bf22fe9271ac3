/**
 * Refunds (docs/api.md#refunds) over HTTP: partial and full refunds, `amount_refunded`, the
 * `refunded` state, cancelling a paid order (refund in full and stock released, in one
 * transaction), returns of delivered orders, the links, and bad input refused with nothing written.
 */
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.ts';
import { shipOrder } from '../helpers/fulfillments.ts';
import { advanceOrder, createOrderScene, ownLinks, draftOrder, expectOrderUnchanged, forceStatus, orderAction, readOrder, stockOf, type OrderBody, type OrderScene } from '../helpers/orders.ts';
import { PAYMENTS, payOrder, type PaymentBody } from '../helpers/payments.ts';
import { expectProblem } from '../helpers/problems.ts';
import { createProduct, type ProductBody } from '../helpers/products.ts';
import { postRefund, readPayment, refund, refundLedger, refundsOf, type RefundBody, type RefundListBody } from '../helpers/refunds.ts';

let scene: OrderScene;

const t = useTestApp();
beforeAll(async () => {
  scene = await createOrderScene(t);
});

/** A paid order of alice's: 3 units of a product of its own (1000 each, stock 50), paid through POST /payments. */
async function paidOrder(): Promise<{ order: OrderBody; payment: PaymentBody; product: ProductBody }> {
  const product = await createProduct(t, { price: 1000, stock: 50 });
  const draft = await draftOrder(t, scene, { items: [{ product_id: product.id, quantity: 3 }] });
  const confirmed = await advanceOrder(t, draft, 'confirmed', scene.alice);
  const payment = await payOrder(t, confirmed, scene.alice.token);
  return { order: confirmed, payment, product };
}

/** Everything a refused refund must leave as it was: the order (body and ETag), the ledger, the stock. */
async function snapshot(order: OrderBody, payment: PaymentBody, product: ProductBody) {
  return { order: await readOrder(t, order.id), ledger: await refundLedger(t, payment.id), stock: await stockOf(t, product.id) };
}

async function expectNothingWritten(before: Awaited<ReturnType<typeof snapshot>>, payment: PaymentBody, product: ProductBody): Promise<void> {
  await expectOrderUnchanged(t, before.order);
  expect(await refundLedger(t, payment.id)).toEqual(before.ledger);
  expect(await stockOf(t, product.id)).toBe(before.stock);
}

describe('POST /payments/{id}/refunds gives back part of a payment', () => {
  it('a partial refund: 201 with Location and the refund; amount_refunded counts it; the order stays paid and keeps its stock', async () => {
    const { order, payment, product } = await paidOrder();
    const res = await postRefund(t, payment.id, { amount: 1200, reason: 'requested_by_customer' }, t.admin.token);

    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json<RefundBody>();
    expect(body).toEqual({
      id: expect.any(Number),
      payment_id: payment.id,
      amount: 1200,
      currency: 'USD',
      reason: 'requested_by_customer',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(res.headers.location).toBe(`${refundsOf(payment.id)}/${body.id}`);
    const atLocation = await t.request({ method: 'GET', url: String(res.headers.location), token: scene.alice.token });
    expect(atLocation.statusCode).toBe(200);
    expect(atLocation.json()).toEqual(body);

    const after = await readPayment(t, payment.id, scene.alice.token);
    expect(after.amount_refunded).toBe(1200);
    expect(after._links.refund).toEqual({ href: refundsOf(payment.id), method: 'POST' });
    expect((await readOrder(t, order.id)).order.status).toBe('paid');
    expect(await stockOf(t, product.id)).toBe(47);
  });

  it('refunds add up: the list has them newest first, and the one that leaves nothing refunds the order and releases its stock', async () => {
    const { order, payment, product } = await paidOrder();
    const first = await refund(t, payment.id, { amount: 1000 }, t.admin.token);
    const second = await refund(t, payment.id, { amount: 1500, reason: 'other' }, t.admin.token);
    expect((await readOrder(t, order.id)).order.status).toBe('paid');
    const last = await refund(t, payment.id, { amount: 500 }, t.admin.token);

    const list = await t.request({ method: 'GET', url: refundsOf(payment.id), token: scene.alice.token });
    expect(list.statusCode).toBe(200);
    expect(list.headers['cache-control']).toBe('no-store');
    expect(list.json<RefundListBody>().data).toEqual([last, second, first]);

    const after = await readPayment(t, payment.id, t.admin.token);
    expect(after.amount_refunded).toBe(3000);
    expect(after._links.refund).toBeUndefined();
    const { order: refunded } = await readOrder(t, order.id);
    expect(refunded.status).toBe('refunded');
    expect(ownLinks(refunded._links)).toEqual({ self: { href: `/api/v1/orders/${order.id}`, method: 'GET' } });
    expect(await stockOf(t, product.id)).toBe(50);
  });

  it('without amount, all that remains is refunded: a full refund', async () => {
    const { order, payment, product } = await paidOrder();
    await refund(t, payment.id, { amount: 700 }, t.admin.token);
    const rest = await refund(t, payment.id, {}, t.admin.token);
    expect(rest).toMatchObject({ amount: 2300, reason: null });
    expect((await readPayment(t, payment.id, t.admin.token)).amount_refunded).toBe(3000);
    expect((await readOrder(t, order.id)).order.status).toBe('refunded');
    expect(await stockOf(t, product.id)).toBe(50);
  });

  it('a service client with payments:write refunds; a customer is 403 even on their own payment; a service without the scope is 403', async () => {
    const { payment, order, product } = await paidOrder();
    const before = await snapshot(order, payment, product);
    expectProblem(await postRefund(t, payment.id, { amount: 100 }, scene.alice.token), 403, 'forbidden');
    expectProblem(await postRefund(t, payment.id, { amount: 100 }, await t.serviceToken(['orders:read'])), 403, 'insufficient-scope');
    await expectNothingWritten(before, payment, product);
    expect((await refund(t, payment.id, { amount: 100 }, await t.serviceToken(['payments:write']))).amount).toBe(100);
  });

  it("a customer reads their own payment's refunds; another customer gets 404 for the list and for one refund", async () => {
    const { payment } = await paidOrder();
    const one = await refund(t, payment.id, { amount: 100 }, t.admin.token);
    expectProblem(await t.request({ method: 'GET', url: refundsOf(payment.id), token: scene.bob.token }), 404, 'not-found');
    expectProblem(await t.request({ method: 'GET', url: `${refundsOf(payment.id)}/${one.id}`, token: scene.bob.token }), 404, 'not-found');
    expectProblem(await t.request({ method: 'GET', url: `${refundsOf(payment.id)}/${one.id + 1_000}`, token: scene.alice.token }), 404, 'not-found');
  });

  it('with an Idempotency-Key a retry replays the refund: one refund, paid out once; the key with another amount is 422 and refunds nothing', async () => {
    const { payment } = await paidOrder();
    const key = { 'idempotency-key': `refund-${payment.id}` };
    const first = await postRefund(t, payment.id, { amount: 400 }, t.admin.token, key);
    expect(first.statusCode, first.body).toBe(201);
    const again = await postRefund(t, payment.id, { amount: 400 }, t.admin.token, key);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect(again.headers.location).toBe(first.headers.location);
    expectProblem(await postRefund(t, payment.id, { amount: 500 }, t.admin.token, key), 422, 'idempotency-key-mismatch');
    expect(await refundLedger(t, payment.id)).toEqual({ rows: 1, amountRefunded: 400 });
  });
});

describe('cancelling a paid order refunds it in full and releases its stock, in one transaction', () => {
  it('the owner cancels a paid order: 200 cancelled; one refund of the whole payment (no reason); the stock is back', async () => {
    const { order, payment, product } = await paidOrder();
    expect((await readOrder(t, order.id)).order._links.cancel).toEqual({ href: `/api/v1/orders/${order.id}/cancel`, method: 'POST' });
    const res = await orderAction(t, order.id, 'cancel', scene.alice.token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<OrderBody>().status).toBe('cancelled');

    expect(await refundLedger(t, payment.id)).toEqual({ rows: 1, amountRefunded: 3000 });
    const list = (await t.request({ method: 'GET', url: refundsOf(payment.id), token: scene.alice.token })).json<RefundListBody>();
    expect(list.data).toEqual([expect.objectContaining({ payment_id: payment.id, amount: 3000, reason: null })]);
    expect(await stockOf(t, product.id)).toBe(50);
    expect((await readPayment(t, payment.id, scene.alice.token))._links.refund).toBeUndefined();
  });

  it('after partial refunds, the cancel refunds what remains', async () => {
    const { order, payment } = await paidOrder();
    await refund(t, payment.id, { amount: 1000 }, t.admin.token);
    expect((await orderAction(t, order.id, 'cancel', t.admin.token)).statusCode).toBe(200);
    expect(await refundLedger(t, payment.id)).toEqual({ rows: 2, amountRefunded: 3000 });
  });

  it('when releasing the stock fails, the refund is rolled back with it: the order stays paid, nothing refunded', async () => {
    const { order, payment, product } = await paidOrder();
    const before = await snapshot(order, payment, product);
    // A fault in the last step of the cancel (the stock release), after the refund was written.
    await t.db.execute(sql.raw(`create or replace function refunds_test_freeze() returns trigger language plpgsql as $$ begin raise exception 'stock frozen'; end $$`));
    await t.db.execute(sql.raw(`create trigger refunds_test_freeze before update on products for each row when (old.id = ${product.id}) execute function refunds_test_freeze()`));
    try {
      expect((await orderAction(t, order.id, 'cancel', scene.alice.token)).statusCode).toBe(500);
    } finally {
      await t.db.execute(sql.raw('drop trigger refunds_test_freeze on products'));
    }
    await expectNothingWritten(before, payment, product);
    expect((await orderAction(t, order.id, 'cancel', scene.alice.token)).statusCode).toBe(200);
  });

  it('a shipped order cannot be cancelled (409): nothing refunded', async () => {
    const { order, payment, product } = await paidOrder();
    await shipOrder(t, order.id, t.admin.token);
    const before = await snapshot(order, payment, product);
    const problem = expectProblem(await orderAction(t, order.id, 'cancel', scene.alice.token), 409, 'invalid-state-transition');
    expect(problem.allowed).toEqual([]);
    await expectNothingWritten(before, payment, product);
  });

  it('status cancelled by PATCH on a paid order stays 409: money moves only by the cancel action', async () => {
    const { order, payment, product } = await paidOrder();
    const before = await snapshot(order, payment, product);
    const res = await t.request({ method: 'PATCH', url: `/api/v1/orders/${order.id}`, payload: { status: 'cancelled' }, token: t.admin.token });
    expectProblem(res, 409, 'invalid-state-transition');
    await expectNothingWritten(before, payment, product);
  });
});

describe('returns and shipped orders', () => {
  it('a delivered order refunded in full becomes refunded; restock: true puts the goods back, without it the stock stays', async () => {
    for (const restock of [true, false]) {
      const { order, payment, product } = await paidOrder();
      await shipOrder(t, order.id, t.admin.token);
      await forceStatus(t, order.id, 'delivered');
      await refund(t, payment.id, { reason: 'requested_by_customer', restock }, t.admin.token);
      expect((await readOrder(t, order.id)).order.status).toBe('refunded');
      expect(await stockOf(t, product.id)).toBe(restock ? 50 : 47);
    }
  });

  it('a completed order is returned the same way', async () => {
    const { order, payment, product } = await paidOrder();
    await forceStatus(t, order.id, 'completed');
    await refund(t, payment.id, { restock: true }, t.admin.token);
    expect((await readOrder(t, order.id)).order.status).toBe('refunded');
    expect(await stockOf(t, product.id)).toBe(50);
  });

  it('a shipped order takes partial refunds; a refund of all that remains is 409 until it is delivered, nothing written', async () => {
    const { order, payment, product } = await paidOrder();
    await shipOrder(t, order.id, t.admin.token);
    await refund(t, payment.id, { amount: 1000 }, t.admin.token);
    const before = await snapshot(order, payment, product);
    const problem = expectProblem(await postRefund(t, payment.id, {}, t.admin.token), 409, 'invalid-state-transition');
    expect(problem).toMatchObject({ current_status: 'shipped', requested_status: 'refunded', allowed: [] });
    await expectNothingWritten(before, payment, product);
    expect((await readPayment(t, payment.id, t.admin.token))._links.refund).toEqual({ href: refundsOf(payment.id), method: 'POST' });
  });
});

describe('bad input is a clear problem and writes nothing', () => {
  it.each([
    ['amount 0', { amount: 0 }, 'amount'],
    ['a negative amount', { amount: -100 }, 'amount'],
    ['a fractional amount', { amount: 10.5 }, 'amount'],
    ['an unknown reason', { reason: 'changed_my_mind' }, 'reason'],
    ['restock not a boolean', { restock: 'yes' }, 'restock'],
    ['an unknown field', { amount: 100, note: 'x' }, 'note'],
  ])('%s is 422 validation-error naming %s', async (_name, body, field) => {
    const { order, payment, product } = await paidOrder();
    const before = await snapshot(order, payment, product);
    expectProblem(await postRefund(t, payment.id, body, t.admin.token), 422, 'validation-error', { fields: [field] });
    await expectNothingWritten(before, payment, product);
  });

  it('more than remains is 422 refund-exceeds-payment naming amount, with amount_refundable', async () => {
    const { order, payment, product } = await paidOrder();
    await refund(t, payment.id, { amount: 2000 }, t.admin.token);
    const before = await snapshot(order, payment, product);
    const problem = expectProblem(await postRefund(t, payment.id, { amount: 1001 }, t.admin.token), 422, 'refund-exceeds-payment', {
      fields: ['amount'],
      instance: refundsOf(payment.id),
    });
    expect(problem.amount_refundable).toBe(1000);
    await expectNothingWritten(before, payment, product);
  });

  it('the payment of a cancelled order, already refunded in full, refunds nothing more: 422 with amount_refundable 0', async () => {
    const { order, payment, product } = await paidOrder();
    expect((await orderAction(t, order.id, 'cancel', scene.alice.token)).statusCode).toBe(200);
    const before = await snapshot(order, payment, product);
    for (const body of [{ amount: 1 }, {}]) {
      const problem = expectProblem(await postRefund(t, payment.id, body, t.admin.token), 422, 'refund-exceeds-payment');
      expect(problem.amount_refundable).toBe(0);
      expect(problem.detail).toMatch(/already refunded in full/);
    }
    await expectNothingWritten(before, payment, product);
  });

  it('an unknown payment is 404; a path id out of range is 404', async () => {
    expectProblem(await postRefund(t, 99_999_999, { amount: 1 }, t.admin.token), 404, 'not-found');
    expectProblem(await postRefund(t, 99_999_999_999, { amount: 1 }, t.admin.token), 404, 'not-found');
    expectProblem(await t.request({ method: 'GET', url: refundsOf(99_999_999), token: t.admin.token }), 404, 'not-found');
  });

  it("a free order's payment of 0 has nothing to refund: 422", async () => {
    const free = await createProduct(t, { price: 0, stock: 10 });
    const draft = await draftOrder(t, scene, { items: [{ product_id: free.id, quantity: 1 }] });
    const payment = await payOrder(t, await advanceOrder(t, draft, 'confirmed', scene.alice), scene.alice.token, { amount: 0 });
    expect(payment._links.refund).toBeUndefined();
    expect(expectProblem(await postRefund(t, payment.id, {}, t.admin.token), 422, 'refund-exceeds-payment').amount_refundable).toBe(0);
    // Its cancel refunds nothing and still releases the stock.
    expect((await orderAction(t, draft.id, 'cancel', scene.alice.token)).statusCode).toBe(200);
    expect(await refundLedger(t, payment.id)).toEqual({ rows: 0, amountRefunded: 0 });
    expect(await stockOf(t, free.id)).toBe(10);
  });

  it("a refund moves the payment's Last-Modified: a read with the If-Modified-Since of before is 200, not 304", async () => {
    const { payment } = await paidOrder();
    // The payment was made a minute ago: HTTP dates have whole seconds.
    await t.db.execute(sql.raw(`update payments set created_at = created_at - interval '1 minute', updated_at = updated_at - interval '1 minute' where id = ${payment.id}`));
    const url = `${PAYMENTS}/${payment.id}`;
    const before = await t.request({ method: 'GET', url, token: scene.alice.token });
    const since = String(before.headers['last-modified']);
    expect((await t.request({ method: 'GET', url, token: scene.alice.token, headers: { 'if-modified-since': since } })).statusCode).toBe(304);
    await refund(t, payment.id, { amount: 100 }, t.admin.token);
    const after = await t.request({ method: 'GET', url, token: scene.alice.token, headers: { 'if-modified-since': since } });
    expect(after.statusCode).toBe(200);
    expect(after.json<PaymentBody>().amount_refunded).toBe(100);
    expect(after.json<PaymentBody>().updated_at > after.json<PaymentBody>().created_at).toBe(true);
  });

  it('GET /payments lists amount_refunded for each payment', async () => {
    const { payment } = await paidOrder();
    await refund(t, payment.id, { amount: 250 }, t.admin.token);
    const list = await t.request({ method: 'GET', url: `${PAYMENTS}?order_id=${payment.order_id}`, token: scene.alice.token });
    expect(list.json<{ data: PaymentBody[] }>().data.map((p) => p.amount_refunded)).toEqual([250]);
  });
});

describe('the /trpc door refunds by the same rules', () => {
  const trpc = (procedure: string, input: unknown, token: string, key?: string) =>
    t.app.inject({
      method: 'POST',
      url: `/trpc/${procedure}`,
      payload: JSON.stringify(input),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...(key === undefined ? {} : { 'idempotency-key': key }) },
    });
  type Problem = { error: { data: { problem: { type: string; amount_refundable?: number } } } };

  it('refunds.create refunds and replays by key; more than remains is 422 refund-exceeds-payment', async () => {
    const { payment } = await paidOrder();
    const key = `trpc-refund-${payment.id}`;
    const first = await trpc('refunds.create', { id: payment.id, amount: 300 }, t.admin.token, key);
    expect(first.statusCode, first.body).toBe(200);
    const again = await trpc('refunds.create', { id: payment.id, amount: 300 }, t.admin.token, key);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    const over = await trpc('refunds.create', { id: payment.id, amount: 2701 }, t.admin.token);
    expect(over.statusCode).toBe(422);
    expect(over.json<Problem>().error.data.problem).toMatchObject({ type: '/problems/refund-exceeds-payment', amount_refundable: 2700 });
    expect(await refundLedger(t, payment.id)).toEqual({ rows: 1, amountRefunded: 300 });
  });
});
