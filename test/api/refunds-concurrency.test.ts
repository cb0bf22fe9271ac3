/**
 * Concurrent refunds never give back more than was paid (docs/api.md#refunds): many partial
 * refunds of one payment at once, each a request of its own. On PostgreSQL they race on real
 * parallel connections of the pool (the order's row lock serializes them; the conditional update
 * and the check `payments_refunded_within_amount` back it up); on PGlite they serialize on its
 * single connection, and the outcome must be the same.
 */
import { eq, sum } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { refunds } from '../../server/modules/refunds/refunds.table.ts';
import { useTestApp } from '../helpers/app.ts';
import { testDbKind } from '../helpers/db.ts';
import { advanceOrder, createOrderScene, draftOrder, readOrder, stockOf, type OrderScene } from '../helpers/orders.ts';
import { payOrder } from '../helpers/payments.ts';
import { expectProblem } from '../helpers/problems.ts';
import { createProduct } from '../helpers/products.ts';
import { postRefund, readPayment, refundLedger } from '../helpers/refunds.ts';

let scene: OrderScene;

const t = useTestApp();
beforeAll(async () => {
  scene = await createOrderScene(t);
});

/** A paid order of 10 units at 100 (a payment of 1000), from a product with 40 in stock. */
async function paidPayment() {
  const product = await createProduct(t, { price: 100, stock: 40 });
  const draft = await draftOrder(t, scene, { items: [{ product_id: product.id, quantity: 10 }] });
  const payment = await payOrder(t, await advanceOrder(t, draft, 'confirmed', scene.alice), scene.alice.token);
  return { payment, product, orderId: draft.id };
}

async function refundedSum(paymentId: number): Promise<number> {
  const [row] = await t.db.select({ total: sum(refunds.amount).mapWith(Number) }).from(refunds).where(eq(refunds.paymentId, paymentId));
  return row?.total ?? 0;
}

describe(`concurrent refunds of one payment (${testDbKind})`, () => {
  it('20 parallel partial refunds of 70 on a payment of 1000 (1400 asked): 14 pass, 6 are 422, never more than 1000 refunded', async () => {
    const { payment, orderId } = await paidPayment();
    const service = await t.serviceToken(['payments:write']);
    // Different requests (no key, two callers): each is a refund of its own.
    const responses = await Promise.all(Array.from({ length: 20 }, (_v, i) => postRefund(t, payment.id, { amount: 70 }, i % 2 === 0 ? t.admin.token : service)));

    const statuses = responses.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 201), String(statuses)).toHaveLength(14);
    for (const res of responses.filter((r) => r.statusCode !== 201)) expectProblem(res, 422, 'refund-exceeds-payment');
    expect(await refundedSum(payment.id)).toBe(980);
    expect(await refundLedger(t, payment.id)).toEqual({ rows: 14, amountRefunded: 980 });
    expect((await readPayment(t, payment.id, t.admin.token)).amount_refunded).toBe(980);
    expect((await readOrder(t, orderId)).order.status).toBe('paid');
  });

  it('20 parallel refunds of 100 on a payment of 1000: exactly 10 pass, the order is refunded once and its stock released once', async () => {
    const { payment, product, orderId } = await paidPayment();
    expect(await stockOf(t, product.id)).toBe(30);
    const responses = await Promise.all(Array.from({ length: 20 }, () => postRefund(t, payment.id, { amount: 100 }, t.admin.token)));

    const statuses = responses.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 201), String(statuses)).toHaveLength(10);
    expect(await refundLedger(t, payment.id)).toEqual({ rows: 10, amountRefunded: 1000 });
    expect(await refundedSum(payment.id)).toBe(1000);
    expect((await readOrder(t, orderId)).order.status).toBe('refunded');
    expect(await stockOf(t, product.id)).toBe(40);
  });

  it('20 parallel refunds of all that remains (no amount): exactly one passes', async () => {
    const { payment } = await paidPayment();
    const responses = await Promise.all(Array.from({ length: 20 }, () => postRefund(t, payment.id, {}, t.admin.token)));
    expect(responses.filter((r) => r.statusCode === 201)).toHaveLength(1);
    expect(await refundLedger(t, payment.id)).toEqual({ rows: 1, amountRefunded: 1000 });
  });
});
