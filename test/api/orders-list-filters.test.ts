/**
 * The order list's filters and sorts (docs/api.md#lists-and-paging): `metadata[key]=value`
 * (deepObject on REST, an object on /trpc), `customer_id` (admins; a customer may name only
 * themself, another is 403), `created_gte` / `created_lt` (RFC 3339; a bad one is 422 like any
 * bad query value), and `sort` (six sorts; any other is 400 listing them), each with cursor
 * paging that neither repeats nor skips an order, and a cursor good only for the sort and filters
 * that issued it. Every test works on a customer of its own, so the lists hold only its orders.
 */
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { orders } from '../../server/modules/orders/orders.table.ts';
import { ORDER_SORTS } from '../../server/modules/orders/orders.schemas.ts';
import { createTestHarness, type TestHarness } from '../../server/testing.ts';
import { useTestApp } from '../helpers/app.ts';
import { createOrder, ORDERS, type OrderBody, type OrderListBody } from '../helpers/orders.ts';
import { expectProblem, problemFields } from '../helpers/problems.ts';
import { createProduct, type ProductBody } from '../helpers/products.ts';

let product: ProductBody;
const t = useTestApp();
beforeAll(async () => {
  product = await createProduct(t, { price: 100, stock: 1_000_000 });
});

/** `count` orders of a new customer: quantities 1..count (so totals 100..), metadata as given. */
async function customerWithOrders(count: number, metadataOf: (i: number) => Record<string, string> = () => ({})) {
  const customer = await t.createUser('customer');
  const made: OrderBody[] = [];
  for (let i = 0; i < count; i++) {
    // Quantities out of creation order, so sorting by total differs from sorting by time.
    const quantity = ((i * 7) % count) + 1;
    made.push(await createOrder(t, { items: [{ product_id: product.id, quantity }], metadata: metadataOf(i) }, customer.token));
  }
  return { customer, made };
}

const list = (query: string, token: string) => t.request({ method: 'GET', url: `${ORDERS}?${query}`, token });
const idsOf = (res: Awaited<ReturnType<typeof list>>) => res.json<OrderListBody>().data.map((o) => o.id);

/** Every page of a query by cursor, `limit` at a time: the ids in the order answered. */
async function allPages(query: string, token: string, limit = 2): Promise<number[]> {
  const ids: number[] = [];
  let res = await list(`${query}&limit=${limit}`, token);
  for (let guard = 0; guard < 100; guard++) {
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json<OrderListBody>();
    ids.push(...page.data.map((o) => o.id));
    if (page.next_cursor === null) return ids;
    res = await list(`${query}&limit=${limit}&cursor=${encodeURIComponent(page.next_cursor)}`, token);
  }
  throw new Error('more pages than orders');
}

describe('metadata[key]=value: orders whose metadata holds every given pair', () => {
  it('one pair, two pairs (both must hold), and a value no order has', async () => {
    const { customer, made } = await customerWithOrders(4, (i) => ({ channel: i % 2 === 0 ? 'web' : 'shop', erp_id: `ERP-${i}` }));
    const web = made.filter((_, i) => i % 2 === 0).map((o) => o.id).reverse();
    expect(idsOf(await list('metadata[channel]=web', customer.token))).toEqual(web);
    expect(idsOf(await list('metadata[channel]=web&metadata[erp_id]=ERP-2', customer.token))).toEqual([made[2]?.id]);
    expect(idsOf(await list('metadata[channel]=shop&metadata[erp_id]=ERP-2', customer.token))).toEqual([]);
    // Percent-encoded brackets are the same parameter.
    expect(idsOf(await list('metadata%5Bchannel%5D=web', customer.token))).toEqual(web);
  });

  it('cursor paging within the filter returns every match once, and a cursor of the unfiltered list is 400 here', async () => {
    const { customer, made } = await customerWithOrders(5, (i): Record<string, string> => (i === 3 ? {} : { channel: 'web' }));
    const web = made.filter((_, i) => i !== 3).map((o) => o.id).reverse();
    expect(await allPages('metadata[channel]=web', customer.token)).toEqual(web);
    const unfiltered = (await list('limit=1', customer.token)).json<OrderListBody>();
    const res = await list(`metadata[channel]=web&cursor=${encodeURIComponent(String(unfiltered.next_cursor))}`, customer.token);
    expect(problemFields(expectProblem(res, 400, 'malformed-request'))).toEqual(['cursor']);
  });

  it('on /trpc it is an object input', async () => {
    const { customer, made } = await customerWithOrders(3, (i) => ({ erp_id: `ERP-${i}` }));
    const input = encodeURIComponent(JSON.stringify({ metadata: { erp_id: 'ERP-1' } }));
    const res = await t.request({ method: 'GET', url: `/trpc/orders.list?input=${input}`, token: customer.token });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<{ result: { data: OrderListBody } }>().result.data.data.map((o) => o.id)).toEqual([made[1]?.id]);
  });

  it('bad spellings: `metadata` alone or a member twice is 400; another bracketed name is unknown; a bad key is 422 naming it', async () => {
    const customer = await t.createUser('customer');
    expect(problemFields(expectProblem(await list('metadata=web', customer.token), 400, 'malformed-request'))).toEqual(['metadata']);
    expect(problemFields(expectProblem(await list('metadata[a]=1&metadata[a]=2', customer.token), 400, 'malformed-request'))).toEqual(['metadata[a]']);
    // `metadata=` with nothing is an empty object as generators serialize it (schemathesis sent it
    // without a token and got 400 before the 401 it expected): no member, no filter.
    const all = await list('', customer.token);
    const empty = await list('metadata=', customer.token);
    expect(empty.statusCode, empty.body).toBe(200);
    expect(empty.json<OrderListBody>().data).toEqual(all.json<OrderListBody>().data);
    expectProblem(await t.request({ method: 'GET', url: `${ORDERS}?metadata=` }), 401, 'unauthorized');
    for (const name of ['status[a]', 'meta[a]', 'metadata[a][b]', 'sort[x]']) {
      const problem = expectProblem(await list(`${encodeURIComponent(name)}=1`, customer.token), 400, 'unknown-parameter');
      expect(problemFields(problem)).toEqual([name]);
    }
    expect(problemFields(expectProblem(await list('metadata[bad%20key]=1', customer.token), 422, 'validation-error'))).toEqual(['metadata.bad key']);
    expect(problemFields(expectProblem(await list(`metadata[k]=${'x'.repeat(501)}`, customer.token), 422, 'validation-error'))).toEqual(['metadata.k']);
  });
});

describe('customer_id: admins filter by customer; a customer may name only themself', () => {
  it('an admin sees one customer’s orders; the customer naming themself sees the same; naming another is 403', async () => {
    const alice = await customerWithOrders(2);
    const bob = await customerWithOrders(1);
    const alices = alice.made.map((o) => o.id).reverse();
    expect(idsOf(await list(`customer_id=${alice.customer.id}`, t.admin.token))).toEqual(alices);
    expect(idsOf(await list(`customer_id=${alice.customer.id}`, alice.customer.token))).toEqual(alices);
    expectProblem(await list(`customer_id=${bob.customer.id}`, alice.customer.token), 403, 'forbidden');
    expect(problemFields(expectProblem(await list('customer_id=abc', t.admin.token), 400, 'malformed-request'))).toEqual(['customer_id']);
  });
});

describe('created_gte and created_lt: a half-open range of creation instants', () => {
  it('orders at or after gte and before lt, with Z or an offset; a bad instant is 422 naming it', async () => {
    const { customer, made } = await customerWithOrders(3);
    const at = ['2026-03-01T00:00:00.000Z', '2026-03-02T00:00:00.000Z', '2026-03-03T00:00:00.000Z'];
    for (const [i, order] of made.entries()) await t.db.update(orders).set({ createdAt: new Date(at[i] as string) }).where(eq(orders.id, order.id));
    const [first, second, third] = made.map((o) => o.id);
    expect(idsOf(await list('created_gte=2026-03-02T00:00:00Z', customer.token))).toEqual([third, second]);
    expect(idsOf(await list('created_lt=2026-03-02T00:00:00Z', customer.token))).toEqual([first]);
    expect(idsOf(await list(`created_gte=${encodeURIComponent('2026-03-02T01:00:00+01:00')}&created_lt=2026-03-03T00:00:00Z`, customer.token))).toEqual([second]);
    for (const [name, value] of [['created_gte', '2026-13-01T00:00:00Z'], ['created_lt', 'yesterday'], ['created_gte', '2026-03-01'], ['created_lt', '0000-01-01T00:00:00Z']]) {
      expect(problemFields(expectProblem(await list(`${name}=${value}`, customer.token), 422, 'validation-error'))).toEqual([name]);
    }
  });
});

describe('sort: six orders, each paged by cursor without repeats or gaps', () => {
  it.each(ORDER_SORTS)('sort=%s orders by its field (id breaking ties) and its pages by cursor add up to it', async (sort) => {
    const { customer, made } = await customerWithOrders(5);
    // Distinct updated_at, in another order than creation.
    for (const [i, order] of made.entries()) await t.db.update(orders).set({ updatedAt: new Date(Date.UTC(2026, 0, 10 - ((i * 3) % 5))) }).where(eq(orders.id, order.id));
    const rows = await t.db.select({ id: orders.id, createdAt: orders.createdAt, updatedAt: orders.updatedAt, total: orders.total }).from(orders).where(eq(orders.customerId, customer.id));
    const field = sort.replace('-', '') as 'created_at' | 'updated_at' | 'total';
    const value = (row: (typeof rows)[number]) => (field === 'total' ? row.total : field === 'created_at' ? row.createdAt.getTime() : row.updatedAt.getTime());
    const sign = sort.startsWith('-') ? -1 : 1;
    const expected = [...rows].sort((a, b) => sign * (value(a) - value(b) || a.id - b.id)).map((row) => row.id);
    expect(new Set(expected).size).toBe(5);
    expect(idsOf(await list(`sort=${sort}&limit=100`, customer.token))).toEqual(expected);
    expect(await allPages(`sort=${sort}`, customer.token)).toEqual(expected);
    // The total column is the sum the representation shows.
    const shown = (await list(`sort=${sort}&limit=100`, customer.token)).json<OrderListBody>().data;
    for (const order of shown) expect(rows.find((row) => row.id === order.id)?.total).toBe(order.total);
  });

  it('sort=price is 400 listing the six sorts; a cursor issued for one sort is 400 with another', async () => {
    const { customer } = await customerWithOrders(3);
    const problem = expectProblem(await list('sort=price', customer.token), 400, 'malformed-request');
    expect(problemFields(problem)).toEqual(['sort']);
    for (const sort of ORDER_SORTS) expect(problem.detail).toContain(sort);
    const byTotal = (await list('sort=total&limit=1', customer.token)).json<OrderListBody>();
    const res = await list(`sort=-total&limit=1&cursor=${encodeURIComponent(String(byTotal.next_cursor))}`, customer.token);
    expect(problemFields(expectProblem(res, 400, 'malformed-request'))).toEqual(['cursor']);
  });
});

describe('the typed caller takes the same filters as input', () => {
  let harness: TestHarness;
  beforeAll(async () => {
    // On the app's database (closed with the app, so the harness is not closed here).
    harness = await createTestHarness({ database: t.database });
  });

  it('metadata, created range and sort through createCaller', async () => {
    const { user, caller } = await harness.createUser();
    const product = await harness.caller({ role: 'admin' }).products.create({ sku: `CALLER-${user.id}`, name: 'Mug', category: 'kitchen', price: 300, stock: 100 });
    const a = await caller.orders.create({ items: [{ product_id: product.id, quantity: 3 }], metadata: { erp_id: 'A' } });
    const b = await caller.orders.create({ items: [{ product_id: product.id, quantity: 1 }], metadata: { erp_id: 'B' } });
    expect((await caller.orders.list({ metadata: { erp_id: 'B' } })).data.map((o) => o.id)).toEqual([b.id]);
    expect((await caller.orders.list({ sort: 'total' })).data.map((o) => o.id)).toEqual([b.id, a.id]);
    expect((await caller.orders.list({ sort: '-total', created_gte: a.created_at })).data.map((o) => o.id)).toEqual([a.id, b.id]);
    await expect(caller.orders.list({ customer_id: (await harness.createUser()).user.id })).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});
