/**
 * The orders procedures called directly, with no HTTP (server/testing.ts): the main rules of
 * docs/api.md#order-states, #writes and #authentication-and-authorization as a caller sees them. Failures arrive as a TRPCError whose
 * `cause` is the DomainError naming the problem.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payments } from '../../server/modules/payments/payments.table.ts';
import { products } from '../../server/modules/products/products.table.ts';
import { entityTag } from '../../server/lib/etag.ts';
import { createTestHarness, type TestCaller, type TestHarness } from '../../server/testing.ts';
import { createTestDatabase, onPostgres } from '../helpers/db.ts';
import { ownLinks, type OrderBody, type OrderInputBody } from '../helpers/orders.ts';
import { expectDomainError } from '../helpers/problems.ts';
import { productInput } from '../helpers/products.ts';

let harness: TestHarness;
let admin: TestCaller;
let alice: { id: number; caller: TestCaller };
let bob: { id: number; caller: TestCaller };

beforeAll(async () => {
  // On the postgres project the harness runs on that server's per-file database.
  harness = await createTestHarness(onPostgres ? { database: await createTestDatabase() } : {});
  admin = harness.caller({ role: 'admin' });
  const a = await harness.createUser({ name: 'Alice' });
  const b = await harness.createUser({ name: 'Bob' });
  alice = { id: a.user.id, caller: a.caller };
  bob = { id: b.user.id, caller: b.caller };
});
afterAll(async () => {
  await harness?.close();
});

/** A product with `stock` units at 1000 (minor units) each. */
const newProduct = async (stock = 100) => admin.products.create(productInput({ price: 1000, stock }));

async function stockOf(productId: number): Promise<number> {
  const [row] = await harness.db.select({ stock: products.stock }).from(products).where(eq(products.id, productId));
  if (!row) throw new Error(`product ${productId} not found`);
  return row.stock;
}

/** A draft of alice's with `quantity` of a fresh product and an address: ready to confirm. */
async function draft(quantity = 2, stock = 100): Promise<{ order: OrderBody; productId: number }> {
  const product = await newProduct(stock);
  const input: OrderInputBody = { items: [{ product_id: product.id, quantity }], address: '1 Caller Ct' };
  return { order: await alice.caller.orders.create(input), productId: product.id };
}

/** A caller acting as alice whose calls carry `If-Match: tags`. */
const aliceIfMatch = (...tags: string[]) => harness.caller({ role: 'customer', userId: alice.id, name: 'Alice' }, { preconditions: { ifMatch: tags } });

describe('orders.create makes a draft (docs/api.md#order-states)', () => {
  it('a customer creates a draft for themself, priced from the products', async () => {
    const { order, productId } = await draft(3);
    expect(order).toMatchObject({ customer_id: alice.id, status: 'draft', address: '1 Caller Ct', currency: 'USD', total: 3000 });
    expect(order.items).toEqual([{ product_id: productId, quantity: 3, unit_price: 1000, line_total: 3000 }]);
    expect(Object.keys(ownLinks(order._links)).sort()).toEqual(['cancel', 'confirm', 'self']);
  });

  it('status CREATED (the alias of draft) is accepted; any other status is refused', async () => {
    expect((await alice.caller.orders.create({ items: [], status: 'CREATED' })).status).toBe('draft');
    await expectDomainError(alice.caller.orders.create({ items: [], status: 'confirmed' }), 'UNPROCESSABLE_CONTENT', 'validation-error');
  });

  it('a customer may not create an order for another customer', async () => {
    await expectDomainError(alice.caller.orders.create({ customer_id: bob.id, items: [] }), 'FORBIDDEN', 'forbidden');
  });

  it('an admin names the customer', async () => {
    expect((await admin.orders.create({ customer_id: bob.id, items: [] })).customer_id).toBe(bob.id);
  });

  it('an anonymous caller is UNAUTHORIZED', async () => {
    await expectDomainError(harness.caller(null).orders.create({ items: [] }), 'UNAUTHORIZED', 'unauthorized');
  });
});

describe('a customer sees only their own orders (another one is 404)', () => {
  it('alice reads her order; bob gets NOT_FOUND for it, as for a missing one', async () => {
    const { order } = await draft();
    expect(await alice.caller.orders.get({ id: order.id })).toEqual(order);
    await expectDomainError(bob.caller.orders.get({ id: order.id }), 'NOT_FOUND', 'not-found');
    await expectDomainError(bob.caller.orders.get({ id: 2_000_000_000 }), 'NOT_FOUND', 'not-found');
  });

  it("bob's writes to alice's order are NOT_FOUND and change nothing", async () => {
    const { order } = await draft();
    await expectDomainError(bob.caller.orders.confirm({ id: order.id }), 'NOT_FOUND', 'not-found');
    await expectDomainError(bob.caller.orders.cancel({ id: order.id }), 'NOT_FOUND', 'not-found');
    await expectDomainError(bob.caller.orders.patch({ id: order.id, format: 'merge-patch', document: { address: 'x' } }), 'NOT_FOUND', 'not-found');
    await expectDomainError(bob.caller.orders.delete({ id: order.id }), 'NOT_FOUND', 'not-found');
    expect(await alice.caller.orders.get({ id: order.id })).toEqual(order);
  });

  it("a customer's list holds only their orders; an admin's holds everyone's", async () => {
    const { order: mine } = await draft();
    const theirs = await bob.caller.orders.create({ items: [] });
    const aliceIds = (await alice.caller.orders.list({ limit: 100 })).data.map((o) => o.id);
    expect(aliceIds).toContain(mine.id);
    expect(aliceIds).not.toContain(theirs.id);
    const adminIds = (await admin.orders.list({ limit: 100 })).data.map((o) => o.id);
    expect(adminIds).toEqual(expect.arrayContaining([mine.id, theirs.id]));
  });
});

describe('confirm reserves stock; cancel releases it', () => {
  it('confirm moves a draft to confirmed and takes the quantities from stock', async () => {
    const { order, productId } = await draft(4, 10);
    const confirmed = await alice.caller.orders.confirm({ id: order.id });
    expect(confirmed.status).toBe('confirmed');
    expect(Object.keys(ownLinks(confirmed._links)).sort()).toEqual(['cancel', 'pay', 'self']);
    expect(await stockOf(productId)).toBe(6);
  });

  it('cancel of a confirmed order gives the stock back', async () => {
    const { order, productId } = await draft(4, 10);
    await alice.caller.orders.confirm({ id: order.id });
    expect((await alice.caller.orders.cancel({ id: order.id })).status).toBe('cancelled');
    expect(await stockOf(productId)).toBe(10);
  });

  it('cancel of a draft reserves and releases nothing', async () => {
    const { order, productId } = await draft(4, 10);
    expect((await alice.caller.orders.cancel({ id: order.id })).status).toBe('cancelled');
    expect(await stockOf(productId)).toBe(10);
  });

  it('confirm beyond the stock is CONFLICT insufficient-stock, and nothing is reserved', async () => {
    const { order, productId } = await draft(11, 10);
    await expectDomainError(alice.caller.orders.confirm({ id: order.id }), 'CONFLICT', 'insufficient-stock');
    expect(await stockOf(productId)).toBe(10);
    expect((await alice.caller.orders.get({ id: order.id })).status).toBe('draft');
  });

  it('confirm without an address is UNPROCESSABLE_CONTENT naming address', async () => {
    const product = await newProduct();
    const order = await alice.caller.orders.create({ items: [{ product_id: product.id, quantity: 1 }] });
    const error = await expectDomainError(alice.caller.orders.confirm({ id: order.id }), 'UNPROCESSABLE_CONTENT', 'validation-error');
    expect(error.errors?.map((e) => e.field)).toContain('address');
  });
});

describe('moves outside the state table are CONFLICT invalid-state-transition listing `allowed`', () => {
  it('confirming a cancelled order: nothing is allowed from cancelled', async () => {
    const { order } = await draft();
    await alice.caller.orders.cancel({ id: order.id });
    const error = await expectDomainError(alice.caller.orders.confirm({ id: order.id }), 'CONFLICT', 'invalid-state-transition');
    expect(error.extensions).toMatchObject({ allowed: [] });
  });

  it('status=paid by a patch is refused: only a payment pays; allowed names cancelled', async () => {
    const { order } = await draft();
    await alice.caller.orders.confirm({ id: order.id });
    const patch = admin.orders.patch({ id: order.id, format: 'merge-patch', document: { status: 'paid' } });
    const error = await expectDomainError(patch, 'CONFLICT', 'invalid-state-transition');
    expect(error.extensions).toMatchObject({ allowed: ['cancelled'] });
  });

  it('setting the status an order already has changes nothing', async () => {
    const { order } = await draft();
    const same = await alice.caller.orders.patch({ id: order.id, format: 'merge-patch', document: { status: 'DRAFT' } });
    expect(same).toEqual(order);
  });

  it('items change only in draft (CONFLICT once confirmed)', async () => {
    const { order, productId } = await draft();
    await alice.caller.orders.confirm({ id: order.id });
    const patch = alice.caller.orders.patch({ id: order.id, format: 'merge-patch', document: { items: [{ product_id: productId, quantity: 1 }] } });
    await expectDomainError(patch, 'CONFLICT', 'conflict');
  });
});

describe('If-Match through the caller context (preconditions)', () => {
  it('a write with the current tag succeeds; with a stale one it is PRECONDITION_FAILED and changes nothing', async () => {
    const { order } = await draft();
    const patched = await aliceIfMatch(entityTag(order)).orders.patch({ id: order.id, format: 'merge-patch', document: { address: '2 Tagged Ter' } });
    expect(patched.address).toBe('2 Tagged Ter');
    const stale = aliceIfMatch(entityTag(order)).orders.patch({ id: order.id, format: 'merge-patch', document: { address: '3 Lost Ln' } });
    await expectDomainError(stale, 'PRECONDITION_FAILED', 'precondition-failed');
    expect((await alice.caller.orders.get({ id: order.id })).address).toBe('2 Tagged Ter');
  });

  it('confirm, cancel and delete honour it too', async () => {
    const { order } = await draft();
    await expectDomainError(aliceIfMatch('"stale"').orders.confirm({ id: order.id }), 'PRECONDITION_FAILED', 'precondition-failed');
    await expectDomainError(aliceIfMatch('"stale"').orders.cancel({ id: order.id }), 'PRECONDITION_FAILED', 'precondition-failed');
    await expectDomainError(aliceIfMatch('"stale"').orders.delete({ id: order.id }), 'PRECONDITION_FAILED', 'precondition-failed');
    expect(await aliceIfMatch('*').orders.confirm({ id: order.id })).toMatchObject({ status: 'confirmed' });
  });
});

describe('delete: an order without a payment goes (stock released); one with a payment stays', () => {
  it('deleting a confirmed order releases its stock; a second delete is NOT_FOUND', async () => {
    const { order, productId } = await draft(3, 10);
    await alice.caller.orders.confirm({ id: order.id });
    await alice.caller.orders.delete({ id: order.id });
    expect(await stockOf(productId)).toBe(10);
    await expectDomainError(alice.caller.orders.delete({ id: order.id }), 'NOT_FOUND', 'not-found');
  });

  it('an order with a payment is CONFLICT order-has-payment', async () => {
    const { order } = await draft();
    await alice.caller.orders.confirm({ id: order.id });
    await harness.db.insert(payments).values({ orderId: order.id, amount: order.total, currency: 'USD', method: 'card' });
    await expectDomainError(admin.orders.delete({ id: order.id }), 'CONFLICT', 'order-has-payment');
  });
});

/** Regression (issue 36 item 1): json-merge-patch wrote nothing at an object holding `constructor`, `prototype` or `__proto__`. */
describe('metadata keys named like JavaScript built-ins are stored by a patch as by create (docs/api.md#metadata)', () => {
  it('a merge patch stores constructor and prototype with the other keys; a JSON Patch adds one', async () => {
    const { order } = await draft();
    const merged = await alice.caller.orders.patch({ id: order.id, format: 'merge-patch', document: { metadata: { constructor: 'c', prototype: 'p', other: 'o' } } });
    expect(merged.metadata).toEqual({ constructor: 'c', prototype: 'p', other: 'o' });
    const added = await alice.caller.orders.patch({ id: order.id, format: 'json-patch', document: [{ op: 'remove', path: '/metadata/constructor' }, { op: 'add', path: '/metadata/prototype', value: 'p2' }] });
    expect((await alice.caller.orders.get({ id: order.id })).metadata).toEqual(added.metadata);
    expect(added.metadata).toEqual({ prototype: 'p2', other: 'o' });
  });

  it('a __proto__ key is dropped as /trpc drops it on create; the other keys are stored', async () => {
    const { order } = await draft();
    const document = JSON.parse('{"metadata":{"__proto__":"x","other":"o"}}') as { metadata: Record<string, string> };
    const created = await alice.caller.orders.create({ items: order.items.map(({ product_id, quantity }) => ({ product_id, quantity })), metadata: document.metadata });
    expect(created.metadata).toEqual({ other: 'o' });
    const patched = await alice.caller.orders.patch({ id: order.id, format: 'merge-patch', document });
    expect(patched.metadata).toEqual({ other: 'o' });
    expect(Object.hasOwn(patched.metadata, '__proto__')).toBe(false);
  });
});
