/**
 * Payments and fulfillments called directly, with no HTTP (server/testing.ts): the whole life of
 * an order through `createCaller`, and the main rules of docs/api.md#resources, #order-states and #authentication-and-authorization as a caller
 * sees them. Failures arrive as a TRPCError whose `cause` is the DomainError naming the problem.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payments } from '../../server/modules/payments/payments.table.ts';
import { createTestHarness, type TestCaller, type TestHarness } from '../../server/testing.ts';
import { createTestDatabase, onPostgres } from '../helpers/db.ts';
import { ownLinks, type OrderBody } from '../helpers/orders.ts';
import { expectDomainError } from '../helpers/problems.ts';
import { productInput } from '../helpers/products.ts';

let harness: TestHarness;
let admin: TestCaller;
let warehouse: TestCaller;
let alice: { id: number; caller: TestCaller };
let bob: { id: number; caller: TestCaller };

beforeAll(async () => {
  // On the postgres project the harness runs on that server's per-file database.
  harness = await createTestHarness(onPostgres ? { database: await createTestDatabase() } : {});
  admin = harness.caller({ role: 'admin' });
  warehouse = harness.caller({ role: 'service', scopes: ['fulfillments:write', 'orders:read'] });
  const a = await harness.createUser({ name: 'Alice' });
  const b = await harness.createUser({ name: 'Bob' });
  alice = { id: a.user.id, caller: a.caller };
  bob = { id: b.user.id, caller: b.caller };
});
afterAll(async () => {
  await harness?.close();
});

/** A confirmed order of alice's: 3 units at 1250. */
async function confirmedOrder(): Promise<OrderBody> {
  const product = await admin.products.create(productInput({ price: 1250, stock: 100 }));
  const draft = await alice.caller.orders.create({ items: [{ product_id: product.id, quantity: 3 }], address: '1 Caller Ct' });
  return alice.caller.orders.confirm({ id: draft.id });
}

describe('the whole life of an order through createCaller: draft -> confirmed -> paid -> shipped -> delivered -> completed', () => {
  it('each procedure moves it one step; the links follow', async () => {
    const confirmed = await confirmedOrder();
    expect(confirmed.total).toBe(3750);
    expect(Object.keys(ownLinks(confirmed._links)).sort()).toEqual(['cancel', 'pay', 'self']);

    const payment = await alice.caller.payments.create({ order_id: confirmed.id, amount: 3750, method: 'card' });
    expect(payment).toMatchObject({ order_id: confirmed.id, amount: 3750, currency: 'USD', method: 'card', status: 'captured' });
    expect(await alice.caller.payments.get({ id: payment.id })).toEqual(payment);
    expect((await alice.caller.payments.list({ order_id: confirmed.id })).data).toEqual([payment]);
    const paid = await alice.caller.orders.get({ id: confirmed.id });
    expect(paid.status).toBe('paid');
    expect(Object.keys(ownLinks(paid._links)).sort()).toEqual(['cancel', 'fulfillments', 'self', 'send-to-fulfillment']);

    const requested = await warehouse.fulfillments.request({ id: confirmed.id });
    expect(requested).toMatchObject({ order_id: confirmed.id, status: 'requested', carrier: null });
    const shipped = await warehouse.fulfillments.create({ id: confirmed.id, carrier: 'UPS', tracking_number: '1Z1' });
    expect(shipped).toMatchObject({ id: requested.id, status: 'shipped', carrier: 'UPS', tracking_number: '1Z1' });
    expect(await alice.caller.fulfillments.get({ id: confirmed.id, fulfillmentId: shipped.id })).toEqual(shipped);
    expect((await alice.caller.fulfillments.list({ id: confirmed.id })).data).toEqual([shipped]);
    expect((await alice.caller.orders.get({ id: confirmed.id })).status).toBe('shipped');

    const current = await admin.orders.get({ id: confirmed.id });
    const delivered = await admin.orders.patch({ id: confirmed.id, format: 'merge-patch', document: { status: 'delivered' } });
    expect(delivered.status).toBe('delivered');
    expect(delivered.updated_at >= current.updated_at).toBe(true);
    const completed = await admin.orders.replace({ ...delivered, status: 'completed' });
    expect(completed.status).toBe('completed');
    expect(Object.keys(ownLinks(completed._links)).sort()).toEqual(['fulfillments', 'self']);
  });
});

describe('a zero-total order is paid with amount 0 like any other (docs/api.md#payments, issue 21 item 4)', () => {
  it('a free order confirms, pays with amount 0 and is fulfilled', async () => {
    const free = await admin.products.create(productInput({ price: 0, stock: 100 }));
    const draft = await alice.caller.orders.create({ items: [{ product_id: free.id, quantity: 3 }], address: '1 Caller Ct' });
    const confirmed = await alice.caller.orders.confirm({ id: draft.id });
    expect(confirmed.total).toBe(0);

    const payment = await alice.caller.payments.create({ order_id: confirmed.id, amount: 0, method: 'wallet' });
    expect(payment).toMatchObject({ order_id: confirmed.id, amount: 0, status: 'captured' });
    expect((await alice.caller.orders.get({ id: confirmed.id })).status).toBe('paid');
    await warehouse.fulfillments.request({ id: confirmed.id });
    await warehouse.fulfillments.create({ id: confirmed.id, carrier: 'UPS', tracking_number: '1Z0' });
    expect((await alice.caller.orders.get({ id: confirmed.id })).status).toBe('shipped');
  });

  it('amount 0 for an order that is not free is UNPROCESSABLE_CONTENT naming amount', async () => {
    const order = await confirmedOrder();
    const error = await expectDomainError(alice.caller.payments.create({ order_id: order.id, amount: 0, method: 'card' }), 'UNPROCESSABLE_CONTENT', 'validation-error');
    expect(error.errors?.map((e) => e.field)).toEqual(['amount']);
    expect((await alice.caller.orders.get({ id: order.id })).status).toBe('confirmed');
  });
});

describe('payments.create: the rules of docs/api.md#payments as a caller sees them', () => {
  it('a wrong amount is UNPROCESSABLE_CONTENT naming amount; nothing is paid', async () => {
    const order = await confirmedOrder();
    const error = await expectDomainError(alice.caller.payments.create({ order_id: order.id, amount: 1, method: 'card' }), 'UNPROCESSABLE_CONTENT', 'validation-error');
    expect(error.errors?.map((e) => e.field)).toEqual(['amount']);
    expect((await alice.caller.orders.get({ id: order.id })).status).toBe('confirmed');
  });

  it('a second payment is CONFLICT invalid-state-transition; one payment row stays', async () => {
    const order = await confirmedOrder();
    await alice.caller.payments.create({ order_id: order.id, amount: order.total, method: 'card' });
    await expectDomainError(admin.payments.create({ order_id: order.id, amount: order.total, method: 'wallet' }), 'CONFLICT', 'invalid-state-transition');
    expect(await harness.db.select({ id: payments.id }).from(payments).where(eq(payments.orderId, order.id))).toHaveLength(1);
  });

  it('bob paying or reading alice’s is NOT_FOUND', async () => {
    const order = await confirmedOrder();
    await expectDomainError(bob.caller.payments.create({ order_id: order.id, amount: order.total, method: 'card' }), 'NOT_FOUND', 'not-found');
    const payment = await alice.caller.payments.create({ order_id: order.id, amount: order.total, method: 'card' });
    await expectDomainError(bob.caller.payments.get({ id: payment.id }), 'NOT_FOUND', 'not-found');
    expect((await bob.caller.payments.list({})).data).toEqual([]);
  });
});

describe('fulfillments: admins and services with fulfillments:write act; customers read their own', () => {
  it('a customer may not send to fulfillment or ship: FORBIDDEN', async () => {
    const order = await confirmedOrder();
    await alice.caller.payments.create({ order_id: order.id, amount: order.total, method: 'card' });
    await expectDomainError(alice.caller.fulfillments.request({ id: order.id }), 'FORBIDDEN', 'forbidden');
    await expectDomainError(alice.caller.fulfillments.create({ id: order.id, carrier: 'UPS', tracking_number: '1' }), 'FORBIDDEN', 'forbidden');
  });

  it('an unpaid order is CONFLICT; bob reading alice’s fulfillments is NOT_FOUND', async () => {
    const order = await confirmedOrder();
    await expectDomainError(admin.fulfillments.request({ id: order.id }), 'CONFLICT', 'invalid-state-transition');
    await expectDomainError(bob.caller.fulfillments.list({ id: order.id }), 'NOT_FOUND', 'not-found');
  });
});

describe('refunds through createCaller (docs/api.md#refunds)', () => {
  it('a partial then a full refund: amount_refunded follows, the order becomes refunded; the owner lists them', async () => {
    const order = await confirmedOrder();
    const payment = await alice.caller.payments.create({ order_id: order.id, amount: order.total, method: 'card' });
    const cashier = harness.caller({ role: 'service', scopes: ['payments:write'] });
    const part = await cashier.refunds.create({ id: payment.id, amount: 1000, reason: 'duplicate' });
    expect(part).toMatchObject({ payment_id: payment.id, amount: 1000, currency: 'USD', reason: 'duplicate' });
    expect((await alice.caller.payments.get({ id: payment.id })).amount_refunded).toBe(1000);
    const rest = await admin.refunds.create({ id: payment.id });
    expect(rest.amount).toBe(order.total - 1000);
    expect((await alice.caller.orders.get({ id: order.id })).status).toBe('refunded');
    expect((await alice.caller.refunds.list({ id: payment.id })).data).toEqual([rest, part]);
    expect(await alice.caller.refunds.get({ id: payment.id, refundId: part.id })).toEqual(part);
  });

  it('more than remains is UNPROCESSABLE_CONTENT refund-exceeds-payment; a customer refunding is FORBIDDEN; bob reading is NOT_FOUND', async () => {
    const order = await confirmedOrder();
    const payment = await alice.caller.payments.create({ order_id: order.id, amount: order.total, method: 'card' });
    await expectDomainError(admin.refunds.create({ id: payment.id, amount: order.total + 1 }), 'UNPROCESSABLE_CONTENT', 'refund-exceeds-payment');
    await expectDomainError(alice.caller.refunds.create({ id: payment.id, amount: 1 }), 'FORBIDDEN', 'forbidden');
    await expectDomainError(bob.caller.refunds.list({ id: payment.id }), 'NOT_FOUND', 'not-found');
    expect((await alice.caller.payments.get({ id: payment.id })).amount_refunded).toBe(0);
  });

  it('the owner cancels a paid order: cancelled, refunded in full', async () => {
    const order = await confirmedOrder();
    const payment = await alice.caller.payments.create({ order_id: order.id, amount: order.total, method: 'card' });
    expect((await alice.caller.orders.cancel({ id: order.id })).status).toBe('cancelled');
    expect((await alice.caller.payments.get({ id: payment.id })).amount_refunded).toBe(order.total);
  });
});

describe('payments.patch: its metadata only, by admins and service clients with payments:write (docs/api.md#payments)', () => {
  it('merges the metadata; another member is UNPROCESSABLE_CONTENT naming it; the payer is FORBIDDEN; a stale If-Match changes nothing', async () => {
    const order = await confirmedOrder();
    const payment = await alice.caller.payments.create({ order_id: order.id, amount: 3750, method: 'card', metadata: { psp_ref: 'PSP-1' } });
    const service = harness.caller({ role: 'service', scopes: ['payments:write'] });
    const patched = await service.payments.patch({ id: payment.id, format: 'merge-patch', document: { metadata: { erp_id: 'ERP-1', psp_ref: null } } });
    expect(patched).toMatchObject({ amount: 3750, metadata: { erp_id: 'ERP-1' } });
    expect(Object.keys(patched.metadata)).toEqual(['erp_id']);
    const refused = await expectDomainError(
      admin.payments.patch({ id: payment.id, format: 'json-patch', document: [{ op: 'replace', path: '/amount', value: 1 }] }),
      'UNPROCESSABLE_CONTENT',
      'validation-error',
    );
    expect(refused.errors?.map((e) => e.field)).toEqual(['amount']);
    await expectDomainError(alice.caller.payments.patch({ id: payment.id, format: 'merge-patch', document: { metadata: { a: 'b' } } }), 'FORBIDDEN', 'forbidden');
    const stale = harness.caller({ role: 'admin' }, { preconditions: { ifMatch: ['"stale"'] } }).payments.patch({ id: payment.id, format: 'merge-patch', document: { metadata: {} } });
    await expectDomainError(stale, 'PRECONDITION_FAILED', 'precondition-failed');
    expect(await admin.payments.get({ id: payment.id })).toEqual(patched);
  });
});
