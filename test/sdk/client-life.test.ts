/**
 * An order's whole life through the typed client (`@order-service/client`, its source) over
 * `/trpc` on a listening service: draft -> confirmed -> paid -> shipped -> delivered -> completed,
 * each step by the role that may take it, and the refusals arriving as typed problems.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrderServiceClient, entityTag, isProblem, unchangedSince, type OrderServiceClient } from '../../client-sdk/src/index.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';

let t: TestApp;
let url: string;
let customer: TestUser;
let admin: OrderServiceClient;
let shopper: OrderServiceClient;

beforeAll(async () => {
  t = await createTestApp();
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  customer = await t.createUser('customer');
  admin = createOrderServiceClient({ url, token: t.admin.token });
  shopper = createOrderServiceClient({ url, token: customer.token });
});
afterAll(async () => {
  await t?.close();
});

async function problemSlug(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return 'no error';
  } catch (error) {
    return isProblem(error) ? error.problem.type : `not a problem: ${String(error)}`;
  }
}

describe('the whole life of an order through the typed client', () => {
  it('draft -> confirmed -> paid -> shipped -> delivered -> completed', async () => {
    const product = await admin.products.create.mutate({ sku: `LIFE-${Date.now()}`, name: 'Kettle', category: 'kitchen', price: 2500, stock: 5 });
    const draft = await shopper.orders.create.mutate({ items: [{ product_id: product.id, quantity: 2 }], address: '1 Main St' });
    expect(draft).toMatchObject({ status: 'draft', customer_id: customer.id, total: 5000 });

    const confirmed = await shopper.orders.confirm.mutate({ id: draft.id });
    expect(confirmed.status).toBe('confirmed');
    expect((await admin.products.get.query({ id: product.id })).stock).toBe(3);

    // A wrong amount is refused before any money moves.
    expect(await problemSlug(() => shopper.payments.create.mutate({ order_id: draft.id, amount: 1, method: 'card' }))).toBe('/problems/validation-error');
    const payment = await shopper.payments.create.mutate({ order_id: draft.id, amount: 5000, method: 'card' });
    expect(payment).toMatchObject({ order_id: draft.id, amount: 5000, currency: 'USD', method: 'card', status: 'captured' });
    expect((await shopper.orders.get.query({ id: draft.id })).status).toBe('paid');
    expect(await problemSlug(() => shopper.payments.create.mutate({ order_id: draft.id, amount: 5000, method: 'card' }))).toBe(
      '/problems/invalid-state-transition',
    );

    const requested = await admin.fulfillments.request.mutate({ id: draft.id });
    expect(requested).toMatchObject({ order_id: draft.id, status: 'requested' });
    const shipped = await admin.fulfillments.create.mutate({ id: draft.id, carrier: 'DHL', tracking_number: 'JD0123' });
    expect(shipped).toMatchObject({ order_id: draft.id, status: 'shipped', carrier: 'DHL', tracking_number: 'JD0123' });
    expect((await shopper.orders.get.query({ id: draft.id })).status).toBe('shipped');
    const listed = await shopper.fulfillments.list.query({ id: draft.id });
    expect(listed.data.map((f) => f.status)).toEqual(['shipped']);

    // Customers may not set delivered; the admin may, then completed.
    const current = await admin.orders.get.query({ id: draft.id });
    const { id, customer_id, items, address, discount_code, currency } = current;
    const body = { id, customer_id, items: items.map(({ product_id, quantity }) => ({ product_id, quantity })), address, discount_code, currency };
    expect(await problemSlug(() => shopper.orders.replace.mutate({ ...body, status: 'delivered' }))).toBe('/problems/forbidden');
    expect((await admin.orders.replace.mutate({ ...body, status: 'delivered' })).status).toBe('delivered');
    expect((await admin.orders.replace.mutate({ ...body, status: 'completed' })).status).toBe('completed');

    const payments = await shopper.payments.list.query({ order_id: draft.id });
    expect(payments.data.map((p) => p.id)).toEqual([payment.id]);
  });
});

describe('metadata patched through the typed client (docs/api.md#metadata)', () => {
  it('a product, the user themself and a payment take a merge patch or a JSON Patch; the payer may not annotate the payment', async () => {
    const product = await admin.products.create.mutate({ sku: `META-${Date.now()}`, name: 'Teapot', category: 'kitchen', price: 1500, stock: 5, metadata: { supplier: 'ACME' } });
    const patchedProduct = await admin.products.patch.mutate({ id: product.id, format: 'merge-patch', document: { metadata: { supplier: null, shelf: 'B2' } } });
    expect(patchedProduct.metadata).toEqual({ shelf: 'B2' });

    const me = await shopper.users.patch.mutate({ id: customer.id, format: 'json-patch', document: [{ op: 'add', path: '/metadata/crm_id', value: 'C-9' }] });
    expect(me.metadata).toMatchObject({ crm_id: 'C-9' });

    const draft = await shopper.orders.create.mutate({ items: [{ product_id: product.id, quantity: 1 }], address: '1 Main St' });
    await shopper.orders.confirm.mutate({ id: draft.id });
    const payment = await shopper.payments.create.mutate({ order_id: draft.id, amount: 1500, method: 'card' });
    expect(await problemSlug(() => shopper.payments.patch.mutate({ id: payment.id, format: 'merge-patch', document: { metadata: { note: 'mine' } } }))).toBe('/problems/forbidden');
    const annotated = await admin.payments.patch.mutate({ id: payment.id, format: 'merge-patch', document: { metadata: { erp_id: 'ERP-5' } } });
    expect(annotated).toMatchObject({ amount: 1500, metadata: { erp_id: 'ERP-5' } });
    expect(await problemSlug(() => admin.payments.patch.mutate({ id: payment.id, format: 'merge-patch', document: { metadata: { note: 'x'.repeat(501) } } }))).toBe('/problems/validation-error');
  });
});

/**
 * The client computes a read's ETag from the body (/trpc answers carry no headers): it must be the
 * tag REST sends for the same resource (docs/api.md#caching), or every If-Match the client sends
 * would be 412. A change to the service's tag that the client does not follow fails here.
 */
describe("the client's entityTag is the ETag a REST read sends", () => {
  it('for an order, a product and a user, and unchangedSince(tag) refuses a stale one with 412', async () => {
    const product = await admin.products.create.mutate({ sku: `TAG-${Date.now()}`, name: 'Tagged mug', category: 'kitchen', price: 900, stock: 5 });
    const order = await shopper.orders.create.mutate({ items: [{ product_id: product.id, quantity: 1 }], address: '1 Main St' });
    const read = async (path: string) => (await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${t.admin.token}` } })).headers.get('etag');
    expect(await entityTag(await admin.orders.get.query({ id: order.id }))).toBe(await read(`/api/v1/orders/${order.id}`));
    expect(await entityTag(await admin.products.get.query({ id: product.id }))).toBe(await read(`/api/v1/products/${product.id}`));
    expect(await entityTag(await admin.users.get.query({ id: customer.id }))).toBe(await read(`/api/v1/users/${customer.id}`));

    const tag = await entityTag(await shopper.orders.get.query({ id: order.id }));
    await shopper.orders.patch.mutate({ id: order.id, format: 'merge-patch', document: { address: '2 Tagged Ter' } }, unchangedSince(tag));
    expect(await problemSlug(() => shopper.orders.patch.mutate({ id: order.id, format: 'merge-patch', document: { address: '3 Lost Ln' } }, unchangedSince(tag)))).toBe(
      '/problems/precondition-failed',
    );
  });
});
