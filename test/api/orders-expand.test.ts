/**
 * `expand` on order reads over REST and /trpc (docs/api.md#expand): each expansion embeds what
 * its own GET answers, for callers who may read it; without `expand` the order is byte for byte
 * what it always was; a value it does not take is 400 naming those it does. The statement count
 * (one per expansion per page) is pinned in test/caller/orders-expand-caller.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.ts';
import { fulfillmentsOf, shipOrder } from '../helpers/fulfillments.ts';
import { advanceOrder, createOrderScene, draftOrder, ORDERS, type OrderBody, type OrderListBody, type OrderScene } from '../helpers/orders.ts';
import { PAYMENTS, type PaymentListBody } from '../helpers/payments.ts';
import { expectProblem } from '../helpers/problems.ts';
import { createProduct, PRODUCTS } from '../helpers/products.ts';

let scene: OrderScene;

const t = useTestApp();
beforeAll(async () => {
  scene = await createOrderScene(t);
});

const get = (url: string, token = t.admin.token, headers: Record<string, string> = {}) => t.request({ method: 'GET', url, token, headers });
const ALLOWED = 'items.product, customer, payments, fulfillments';

describe('without expand the representation is unchanged', () => {
  it('GET answers the bytes the creating POST answered, with no expanded member', async () => {
    const created = await t.request({
      method: 'POST',
      url: ORDERS,
      token: scene.alice.token,
      payload: { items: [{ product_id: scene.shirt.id, quantity: 1 }], address: '1 Main St' },
    });
    expect(created.statusCode).toBe(201);
    const res = await get(`${ORDERS}/${created.json<OrderBody>().id}`, scene.alice.token);
    expect(res.body).toBe(created.body);
    const order = res.json<OrderBody>();
    expect(Object.keys(order)).not.toEqual(expect.arrayContaining(['customer']));
    expect(order).not.toHaveProperty('payments');
    expect(order).not.toHaveProperty('fulfillments');
    expect(order.items[0]).not.toHaveProperty('product');
  });
});

describe('items.product: each item gains its product, as GET /products/{id} answers it', () => {
  it('every item, archived products too', async () => {
    const gone = await createProduct(t, { price: 700, stock: 10 });
    const order = await draftOrder(t, scene, { items: [{ product_id: scene.shirt.id, quantity: 1 }, { product_id: gone.id, quantity: 2 }] });
    const beforeArchive = (await get(`${PRODUCTS}/${gone.id}`)).json();
    expect((await t.request({ method: 'DELETE', url: `${PRODUCTS}/${gone.id}`, token: t.admin.token })).statusCode).toBe(204);
    expect((await get(`${PRODUCTS}/${gone.id}`)).statusCode).toBe(410);

    const res = await get(`${ORDERS}/${order.id}?expand=items.product`, scene.alice.token);
    expect(res.statusCode, res.body).toBe(200);
    const expanded = res.json<OrderBody>();
    expect(expanded.items.map((item) => item.product)).toEqual([(await get(`${PRODUCTS}/${scene.shirt.id}`)).json(), beforeArchive]);
    // Only the asked-for member is added.
    expect(expanded).not.toHaveProperty('customer');
    expect({ ...expanded, items: expanded.items.map(({ product: _product, ...item }) => item) }).toEqual(order);
  });
});

describe('customer: the user as GET /users/{id} answers it, or null for a caller who may not read it', () => {
  it('the customer themself, an admin and a service with users:read see the user', async () => {
    const order = await draftOrder(t, scene);
    const user = (await get(`/api/v1/users/${scene.alice.id}`, t.admin.token)).json();
    for (const token of [scene.alice.token, t.admin.token, await t.serviceToken(['orders:read', 'users:read'])]) {
      const res = await get(`${ORDERS}/${order.id}?expand=customer`, token);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json<OrderBody>().customer).toEqual(user);
    }
  });

  it('a service client that may read orders but not users gets customer: null', async () => {
    const order = await draftOrder(t, scene);
    const token = await t.serviceToken(['orders:read']);
    expect((await get(`/api/v1/users/${scene.alice.id}`, token)).statusCode).toBe(403);
    const res = await get(`${ORDERS}/${order.id}?expand=customer`, token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<OrderBody>().customer).toBeNull();
  });

  it("another customer's order stays 404 whatever is expanded", async () => {
    const order = await draftOrder(t, scene);
    expectProblem(await get(`${ORDERS}/${order.id}?expand=customer,payments`, scene.bob.token), 404, 'not-found');
  });
});

describe('payments and fulfillments: as their GETs answer them, newest first', () => {
  it('a shipped order embeds its payment (with _links) and its fulfillment', async () => {
    const paid = await advanceOrder(t, await draftOrder(t, scene), 'paid', scene.alice);
    await shipOrder(t, paid.id, t.admin.token);
    const [payment] = (await get(`${PAYMENTS}?order_id=${paid.id}`)).json<PaymentListBody>().data;
    const fulfillments = (await get(fulfillmentsOf(paid.id))).json<{ data: unknown[] }>().data;
    expect(payment).toBeDefined();
    expect(fulfillments).toHaveLength(1);

    const res = await get(`${ORDERS}/${paid.id}?expand=payments&expand=fulfillments`, scene.alice.token);
    expect(res.statusCode, res.body).toBe(200);
    const order = res.json<OrderBody>();
    expect(order.status).toBe('shipped');
    // The payment read now: its links follow the order's status, as GET /payments/{id} answers.
    expect(order.payments).toEqual([(await get(`${PAYMENTS}/${payment?.id}`)).json()]);
    expect(order.payments?.[0]?._links.self.href).toBe(`${PAYMENTS}/${payment?.id}`);
    expect(order.fulfillments).toEqual(fulfillments);
  });

  it('an order without any answers empty lists', async () => {
    const order = await draftOrder(t, scene);
    const res = await get(`${ORDERS}/${order.id}?expand=payments,fulfillments`);
    expect(res.json<OrderBody>()).toMatchObject({ payments: [], fulfillments: [] });
  });
});

describe('spelling: a comma list or the parameter repeated; duplicates ignored', () => {
  it('comma list, repeated parameter and duplicates answer the same bytes', async () => {
    const order = await draftOrder(t, scene);
    const base = `${ORDERS}/${order.id}`;
    const comma = await get(`${base}?expand=items.product,customer`);
    expect(comma.statusCode, comma.body).toBe(200);
    for (const query of ['expand=items.product&expand=customer', 'expand=customer,items.product', 'expand=customer&expand=items.product,customer&expand=items.product']) {
      const res = await get(`${base}?${query}`);
      expect(res.body, query).toBe(comma.body);
    }
  });
});

describe('a value expand does not take is 400 naming those it does', () => {
  it.each([
    ['an unknown expansion', 'expand=items.product.category'],
    ['a known one beside an unknown one', 'expand=customer,bogus'],
    ['an empty value', 'expand='],
    ['an empty member of a comma list', 'expand=customer,'],
    ['a repeated empty value', 'expand=customer&expand='],
    ['another case', 'expand=Customer'],
  ])('%s (%s)', async (_name, query) => {
    const order = await draftOrder(t, scene);
    for (const url of [`${ORDERS}/${order.id}?${query}`, `${ORDERS}?${query}`]) {
      const problem = expectProblem(await get(url), 400, 'malformed-request', { fields: ['expand'] });
      expect(problem.detail).toContain(ALLOWED);
    }
  });

  it('more values than it takes, even repeated ones, is 422', async () => {
    const order = await draftOrder(t, scene);
    const query = Array.from({ length: 21 }, () => 'expand=customer').join('&');
    expectProblem(await get(`${ORDERS}/${order.id}?${query}`), 422, 'validation-error', { fields: ['expand'] });
  });
});

describe('the order list expands every order of the page; paging is unchanged', () => {
  it('each order of a page is expanded, and its cursors page the same list without expand', async () => {
    const owner = await t.createUser();
    const orders: OrderBody[] = [];
    for (let i = 0; i < 3; i++) orders.push(await draftOrder(t, scene, { owner, items: [{ product_id: (i % 2 ? scene.mug : scene.shirt).id, quantity: i + 1 }] }));
    const plain = (await get(`${ORDERS}?limit=2`, owner.token)).json<OrderListBody>();
    const res = await get(`${ORDERS}?limit=2&expand=items.product,customer`, owner.token);
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json<OrderListBody>();
    expect(page.data.map((order) => order.id)).toEqual(plain.data.map((order) => order.id));
    expect(page.next_cursor).toBe(plain.next_cursor);
    for (const order of page.data) {
      expect(order.customer?.id).toBe(owner.id);
      for (const item of order.items) expect(item.product?.id).toBe(item.product_id);
    }
    // The Link header keeps the expansion on the next page.
    expect(res.headers.link).toContain('expand=items.product%2Ccustomer');
    const next = (await get(`${ORDERS}?limit=2&cursor=${encodeURIComponent(String(page.next_cursor))}`, owner.token)).json<OrderListBody>();
    expect(next.data.map((order) => order.id)).toEqual([orders[0]?.id]);
  });
});

describe('caching: an expanded order is validated as what it embeds', () => {
  it('its ETag revalidates the same URL (304); Last-Modified is that of its newest part', async () => {
    const product = await createProduct(t, { price: 300, stock: 10 });
    const order = await draftOrder(t, scene, { items: [{ product_id: product.id, quantity: 1 }] });
    const url = `${ORDERS}/${order.id}?expand=items.product`;
    const first = await get(url);
    expect((await get(url, t.admin.token, { 'if-none-match': String(first.headers.etag) })).statusCode).toBe(304);
    expect(first.headers.etag).not.toBe((await get(`${ORDERS}/${order.id}`)).headers.etag);

    // The product changes after the order: the expanded order is newer, the plain one is not.
    const changed = await t.request({ method: 'PUT', url: `${PRODUCTS}/${product.id}`, token: t.admin.token, payload: { ...product, name: 'Renamed' } });
    expect(changed.statusCode, changed.body).toBe(200);
    const after = await get(url);
    expect(after.headers.etag).not.toBe(first.headers.etag);
    expect(after.headers['last-modified']).toBe(new Date(changed.json<{ updated_at: string }>().updated_at).toUTCString());
    expect((await get(`${ORDERS}/${order.id}`)).headers['last-modified']).toBe(new Date(order.updated_at).toUTCString());
  });
});

describe('/trpc: expand in the input, typed', () => {
  const trpc = (path: string, input: unknown, token = t.admin.token) =>
    t.request({ method: 'GET', url: `/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`, token });

  it('orders.get and orders.list take expand as an array', async () => {
    const order = await draftOrder(t, scene);
    const one = await trpc('orders.get', { id: order.id, expand: ['customer', 'items.product'] });
    expect(one.statusCode, one.body).toBe(200);
    const rest = (await get(`${ORDERS}/${order.id}?expand=customer,items.product`)).json<OrderBody>();
    expect(one.json<{ result: { data: OrderBody } }>().result.data).toEqual(rest);
    const list = await trpc('orders.list', { limit: 1, expand: ['payments'] }, scene.alice.token);
    expect(list.json<{ result: { data: OrderListBody } }>().result.data.data[0]?.payments).toEqual(expect.any(Array));
  });

  it('a value outside the set is 422 naming expand.0 (the typed client cannot send it)', async () => {
    const order = await draftOrder(t, scene);
    const res = await trpc('orders.get', { id: order.id, expand: ['items.product.category'] });
    expect(res.statusCode).toBe(422);
    const { problem } = res.json<{ error: { data: { problem: { type: string; errors: { field: string }[] } } } }>().error.data;
    expect(problem.type).toBe('/problems/validation-error');
    expect(problem.errors.map((e) => e.field)).toEqual(['expand.0']);
  });
});
