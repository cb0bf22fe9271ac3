/**
 * Orders over HTTP, one describe per rule of docs/api.md#resources, #order-states, #writes, #reads-lists-and-caching and #errors (Order, states, writes, reads
 * and caching, errors). PATCH documents are pinned in orders-patch.test.ts, the state table pair
 * by pair in orders-state-machine.test.ts, concurrency in orders-concurrency.test.ts, and random
 * patches in orders-fuzz.test.ts.
 */
import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { users } from '../../server/db/schema.ts';
import { ORDER_STATUSES, orders } from '../../server/modules/orders/orders.table.ts';
import { products } from '../../server/modules/products/products.table.ts';
import { type TestUser, useTestApp } from '../helpers/app.ts';
import {
  createOrderScene,
  draftOrder as draftOrderIn,
  expectOrderUnchanged,
  JSON_PATCH,
  MERGE_PATCH as MERGE,
  orderAction,
  advanceOrder,
  ORDERS,
  patchOrder,
  putOrder,
  readOrder,
  stockOf as storedStock,
  type OrderBody,
  type OrderInputBody,
  type DraftOptions,
  type OrderListBody,
  type OrderScene,
  type OrderStatus as Status,
  ownLinks,
} from '../helpers/orders.ts';
import { expectProblem } from '../helpers/problems.ts';
import { createProduct, productInput, writableProduct, type ProductBody, type ProductInputBody } from '../helpers/products.ts';

const PRIVATE = 'private, max-age=0, must-revalidate';

let scene: OrderScene;
let alice: TestUser;
let bob: TestUser;
let shirt: ProductBody;
let mug: ProductBody;

const t = useTestApp();
beforeAll(async () => {
  scene = await createOrderScene(t);
  ({ alice, bob, shirt, mug } = scene);
});

// ---------------------------------------------------------------- the kit (test/helpers/orders.ts), bound to this app

const newProduct = (overrides: Partial<ProductInputBody> = {}): Promise<ProductBody> => createProduct(t, overrides);
const stockOf = (productId: number): Promise<number> => storedStock(t, productId);
const read = (id: number, token = t.admin.token) => readOrder(t, id, token);
const patch = (id: number, doc: unknown, token: string, headers: Record<string, string> = MERGE) => patchOrder(t, id, doc, token, headers);
const put = (id: number, doc: unknown, token: string, headers: Record<string, string> = {}) => putOrder(t, id, doc, token, headers);
const action = (id: number, name: 'confirm' | 'cancel', token: string, headers: Record<string, string> = {}) => orderAction(t, id, name, token, headers);

/** POST /orders with any body: many tests here send invalid ones on purpose. */
function postOrder(body: object, token: string): Promise<LightMyRequestResponse> {
  return t.request({ method: 'POST', url: ORDERS, payload: body, token });
}

function list(query: string, token: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.request({ method: 'GET', url: `${ORDERS}${query}`, headers, token });
}

const draftOrder = (options: DraftOptions = {}): Promise<OrderBody> => draftOrderIn(t, scene, options);

/** An order in `status`: the draft of `draftOrder`, moved on by the kit's `advanceOrder`. */
async function makeOrder(status: Status, options: DraftOptions = {}): Promise<OrderBody> {
  return advanceOrder(t, await draftOrder(options), status, options.owner ?? alice);
}

const expectUnchanged = (before: { order: OrderBody; etag: string }): Promise<void> => expectOrderUnchanged(t, before);

// ---------------------------------------------------------------- create

describe('POST /orders always creates a draft order', () => {
  it('answers 201 with Location, the draft order and its links', async () => {
    const res = await postOrder({ items: [{ product_id: shirt.id, quantity: 2 }], address: '1 Main St' }, alice.token);
    expect(res.statusCode).toBe(201);
    const order = res.json<OrderBody>();
    expect(res.headers.location).toBe(`${ORDERS}/${order.id}`);
    expect(order).toMatchObject({ customer_id: alice.id, status: 'draft', address: '1 Main St', discount_code: null, currency: 'USD' });
    expect(ownLinks(order._links)).toEqual({
      self: { href: `${ORDERS}/${order.id}`, method: 'GET' },
      confirm: { href: `${ORDERS}/${order.id}/confirm`, method: 'POST' },
      cancel: { href: `${ORDERS}/${order.id}/cancel`, method: 'POST' },
    });
    const read = await t.request({ method: 'GET', url: res.headers.location as string, token: alice.token });
    expect(read.json()).toEqual(order);
  });

  it('captures unit_price from the product price; line_total = unit_price * quantity; total = sum of line_total', async () => {
    const order = await draftOrder({
      items: [
        { product_id: shirt.id, quantity: 3 },
        { product_id: mug.id, quantity: 2 },
      ],
    });
    expect(order.items).toEqual([
      { product_id: shirt.id, quantity: 3, unit_price: 1999, line_total: 5997 },
      { product_id: mug.id, quantity: 2, unit_price: 550, line_total: 1100 },
    ]);
    expect(order.total).toBe(7097);
  });

  it('keeps the price an item had when it was set after the product price changes', async () => {
    const product = await newProduct({ price: 700, stock: 100 });
    const order = await draftOrder({ items: [{ product_id: product.id, quantity: 1 }] });
    await t.db.update(products).set({ price: 900 }).where(eq(products.id, product.id));
    const { order: later } = await read(order.id);
    expect(later.items[0]).toMatchObject({ unit_price: 700, line_total: 700 });
    expect(later.total).toBe(700);
  });

  it('a customer who omits customer_id orders for themself', async () => {
    const order = await draftOrder({ owner: bob });
    expect(order.customer_id).toBe(bob.id);
  });

  it('a customer may name themself as customer_id', async () => {
    const res = await postOrder({ customer_id: alice.id, items: [] }, alice.token);
    expect(res.statusCode).toBe(201);
    expect(res.json<OrderBody>().customer_id).toBe(alice.id);
  });

  it('a customer naming another customer_id is 403', async () => {
    const res = await postOrder({ customer_id: bob.id, items: [{ product_id: shirt.id, quantity: 1 }] }, alice.token);
    expectProblem(res, 403, 'forbidden');
  });

  it('an admin creates an order for the customer it names', async () => {
    const res = await postOrder({ customer_id: bob.id, items: [{ product_id: mug.id, quantity: 1 }] }, t.admin.token);
    expect(res.statusCode).toBe(201);
    expect(res.json<OrderBody>().customer_id).toBe(bob.id);
  });

  it('an admin without customer_id is 422 naming customer_id', async () => {
    expectProblem(await postOrder({ items: [] }, t.admin.token), 422, 'validation-error', { fields: ['customer_id'] });
  });

  it('an admin naming a user that does not exist is 422 naming customer_id', async () => {
    expectProblem(await postOrder({ customer_id: 2_000_000_000, items: [] }, t.admin.token), 422, 'validation-error', { fields: ['customer_id'] });
  });

  it('an unknown product is 422 naming items.N.product_id', async () => {
    const res = await postOrder(
      {
        items: [
          { product_id: shirt.id, quantity: 1 },
          { product_id: 999_999, quantity: 1 },
        ],
      },
      alice.token,
    );
    const problem = expectProblem(res, 422, 'validation-error', { fields: ['items.1.product_id'] });
    expect(problem.errors?.map((e) => e.field)).not.toContain('items.0.product_id');
  });

  it('an archived product is 422 naming items.N.product_id', async () => {
    const product = await newProduct();
    expect((await t.request({ method: 'DELETE', url: `/api/v1/products/${product.id}`, token: t.admin.token })).statusCode).toBe(204);
    const res = await postOrder({ items: [{ product_id: product.id, quantity: 1 }] }, alice.token);
    expectProblem(res, 422, 'validation-error', { fields: ['items.0.product_id'] });
  });

  it.each([0, -1, 10_001, 1.5])('quantity %s is 422 naming items.0.quantity', async (quantity) => {
    const res = await postOrder({ items: [{ product_id: shirt.id, quantity }] }, alice.token);
    expectProblem(res, 422, 'validation-error', { fields: ['items.0.quantity'] });
  });

  it.each([1, 10_000])('quantity %s is accepted', async (quantity) => {
    const res = await postOrder({ items: [{ product_id: shirt.id, quantity }] }, alice.token);
    expect(res.statusCode).toBe(201);
    expect(res.json<OrderBody>().items[0]?.quantity).toBe(quantity);
  });

  it('an item without product_id or quantity is 422 naming the field', async () => {
    const res = await postOrder({ items: [{ quantity: 1 }, { product_id: shirt.id }] }, alice.token);
    expectProblem(res, 422, 'validation-error', { fields: ['items.0.product_id', 'items.1.quantity'] });
  });

  it('items are required', async () => {
    expectProblem(await postOrder({ address: 'x' }, alice.token), 422, 'validation-error', { fields: ['items'] });
  });

  it.each(['confirmed', 'paid', 'CANCELLED', 'bogus'])('status %s in the body is 422 naming status', async (status) => {
    const res = await postOrder({ status, items: [] }, alice.token);
    expectProblem(res, 422, 'validation-error', { fields: ['status'] });
  });

  it.each(['draft', 'DRAFT', 'CREATED'])('status %s in the body is accepted and answered as draft', async (status) => {
    const res = await postOrder({ status, items: [] }, alice.token);
    expect(res.statusCode).toBe(201);
    expect(res.json<OrderBody>().status).toBe('draft');
  });

  it('an unknown field is 422 naming it, at the top level and inside an item', async () => {
    const res = await postOrder({ items: [{ product_id: shirt.id, quantity: 1, colour: 'red' }], note: 'hi' }, alice.token);
    expectProblem(res, 422, 'validation-error', { fields: ['note', 'items.0.colour'] });
  });

  it('a discount_code of 3-32 characters of A-Z0-9_- is recorded as given', async () => {
    const order = await draftOrder({ discount_code: 'SPRING_2026-X' });
    expect(order.discount_code).toBe('SPRING_2026-X');
    expect(order.total).toBe(1999 * 2 + 550);
  });

  it.each(['AB', 'spring', 'SPRING SALE', 'A'.repeat(33), 'ÄPFEL'])('discount_code %j is 422 naming discount_code', async (code) => {
    const res = await postOrder({ items: [], discount_code: code }, alice.token);
    expectProblem(res, 422, 'validation-error', { fields: ['discount_code'] });
  });

  it('an address over 500 characters is 422 naming address', async () => {
    expectProblem(await postOrder({ items: [], address: 'x'.repeat(501) }, alice.token), 422, 'validation-error', { fields: ['address'] });
  });

  it('a body that is not a JSON object is 422, malformed JSON is 400', async () => {
    expectProblem(await t.request({ method: 'POST', url: ORDERS, payload: [], token: alice.token }), 422, 'validation-error');
    const res = await t.request({ method: 'POST', url: ORDERS, headers: { 'content-type': 'application/json' }, payload: '{"items": [', token: alice.token });
    expectProblem(res, 400, 'malformed-request');
  });

  it('without a token is 401', async () => {
    expectProblem(await t.request({ method: 'POST', url: ORDERS, payload: { items: [] } }), 401, 'unauthorized');
  });
});

describe("An order's lines are priced in the order's currency", () => {
  it('a new order in another currency than its products is 422 naming the item', async () => {
    const res = await postOrder({ currency: 'EUR', items: [{ product_id: shirt.id, quantity: 1 }] }, alice.token);
    expectProblem(res, 422, 'validation-error', { fields: ['items.0.product_id'] });
  });

  it('an empty draft may change its currency', async () => {
    const order = await draftOrder({ items: [] });
    const res = await patch(order.id, { currency: 'EUR' }, alice.token);
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>()).toMatchObject({ currency: 'EUR', total: 0 });
  });

  it('changing the currency of a draft with USD-priced lines is 422 naming them, and changes nothing', async () => {
    const order = await draftOrder();
    const before = await read(order.id);
    expectProblem(await patch(order.id, { currency: 'EUR' }, alice.token), 422, 'validation-error', { fields: ['items.0.product_id', 'items.1.product_id'] });
    await expectUnchanged(before);
  });
});

// ---------------------------------------------------------------- read

describe('GET /orders/{id}: customers see their own orders, admins all', () => {
  it('the owner reads the order', async () => {
    const order = await draftOrder();
    const res = await t.request({ method: 'GET', url: `${ORDERS}/${order.id}`, token: alice.token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(order);
  });

  it("another customer's order is 404, never 403", async () => {
    const order = await draftOrder();
    expectProblem(await t.request({ method: 'GET', url: `${ORDERS}/${order.id}`, token: bob.token }), 404, 'not-found');
  });

  it('an admin reads any order', async () => {
    const order = await draftOrder();
    expect((await read(order.id)).order).toEqual(order);
  });

  it('the unversioned /api alias answers the same', async () => {
    const order = await draftOrder();
    const res = await t.request({ method: 'GET', url: `/api/orders/${order.id}`, token: alice.token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(order);
  });

  it('an unknown id is 404; a non-integer id is 400', async () => {
    expectProblem(await t.request({ method: 'GET', url: `${ORDERS}/987654`, token: t.admin.token }), 404, 'not-found');
    expectProblem(await t.request({ method: 'GET', url: `${ORDERS}/abc`, token: t.admin.token }), 400, 'malformed-request');
  });

  it('without a token is 401', async () => {
    const order = await draftOrder();
    expectProblem(await t.request({ method: 'GET', url: `${ORDERS}/${order.id}` }), 401, 'unauthorized');
  });
});

describe('GET /orders lists orders newest first, paged, filtered by status', () => {
  let carol: TestUser;
  const byStatus = new Map<Status, OrderBody>();

  beforeAll(async () => {
    carol = await t.createUser('customer');
    for (const status of ORDER_STATUSES) {
      byStatus.set(status, await makeOrder(status, { owner: carol }));
    }
  });

  const ids = (res: LightMyRequestResponse) => res.json<OrderListBody>().data.map((o) => o.id);
  const idOf = (status: Status) => byStatus.get(status)?.id;

  it('a customer sees only their own orders, newest first, in the list envelope', async () => {
    const res = await list('', carol.token);
    expect(res.statusCode).toBe(200);
    const body = res.json<OrderListBody>();
    expect(body).toMatchObject({ page: 1, limit: 20, has_more: false });
    expect(body.data.every((o) => o.customer_id === carol.id)).toBe(true);
    const created = [...byStatus.values()].map((o) => o.id).reverse();
    expect(ids(res)).toEqual(created);
    expect(body.data[0]).toEqual((await read(created[0] as number)).order);
  });

  it('an admin sees the orders of every customer', async () => {
    const ofBob = await draftOrder({ owner: bob });
    const ofAlice = await draftOrder({ owner: alice });
    const res = await list('?limit=2', t.admin.token);
    expect(ids(res)).toEqual([ofAlice.id, ofBob.id]);
    const all = await list('?limit=100', t.admin.token);
    expect(ids(all)).toEqual(expect.arrayContaining([...byStatus.values()].map((o) => o.id)));
  });

  it.each(['draft', 'DRAFT', 'Draft', 'CREATED', 'created'])('status=%s lists the draft orders', async (status) => {
    expect(ids(await list(`?status=${status}`, carol.token))).toEqual([idOf('draft')]);
  });

  it.each([
    ['CONFIRMED', 'confirmed'],
    ['PAID', 'paid'],
    ['Shipped', 'shipped'],
    ['delivered', 'delivered'],
    ['completed', 'completed'],
    ['CANCELLED', 'cancelled'],
    ['REFUNDED', 'refunded'],
  ] as const)('status=%s lists the %s orders', async (query, status) => {
    const res = await list(`?status=${query}`, carol.token);
    expect(ids(res)).toEqual([idOf(status)]);
    expect(res.json<OrderListBody>().data[0]?.status).toBe(status);
  });

  it('status=active lists confirmed, paid, shipped and delivered orders', async () => {
    for (const query of ['active', 'ACTIVE']) {
      const res = await list(`?status=${query}`, carol.token);
      expect(ids(res).sort()).toEqual((['confirmed', 'paid', 'shipped', 'delivered'] as const).map(idOf).sort());
    }
  });

  it('an unknown status is 422 naming status', async () => {
    expectProblem(await list('?status=lost', carol.token), 422, 'validation-error', { fields: ['status'] });
  });

  it('page and limit page through the list, with has_more and a Link header', async () => {
    const first = await list('?limit=3', carol.token);
    expect(first.json<OrderListBody>()).toMatchObject({ page: 1, limit: 3, has_more: true });
    expect(first.headers.link).toMatch(/<[^>]*cursor=[^>]*>; rel="next"/);
    expect(first.headers.link).not.toMatch(/rel="prev"/);

    const last = await list('?limit=3&page=3', carol.token);
    expect(last.json<OrderListBody>()).toMatchObject({ page: 3, limit: 3, has_more: false });
    expect(last.headers.link).toMatch(/<[^>]*cursor=[^>]*>; rel="prev"/);
    expect(last.headers.link).not.toMatch(/rel="next"/);

    const pages = [first, await list('?limit=3&page=2', carol.token), last].flatMap(ids);
    expect(pages).toEqual(ids(await list('', carol.token)));
  });

  it('an out-of-range limit or page is 422, a non-integer one 400', async () => {
    expectProblem(await list('?limit=0', carol.token), 422, 'validation-error', { fields: ['limit'] });
    expectProblem(await list('?limit=101', carol.token), 422, 'validation-error', { fields: ['limit'] });
    expectProblem(await list('?page=0', carol.token), 422, 'validation-error', { fields: ['page'] });
    expectProblem(await list('?limit=ten', carol.token), 400, 'malformed-request', { fields: ['limit'] });
  });
});

// ---------------------------------------------------------------- PUT

describe('PUT /orders/{id} replaces the whole order', () => {
  it('omitted items become [] and omitted address and discount_code become null', async () => {
    const order = await draftOrder({ discount_code: 'SAVE10' });
    const res = await put(order.id, { customer_id: alice.id }, alice.token);
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>()).toMatchObject({ items: [], total: 0, address: null, discount_code: null, status: 'draft' });
    expect((await read(order.id)).order).toEqual(res.json());
  });

  it('answers 200 with the replaced order, items priced from the products', async () => {
    const order = await draftOrder();
    const res = await put(order.id, { items: [{ product_id: mug.id, quantity: 4 }], address: '2 Side St', discount_code: 'XMAS' }, alice.token);
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>()).toMatchObject({
      id: order.id,
      customer_id: alice.id,
      items: [{ product_id: mug.id, quantity: 4, unit_price: 550, line_total: 2200 }],
      total: 2200,
      address: '2 Side St',
      discount_code: 'XMAS',
    });
  });

  it('ignores the read-only fields so GET-modify-PUT works', async () => {
    const order = await draftOrder();
    const { order: current } = await read(order.id, alice.token);
    const res = await put(order.id, { ...current, address: '3 New Rd', total: 1, id: 424242, _links: {}, created_at: 'yesterday' }, alice.token);
    expect(res.statusCode, res.body).toBe(200);
    const updated = res.json<OrderBody>();
    expect(updated).toMatchObject({ id: order.id, address: '3 New Rd', total: order.total, items: order.items, created_at: order.created_at });
    expect(updated._links).toEqual(order._links);
  });

  it('repeating the same PUT changes nothing and answers the same ETag', async () => {
    const order = await draftOrder();
    const body = { items: [{ product_id: shirt.id, quantity: 1 }], address: '4 Same St', discount_code: null };
    const first = await put(order.id, body, alice.token);
    expect(first.statusCode).toBe(200);
    const second = await put(order.id, body, alice.token);
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual(first.json());
    expect(second.headers.etag).toBe(first.headers.etag);
    const { etag } = await read(order.id);
    expect(etag).toBe(first.headers.etag);
  });

  it('an unknown field is 422 and changes nothing', async () => {
    const order = await draftOrder();
    const before = await read(order.id);
    expectProblem(await put(order.id, { ...before.order, colour: 'red' }, alice.token), 422, 'validation-error', { fields: ['colour'] });
    await expectUnchanged(before);
  });

  it.each(['confirmed', 'paid', 'shipped', 'cancelled'] as const)('items change only in draft: in %s it is 409', async (status) => {
    const order = await makeOrder(status);
    const before = await read(order.id);
    const res = await put(order.id, { ...before.order, items: [{ product_id: mug.id, quantity: 9 }] }, t.admin.token);
    expectProblem(res, 409, 'conflict');
    await expectUnchanged(before);
  });

  it.each(['draft', 'confirmed', 'paid'] as const)('address changes while the order is %s', async (status) => {
    const order = await makeOrder(status);
    const res = await put(order.id, { ...order, address: '9 Moved Ave' }, alice.token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<OrderBody>()).toMatchObject({ address: '9 Moved Ave', status });
  });

  it.each(['shipped', 'delivered', 'completed'] as const)('address changes in %s are 409', async (status) => {
    const order = await makeOrder(status);
    const before = await read(order.id);
    expectProblem(await put(order.id, { ...order, address: '9 Moved Ave' }, t.admin.token), 409, 'conflict');
    await expectUnchanged(before);
  });

  it('a status in the body follows the state table: GET-modify-PUT confirms a draft', async () => {
    const order = await draftOrder();
    const res = await put(order.id, { ...order, status: 'CONFIRMED' }, alice.token);
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>().status).toBe('confirmed');
  });

  it("another customer's order is 404", async () => {
    const order = await draftOrder();
    const before = await read(order.id);
    expectProblem(await put(order.id, { address: 'x' }, bob.token), 404, 'not-found');
    await expectUnchanged(before);
  });
});

// ---------------------------------------------------------------- actions and stock

describe('POST /orders/{id}/confirm and /cancel answer 200 with the order', () => {
  it('confirm moves a draft to confirmed; the order then offers cancel and pay', async () => {
    const order = await draftOrder();
    const res = await action(order.id, 'confirm', alice.token);
    expect(res.statusCode).toBe(200);
    const confirmed = res.json<OrderBody>();
    expect(confirmed).toMatchObject({ id: order.id, status: 'confirmed', items: order.items, total: order.total });
    expect(ownLinks(confirmed._links)).toEqual({
      self: { href: `${ORDERS}/${order.id}`, method: 'GET' },
      cancel: { href: `${ORDERS}/${order.id}/cancel`, method: 'POST' },
      pay: { href: '/api/v1/payments', method: 'POST' },
    });
    expect((await read(order.id)).order).toEqual(confirmed);
  });

  it('confirm without an address is 422 naming address, and changes nothing', async () => {
    const order = await draftOrder({ address: null });
    const before = await read(order.id);
    expectProblem(await action(order.id, 'confirm', alice.token), 422, 'validation-error', { fields: ['address'] });
    await expectUnchanged(before);
  });

  it('confirm without items is 422 naming items, and changes nothing', async () => {
    const order = await draftOrder({ items: [] });
    const before = await read(order.id);
    const problem = expectProblem(await action(order.id, 'confirm', alice.token), 422, 'validation-error', { fields: ['items'] });
    expect(problem.errors?.map((e) => e.field)).not.toContain('address');
    await expectUnchanged(before);
  });

  it('the same checks apply when status is set by PATCH', async () => {
    const order = await draftOrder({ address: null, items: [] });
    expectProblem(await patch(order.id, { status: 'confirmed' }, alice.token), 422, 'validation-error', { fields: ['items', 'address'] });
  });

  it('confirming a confirmed order is a no-op: 200 and the same ETag', async () => {
    const order = await makeOrder('confirmed');
    const before = await read(order.id);
    const res = await action(order.id, 'confirm', alice.token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(before.order);
    expect(res.headers.etag).toBe(before.etag);
  });

  it('cancel moves a draft to cancelled; a cancelled order offers no action', async () => {
    const order = await draftOrder();
    const res = await action(order.id, 'cancel', alice.token);
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>()).toMatchObject({ status: 'cancelled', _links: { self: { href: `${ORDERS}/${order.id}`, method: 'GET' } } });
    expect(Object.keys(ownLinks(res.json<OrderBody>()._links))).toEqual(['self']);
  });

  it('cancel moves a confirmed order to cancelled', async () => {
    const order = await makeOrder('confirmed');
    const res = await action(order.id, 'cancel', alice.token);
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>().status).toBe('cancelled');
  });

  it('cancelling a cancelled order is a no-op: 200 and the same ETag', async () => {
    const order = await makeOrder('cancelled');
    const before = await read(order.id);
    const res = await action(order.id, 'cancel', alice.token);
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe(before.etag);
    await expectUnchanged(before);
  });

  it('a PATCH setting the status the order already has is a no-op: 200 and the same ETag', async () => {
    const order = await makeOrder('confirmed');
    const before = await read(order.id);
    const res = await patch(order.id, { status: 'CONFIRMED' }, alice.token);
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe(before.etag);
    await expectUnchanged(before);
  });

  it("another customer's order is 404", async () => {
    const order = await draftOrder();
    expectProblem(await action(order.id, 'confirm', bob.token), 404, 'not-found');
    expectProblem(await action(order.id, 'cancel', bob.token), 404, 'not-found');
    expect((await read(order.id)).order.status).toBe('draft');
  });
});

describe('Stock: confirm reserves every line or none; cancel and delete release it', () => {
  it('confirm takes every line from stock', async () => {
    const a = await newProduct({ stock: 10 });
    const b = await newProduct({ stock: 5 });
    const order = await draftOrder({
      items: [
        { product_id: a.id, quantity: 3 },
        { product_id: b.id, quantity: 5 },
        { product_id: a.id, quantity: 2 },
      ],
    });
    expect((await action(order.id, 'confirm', alice.token)).statusCode).toBe(200);
    expect([await stockOf(a.id), await stockOf(b.id)]).toEqual([5, 0]);
  });

  it('a line that cannot be reserved is 409 insufficient-stock naming it; nothing is reserved', async () => {
    const a = await newProduct({ stock: 10 });
    const b = await newProduct({ stock: 2 });
    const order = await draftOrder({
      items: [
        { product_id: a.id, quantity: 3 },
        { product_id: b.id, quantity: 3 },
      ],
    });
    const before = await read(order.id);
    const problem = expectProblem(await action(order.id, 'confirm', alice.token), 409, 'insufficient-stock', { fields: ['items.1.quantity'] });
    expect(problem.errors?.map((e) => e.field)).not.toContain('items.0.quantity');
    expect([await stockOf(a.id), await stockOf(b.id)]).toEqual([10, 2]);
    await expectUnchanged(before);
  });

  it('lines of one product are reserved together: two lines of 3 against a stock of 5 are 409 naming both', async () => {
    const a = await newProduct({ stock: 5 });
    const order = await draftOrder({
      items: [
        { product_id: a.id, quantity: 3 },
        { product_id: a.id, quantity: 3 },
      ],
    });
    expectProblem(await patch(order.id, { status: 'confirmed' }, alice.token), 409, 'insufficient-stock', { fields: ['items.0.quantity', 'items.1.quantity'] });
    expect(await stockOf(a.id)).toBe(5);
  });

  it('cancelling a confirmed order releases its stock', async () => {
    const a = await newProduct({ stock: 10 });
    const order = await makeOrder('confirmed', { items: [{ product_id: a.id, quantity: 4 }] });
    expect(await stockOf(a.id)).toBe(6);
    expect((await action(order.id, 'cancel', alice.token)).statusCode).toBe(200);
    expect(await stockOf(a.id)).toBe(10);
    expect((await action(order.id, 'cancel', alice.token)).statusCode).toBe(200);
    expect(await stockOf(a.id)).toBe(10);
  });

  it('cancelling through PATCH releases the stock too', async () => {
    const a = await newProduct({ stock: 10 });
    const order = await makeOrder('confirmed', { items: [{ product_id: a.id, quantity: 4 }] });
    expect((await patch(order.id, { status: 'cancelled' }, alice.token)).statusCode).toBe(200);
    expect(await stockOf(a.id)).toBe(10);
  });

  it('deleting a confirmed order releases its stock', async () => {
    const a = await newProduct({ stock: 10 });
    const order = await makeOrder('confirmed', { items: [{ product_id: a.id, quantity: 7 }] });
    expect(await stockOf(a.id)).toBe(3);
    expect((await t.request({ method: 'DELETE', url: `${ORDERS}/${order.id}`, token: alice.token })).statusCode).toBe(204);
    expect(await stockOf(a.id)).toBe(10);
  });

  it('draft orders hold no stock: creating, cancelling and deleting them leaves it alone', async () => {
    const a = await newProduct({ stock: 10 });
    const first = await draftOrder({ items: [{ product_id: a.id, quantity: 4 }] });
    const second = await draftOrder({ items: [{ product_id: a.id, quantity: 4 }] });
    expect(await stockOf(a.id)).toBe(10);
    expect((await action(first.id, 'cancel', alice.token)).statusCode).toBe(200);
    expect((await t.request({ method: 'DELETE', url: `${ORDERS}/${second.id}`, token: alice.token })).statusCode).toBe(204);
    expect(await stockOf(a.id)).toBe(10);
  });
});

describe('Stock is bounded (0-1,000,000,000) so releasing reserved stock never overflows', () => {
  const MAX_STOCK = 1_000_000_000;
  const fullLines = (productId: number) => Array.from({ length: 100 }, () => ({ product_id: productId, quantity: 10_000 }));

  async function setStock(productId: number, stock: number): Promise<LightMyRequestResponse> {
    const current = await t.request({ method: 'GET', url: `/api/v1/products/${productId}` });
    return t.request({ method: 'PUT', url: `/api/v1/products/${productId}`, payload: { ...writableProduct(current.json<ProductBody>()), stock }, token: t.admin.token });
  }

  it('PUT with stock at the integer maximum is 422 naming stock (regression: accepted, then cancel overflowed with 500)', async () => {
    const a = await newProduct({ stock: 10 });
    const order = await makeOrder('confirmed', { items: [{ product_id: a.id, quantity: 4 }] });
    expectProblem(await setStock(a.id, 2_147_483_647), 422, 'validation-error', { fields: ['stock'] });
    expect(await stockOf(a.id)).toBe(6);
    expect((await action(order.id, 'cancel', alice.token)).statusCode).toBe(200);
    expect(await stockOf(a.id)).toBe(10);
  });

  it('stock set to the maximum while orders hold reservations: cancel answers 200 and DELETE 204, stock stays at the bound', async () => {
    const a = await newProduct({ stock: MAX_STOCK });
    // Two orders each reserve a full order's worth (100 lines x 10,000), and each time an admin
    // tops the stock up to the maximum again, so the reservations outnumber the room left.
    const first = await makeOrder('confirmed', { items: fullLines(a.id) });
    expect((await setStock(a.id, MAX_STOCK)).statusCode).toBe(200);
    const second = await makeOrder('confirmed', { items: fullLines(a.id) });
    expect((await setStock(a.id, MAX_STOCK)).statusCode).toBe(200);

    const cancelled = await action(first.id, 'cancel', alice.token);
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json<OrderBody>().status).toBe('cancelled');
    expect(await stockOf(a.id)).toBe(MAX_STOCK);

    const deleted = await t.request({ method: 'DELETE', url: `${ORDERS}/${second.id}`, token: alice.token });
    expect(deleted.statusCode, deleted.body).toBe(204);
    expect(await stockOf(a.id)).toBe(MAX_STOCK);
  });

  it('POST with stock or price above the bound is 422 naming each; the bound itself is accepted', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/products', payload: productInput({ stock: MAX_STOCK + 1, price: 1_000_000_001 }), token: t.admin.token });
    expectProblem(res, 422, 'validation-error', { fields: ['stock', 'price'] });
    expect((await newProduct({ stock: MAX_STOCK, price: 1_000_000_000 })).stock).toBe(MAX_STOCK);
  });
});

// ---------------------------------------------------------------- delete

describe('DELETE /orders/{id}: 204 without payment, 409 with one, 404 when repeated', () => {
  it('answers 204 and the order is gone', async () => {
    const order = await draftOrder();
    const res = await t.request({ method: 'DELETE', url: `${ORDERS}/${order.id}`, token: alice.token });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expectProblem(await t.request({ method: 'GET', url: `${ORDERS}/${order.id}`, token: alice.token }), 404, 'not-found');
  });

  it('repeated DELETE answers 404', async () => {
    const order = await draftOrder();
    expect((await t.request({ method: 'DELETE', url: `${ORDERS}/${order.id}`, token: alice.token })).statusCode).toBe(204);
    expectProblem(await t.request({ method: 'DELETE', url: `${ORDERS}/${order.id}`, token: alice.token }), 404, 'not-found');
  });

  it('an order with a payment is 409 order-has-payment and stays', async () => {
    const order = await makeOrder('paid');
    const before = await read(order.id);
    expectProblem(await t.request({ method: 'DELETE', url: `${ORDERS}/${order.id}`, token: t.admin.token }), 409, 'order-has-payment');
    await expectUnchanged(before);
  });

  it("another customer's order is 404 and stays", async () => {
    const order = await draftOrder();
    expectProblem(await t.request({ method: 'DELETE', url: `${ORDERS}/${order.id}`, token: bob.token }), 404, 'not-found');
    await read(order.id);
  });
});

// ---------------------------------------------------------------- caching

describe('Caching: private revalidation, ETag, Last-Modified, conditional requests', () => {
  it('an order answers Cache-Control private, max-age=0, must-revalidate with ETag and Last-Modified', async () => {
    const order = await draftOrder();
    const { res } = await read(order.id, alice.token);
    expect(res.headers['cache-control']).toBe(PRIVATE);
    expect(res.headers.etag).toMatch(/^"[^"]+"$/);
    expect(new Date(String(res.headers['last-modified'])).getTime()).toBe(Math.floor(Date.parse(order.updated_at) / 1000) * 1000);
  });

  it('an order list answers the same Cache-Control with an ETag', async () => {
    const res = await list('', alice.token);
    expect(res.headers['cache-control']).toBe(PRIVATE);
    expect(res.headers.etag).toMatch(/^"[^"]+"$/);
  });

  it('errors are not stored', async () => {
    const res = await t.request({ method: 'GET', url: `${ORDERS}/987654`, token: alice.token });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('the ETag changes with every change of the order', async () => {
    const order = await draftOrder();
    const seen = new Set([(await read(order.id)).etag]);
    const changes: (() => Promise<LightMyRequestResponse>)[] = [
      () => patch(order.id, { address: 'A St' }, alice.token),
      () => patch(order.id, { discount_code: 'ONE' }, alice.token),
      () => patch(order.id, { discount_code: 'TWO' }, alice.token),
      () => patch(order.id, [{ op: 'replace', path: '/items/0/quantity', value: 3 }], alice.token, JSON_PATCH),
      () => action(order.id, 'confirm', alice.token),
      () => patch(order.id, { address: 'B St' }, alice.token),
      () => action(order.id, 'cancel', alice.token),
    ];
    for (const change of changes) {
      const res = await change();
      expect(res.statusCode, res.body).toBe(200);
      const { etag } = await read(order.id);
      expect(res.headers.etag).toBe(etag);
      expect(seen.has(etag)).toBe(false);
      seen.add(etag);
    }
  });

  it('If-None-Match with the current ETag is 304 with no body, the same ETag and Cache-Control', async () => {
    const order = await draftOrder();
    const { etag } = await read(order.id, alice.token);
    const res = await t.request({ method: 'GET', url: `${ORDERS}/${order.id}`, headers: { 'if-none-match': etag }, token: alice.token });
    expect(res.statusCode).toBe(304);
    expect(res.body).toBe('');
    expect(res.headers.etag).toBe(etag);
    expect(res.headers['cache-control']).toBe(PRIVATE);
  });

  it('If-None-Match with an old ETag is 200 with the new order', async () => {
    const order = await draftOrder();
    const { etag } = await read(order.id, alice.token);
    await patch(order.id, { address: 'Changed' }, alice.token);
    const res = await t.request({ method: 'GET', url: `${ORDERS}/${order.id}`, headers: { 'if-none-match': etag }, token: alice.token });
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>().address).toBe('Changed');
  });

  it('If-Modified-Since at or after Last-Modified is 304; before it 200', async () => {
    const order = await draftOrder();
    const { res } = await read(order.id, alice.token);
    const lastModified = String(res.headers['last-modified']);
    const fresh = await t.request({ method: 'GET', url: `${ORDERS}/${order.id}`, headers: { 'if-modified-since': lastModified }, token: alice.token });
    expect(fresh.statusCode).toBe(304);
    expect(fresh.headers.etag).toBe(res.headers.etag);
    const earlier = new Date(Date.parse(lastModified) - 60_000).toUTCString();
    const stale = await t.request({ method: 'GET', url: `${ORDERS}/${order.id}`, headers: { 'if-modified-since': earlier }, token: alice.token });
    expect(stale.statusCode).toBe(200);
  });

  it('If-None-Match wins over If-Modified-Since', async () => {
    const order = await draftOrder();
    const { res, etag } = await read(order.id, alice.token);
    const lastModified = String(res.headers['last-modified']);
    const mismatch = await t.request({
      method: 'GET',
      url: `${ORDERS}/${order.id}`,
      headers: { 'if-none-match': '"not-the-tag"', 'if-modified-since': lastModified },
      token: alice.token,
    });
    expect(mismatch.statusCode).toBe(200);
    const match = await t.request({
      method: 'GET',
      url: `${ORDERS}/${order.id}`,
      headers: { 'if-none-match': etag, 'if-modified-since': new Date(0).toUTCString() },
      token: alice.token,
    });
    expect(match.statusCode).toBe(304);
  });

  it('a list answers 304 to If-None-Match with its ETag', async () => {
    const first = await list('?limit=5', alice.token);
    const res = await list('?limit=5', alice.token, { 'if-none-match': String(first.headers.etag) });
    expect(res.statusCode).toBe(304);
    expect(res.headers.etag).toBe(first.headers.etag);
  });

  const staleWrites: [string, (id: number, order: OrderBody, headers: Record<string, string>) => Promise<LightMyRequestResponse>][] = [
    ['PUT', (id, order, headers) => put(id, { ...order, address: 'Stale' }, alice.token, headers)],
    ['PATCH', (id, _order, headers) => patch(id, { address: 'Stale' }, alice.token, { ...MERGE, ...headers })],
    ['DELETE', (id, _order, headers) => t.request({ method: 'DELETE', url: `${ORDERS}/${id}`, headers, token: alice.token })],
    ['POST confirm', (id, _order, headers) => action(id, 'confirm', alice.token, headers)],
    ['POST cancel', (id, _order, headers) => action(id, 'cancel', alice.token, headers)],
  ];

  it.each(staleWrites)('%s with a stale If-Match is 412 precondition-failed and nothing changes', async (_name, write) => {
    const order = await draftOrder();
    const stale = (await read(order.id)).etag;
    expect((await patch(order.id, { discount_code: 'BUMP' }, alice.token)).statusCode).toBe(200);
    const before = await read(order.id);
    expectProblem(await write(order.id, before.order, { 'if-match': stale }), 412, 'precondition-failed');
    await expectUnchanged(before);
  });

  it.each(staleWrites)('%s with the current If-Match succeeds', async (_name, write) => {
    const order = await draftOrder();
    const { etag, order: current } = await read(order.id);
    const res = await write(order.id, current, { 'if-match': etag });
    expect(res.statusCode, res.body).toBeLessThan(300);
  });

  it('a weak tag never matches If-Match', async () => {
    const order = await draftOrder();
    const before = await read(order.id);
    expectProblem(await patch(order.id, { address: 'Weak' }, alice.token, { ...MERGE, 'if-match': `W/${before.etag}` }), 412, 'precondition-failed');
    await expectUnchanged(before);
  });
});

// ---------------------------------------------------------------- authorization

describe('Who may do what: customers act on their own orders, admins on all', () => {
  it.each([
    ['shipped', 'delivered'],
    ['delivered', 'completed'],
  ] as const)('only an admin moves %s to %s: the customer gets 403 and nothing changes', async (from, to) => {
    const order = await makeOrder(from);
    const before = await read(order.id);
    expectProblem(await patch(order.id, { status: to }, alice.token), 403, 'forbidden');
    expectProblem(await put(order.id, { ...order, status: to }, alice.token), 403, 'forbidden');
    await expectUnchanged(before);
    const res = await patch(order.id, { status: to }, t.admin.token);
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>().status).toBe(to);
  });

  it('a customer cannot hand their order to another customer (403), and nothing changes', async () => {
    const order = await draftOrder();
    const before = await read(order.id);
    expectProblem(await patch(order.id, { customer_id: bob.id }, alice.token), 403, 'forbidden');
    await expectUnchanged(before);
  });

  it('an admin may move a draft order to another customer; an unknown one is 422', async () => {
    const order = await draftOrder();
    expectProblem(await patch(order.id, { customer_id: 2_000_000_000 }, t.admin.token), 422, 'validation-error', { fields: ['customer_id'] });
    const res = await patch(order.id, { customer_id: bob.id }, t.admin.token);
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>().customer_id).toBe(bob.id);
    expect((await t.request({ method: 'GET', url: `${ORDERS}/${order.id}`, token: bob.token })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: `${ORDERS}/${order.id}`, token: alice.token })).statusCode).toBe(404);
  });

  it("a customer cannot change another customer's order: 404 for PATCH, PUT, DELETE, confirm and cancel", async () => {
    const order = await draftOrder({ owner: bob });
    const before = await read(order.id);
    expectProblem(await patch(order.id, { address: 'Mine now' }, alice.token), 404, 'not-found');
    expectProblem(await put(order.id, { address: 'Mine now' }, alice.token), 404, 'not-found');
    expectProblem(await t.request({ method: 'DELETE', url: `${ORDERS}/${order.id}`, token: alice.token }), 404, 'not-found');
    expectProblem(await action(order.id, 'confirm', alice.token), 404, 'not-found');
    expectProblem(await action(order.id, 'cancel', alice.token), 404, 'not-found');
    await expectUnchanged(before);
  });

  it("an admin reads and changes any customer's order", async () => {
    const order = await draftOrder({ owner: bob });
    expect((await patch(order.id, { address: 'Admin St' }, t.admin.token)).json<OrderBody>().address).toBe('Admin St');
    expect((await action(order.id, 'confirm', t.admin.token)).json<OrderBody>().status).toBe('confirmed');
    expect((await action(order.id, 'cancel', t.admin.token)).json<OrderBody>().status).toBe('cancelled');
    expect((await t.request({ method: 'DELETE', url: `${ORDERS}/${order.id}`, token: t.admin.token })).statusCode).toBe(204);
  });

  it('a service client acts by scope: orders:read reads, orders:write writes, neither is 403', async () => {
    const order = await draftOrder();
    const reader = await t.serviceToken(['orders:read']);
    const writer = await t.serviceToken(['orders:write']);
    const none = await t.serviceToken([]);
    expect((await t.request({ method: 'GET', url: `${ORDERS}/${order.id}`, token: reader })).statusCode).toBe(200);
    expectProblem(await patch(order.id, { address: 'Svc' }, reader), 403, 'insufficient-scope');
    expectProblem(await t.request({ method: 'GET', url: `${ORDERS}/${order.id}`, token: none }), 403, 'insufficient-scope');
    expect((await patch(order.id, { address: 'Svc' }, writer)).statusCode).toBe(200);
  });

  it('without a token every order operation is 401', async () => {
    const order = await draftOrder();
    expectProblem(await t.request({ method: 'GET', url: ORDERS }), 401, 'unauthorized');
    expectProblem(await t.request({ method: 'PATCH', url: `${ORDERS}/${order.id}`, headers: MERGE, payload: '{}' }), 401, 'unauthorized');
    expectProblem(await t.request({ method: 'POST', url: `${ORDERS}/${order.id}/confirm` }), 401, 'unauthorized');
    expectProblem(await t.request({ method: 'DELETE', url: `${ORDERS}/${order.id}` }), 401, 'unauthorized');
  });
});

describe('the address may span lines: tab and line breaks are kept, other control characters and lone surrogates are 422 naming address', () => {
  it('a two-line address with a tab is accepted, kept as written and confirmed (regression: 422 "must not contain control characters" for a storefront\'s address box)', async () => {
    const address = '1 Market Street\nFlat 2\tSpringfield\r\nUnited States';
    const created = await postOrder({ items: [{ product_id: shirt.id, quantity: 1 }], address }, alice.token);
    expect(created.statusCode, created.body).toBe(201);
    const order = created.json<{ id: number; address: string }>();
    expect(order.address).toBe(address);
    expect((await t.request({ method: 'GET', url: `${ORDERS}/${order.id}`, token: alice.token })).json<{ address: string }>().address).toBe(address);
    const changed = await patch(order.id, { address: 'Flat 3\n1 Market Street' }, alice.token);
    expect(changed.statusCode, changed.body).toBe(200);
    const confirmed = await t.request({ method: 'POST', url: `${ORDERS}/${order.id}/confirm`, token: alice.token });
    expect(confirmed.json<{ status: string; address: string }>()).toMatchObject({ status: 'confirmed', address: 'Flat 3\n1 Market Street' });
  });

  it.each([
    ['ESC', String.raw`1 Main St\u001b[8m`],
    ['NUL', String.raw`1 Main St\u0000`],
    ['a vertical tab', String.raw`1 Main St\u000bSpringfield`],
    ['a form feed', String.raw`1 Main St\fSpringfield`],
    ['a C1 control (NEL)', String.raw`1 Main St\u0085Springfield`],
    ['a lone surrogate', String.raw`1 Main St \ud800`],
  ])('an address with %s is refused and nothing is created (regression: accepted or silently replaced)', async (_label, escaped) => {
    const before = await list('?limit=100', alice.token);
    const payload = `{"items":[{"product_id":${shirt.id},"quantity":1}],"address":"${escaped}"}`;
    const res = await t.request({ method: 'POST', url: ORDERS, payload, headers: { 'content-type': 'application/json' }, token: alice.token });
    expect(expectProblem(res, 422, 'validation-error', { fields: ['address'] }).errors?.map((e) => e.field)).toEqual(['address']);
    expect((await list('?limit=100', alice.token)).json<OrderListBody>().data).toHaveLength(before.json<OrderListBody>().data.length);
  });
});

describe('an order names an existing customer: an unknown caller is 401, an unknown customer_id 422 (never a 500)', () => {
  const trpcCreate = (input: OrderInputBody, token: string) =>
    t.request({ method: 'POST', url: '/trpc/orders.create', payload: input, token });

  /** A customer who existed when the token was minted and has since been deleted. */
  async function deletedCustomer(): Promise<TestUser> {
    const gone = await t.createUser('customer');
    await t.db.delete(users).where(eq(users.id, gone.id));
    return gone;
  }

  it('POST /orders with a valid token whose user does not exist is 401 with a Bearer challenge (regression: 500 on the foreign key)', async () => {
    const gone = await deletedCustomer();
    const res = await postOrder({ items: [{ product_id: shirt.id, quantity: 1 }], address: '1 Main St' }, gone.token);
    expectProblem(res, 401, 'unauthorized');
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
    expect(await t.db.select({ id: orders.id }).from(orders).where(eq(orders.customerId, gone.id))).toHaveLength(0);
  });

  it('the same on /trpc: 401 with the unauthorized problem', async () => {
    const gone = await deletedCustomer();
    const res = await trpcCreate({ items: [{ product_id: shirt.id, quantity: 1 }] }, gone.token);
    expect(res.statusCode, res.body).toBe(401);
    expect(res.json<{ error: { data: { problem: { type: string } } } }>().error.data.problem.type).toBe('/problems/unauthorized');
  });

  it('a token for a user id that was never issued is 401 too', async () => {
    const token = await t.tokens.mint({ sub: '2147483000', role: 'customer' });
    expectProblem(await postOrder({ items: [] }, token), 401, 'unauthorized');
  });

  it('an admin naming a customer_id that does not exist is 422 naming customer_id, on REST and /trpc', async () => {
    const gone = await deletedCustomer();
    const body = { customer_id: gone.id, items: [{ product_id: shirt.id, quantity: 1 }] };
    expectProblem(await postOrder(body, t.admin.token), 422, 'validation-error', { fields: ['customer_id'] });
    const res = await trpcCreate(body, t.admin.token);
    expect(res.statusCode, res.body).toBe(422);
  });

  it('an admin moving a draft to a customer that does not exist is 422 naming customer_id', async () => {
    const order = await draftOrder();
    const gone = await deletedCustomer();
    expectProblem(await patch(order.id, { customer_id: gone.id }, t.admin.token), 422, 'validation-error', { fields: ['customer_id'] });
  });
});
