/**
 * Products over HTTP, rule by rule as docs/api.md states them (#shape-of-the-api, #products, #writes, #reads-lists-and-caching, #errors).
 * One app and one database for the file; each test makes its own products, and tests that
 * look at listings use a category of their own so they never see each other's data.
 */
import type { LightMyRequestResponse } from 'fastify';
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.ts';
import { alter } from '../helpers/bodies.ts';
import { expectProblem, problemFields as fieldsOf } from '../helpers/problems.ts';
import {
  createProduct as createProductAs,
  freshCategory,
  productInput,
  PRODUCTS as BASE,
  writableProduct as writable,
  type ProductBody,
  type ProductInputBody,
  type ProductListBody as ListBody,
} from '../helpers/products.ts';

const t = useTestApp();

const createProduct = (overrides: Partial<ProductInputBody> = {}): Promise<ProductBody> => createProductAs(t, overrides);

async function getProduct(id: number, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.request({ method: 'GET', url: `${BASE}/${id}`, headers });
}

/** Every live product id, in id order, read through the listing (all pages). */
async function allListedIds(): Promise<number[]> {
  const ids: number[] = [];
  for (let page = 1; ; page++) {
    const res = await t.request({ method: 'GET', url: `${BASE}?sort=id&limit=100&page=${page}` });
    expect(res.statusCode).toBe(200);
    const body = res.json<ListBody>();
    ids.push(...body.data.map((p) => p.id));
    if (!body.has_more) return ids;
  }
}

async function listCategory(category: string, query = ''): Promise<LightMyRequestResponse> {
  return t.request({ method: 'GET', url: `${BASE}?category=${encodeURIComponent(category)}${query}` });
}

/** RFC 8288 `Link` header -> { rel: target }. */
function parseLinks(header: string | string[] | number | undefined): Record<string, string> {
  const links: Record<string, string> = {};
  if (typeof header !== 'string') return links;
  for (const part of header.split(',')) {
    const match = /<([^>]*)>\s*;\s*rel="([^"]+)"/.exec(part.trim());
    if (match?.[1] !== undefined && match[2] !== undefined) links[match[2]] = match[1];
  }
  return links;
}

const httpDate = (ms: number) => new Date(ms).toUTCString();

describe('POST /products creates a product: 201, Location in the canonical /api/v1 form, body the new product', () => {
  it('answers 201 with Location /api/v1/products/{id} and the product, which GET then answers', async () => {
    const body = productInput();
    const res = await t.request({ method: 'POST', url: BASE, payload: body, token: t.admin.token });
    expect(res.statusCode).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const product = res.json<ProductBody>();
    expect(product).toMatchObject(body);
    expect(Number.isInteger(product.id)).toBe(true);
    expect(res.headers.location).toBe(`/api/v1/products/${product.id}`);
    const read = await t.request({ method: 'GET', url: String(res.headers.location) });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(product);
  });

  it('assigns created_at and updated_at as RFC 3339 UTC timestamps', async () => {
    const product = await createProduct();
    for (const stamp of [product.created_at, product.updated_at]) {
      expect(stamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
      expect(Number.isNaN(Date.parse(stamp))).toBe(false);
    }
  });

  it('currency defaults to USD and an omitted description is null', async () => {
    const body = alter(productInput(), { currency: undefined, description: undefined });
    const res = await t.request({ method: 'POST', url: BASE, payload: body, token: t.admin.token });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ currency: 'USD', description: null });
  });

  it('POST /api/products (unversioned alias) also creates, and Location still uses /api/v1', async () => {
    const res = await t.request({ method: 'POST', url: '/api/products', payload: productInput(), token: t.admin.token });
    expect(res.statusCode).toBe(201);
    const product = res.json<ProductBody>();
    expect(res.headers.location).toBe(`/api/v1/products/${product.id}`);
  });
});

describe('/api/products is an alias of /api/v1/products and answers the same', () => {
  it('GET /api/products/{id} answers the same body and ETag as /api/v1/products/{id}', async () => {
    const product = await createProduct();
    const canonical = await t.request({ method: 'GET', url: `/api/v1/products/${product.id}` });
    const alias = await t.request({ method: 'GET', url: `/api/products/${product.id}` });
    expect(alias.statusCode).toBe(200);
    expect(alias.json()).toEqual(canonical.json());
    expect(alias.headers.etag).toBe(canonical.headers.etag);
    expect(alias.headers['cache-control']).toBe(canonical.headers['cache-control']);
  });

  it('GET /api/products?category=... answers the same list as /api/v1/products?category=...', async () => {
    const category = freshCategory();
    await createProduct({ category });
    await createProduct({ category });
    const canonical = await t.request({ method: 'GET', url: `/api/v1/products?category=${category}` });
    const alias = await t.request({ method: 'GET', url: `/api/products?category=${category}` });
    expect(alias.statusCode).toBe(200);
    expect(alias.json()).toEqual(canonical.json());
    expect(canonical.json<ListBody>().data).toHaveLength(2);
  });

  it('PUT and DELETE work through the alias too', async () => {
    const product = await createProduct();
    const put = await t.request({
      method: 'PUT',
      url: `/api/products/${product.id}`,
      payload: { ...writable(product), name: 'Renamed via alias' },
      token: t.admin.token,
    });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({ id: product.id, name: 'Renamed via alias' });
    const del = await t.request({ method: 'DELETE', url: `/api/products/${product.id}`, token: t.admin.token });
    expect(del.statusCode).toBe(204);
    expectProblem(await getProduct(product.id), 410, 'gone');
  });
});

describe('sku is unique: a duplicate answers 409 duplicate-resource', () => {
  it('a second product with the same sku answers 409 /problems/duplicate-resource and is not created', async () => {
    const first = await createProduct();
    const before = await allListedIds();
    const res = await t.request({ method: 'POST', url: BASE, payload: productInput({ sku: first.sku }), token: t.admin.token });
    expectProblem(res, 409, 'duplicate-resource', { instance: BASE });
    expect(await allListedIds()).toEqual(before);
  });
});

describe('sku is unique even under concurrent creates', () => {
  it('three simultaneous POSTs with one sku: exactly one 201, the others 409 duplicate-resource', async () => {
    const sku = `RACE-${randomBytes(4).toString('hex')}`;
    const responses = await Promise.all(
      [1, 2, 3].map(() => t.request({ method: 'POST', url: BASE, payload: productInput({ sku }), token: t.admin.token })),
    );
    expect(responses.map((r) => r.statusCode).sort()).toEqual([201, 409, 409]);
    for (const res of responses.filter((r) => r.statusCode === 409)) expectProblem(res, 409, 'duplicate-resource');
  });
});

describe('field bounds: an invalid body answers 422 validation-error with one errors entry per bad field', () => {
  const longer = (n: number) => 'x'.repeat(n);
  const cases: [string, Record<string, unknown>, string][] = [
    ['sku of 0 chars', { sku: '' }, 'sku'],
    ['sku of 65 chars', { sku: longer(65) }, 'sku'],
    ['name of 0 chars', { name: '' }, 'name'],
    ['name of 201 chars', { name: longer(201) }, 'name'],
    ['description of 2001 chars', { description: longer(2001) }, 'description'],
    ['category of 0 chars', { category: '' }, 'category'],
    ['category of 65 chars', { category: longer(65) }, 'category'],
    ['a negative price', { price: -1 }, 'price'],
    ['a non-integer price', { price: 10.5 }, 'price'],
    ['a price given as a string', { price: '1000' }, 'price'],
    ['a negative stock', { stock: -1 }, 'stock'],
    ['a non-integer stock', { stock: 1.5 }, 'stock'],
    ['a lower-case currency', { currency: 'usd' }, 'currency'],
    ['a currency of 2 letters', { currency: 'US' }, 'currency'],
    ['a currency of 4 letters', { currency: 'EURO' }, 'currency'],
    ['a missing name', { name: undefined }, 'name'],
    ['a missing price', { price: undefined }, 'price'],
  ];

  it.each(cases)('%s answers 422 naming only that field', async (_label, overrides, field) => {
    const body = alter(productInput(), overrides);
    const res = await t.request({ method: 'POST', url: BASE, payload: body, token: t.admin.token });
    const problem = expectProblem(res, 422, 'validation-error', { instance: BASE });
    expect(fieldsOf(problem)).toEqual([field]);
    expect(problem.errors?.[0]?.message.length).toBeGreaterThan(0);
  });

  it('an unknown field answers 422 with the message "Unknown field" (typos are not dropped)', async () => {
    const res = await t.request({ method: 'POST', url: BASE, payload: { ...productInput(), colour: 'red' }, token: t.admin.token });
    const problem = expectProblem(res, 422, 'validation-error', { instance: BASE });
    expect(problem.errors).toEqual([{ field: 'colour', message: 'Unknown field' }]);
  });

  it('several bad fields answer one errors entry each', async () => {
    const body = alter(productInput(), { sku: '', name: 'x'.repeat(201), price: -5, currency: 'dollars', stock: 0.5, typo: 1 });
    const res = await t.request({ method: 'POST', url: BASE, payload: body, token: t.admin.token });
    const problem = expectProblem(res, 422, 'validation-error', { instance: BASE });
    expect(fieldsOf(problem)).toEqual(['currency', 'name', 'price', 'sku', 'stock', 'typo']);
  });

  it('a price or stock too large to store (2^31) answers 422 naming the field, never 500', async () => {
    const res = await t.request({ method: 'POST', url: BASE, payload: productInput({ price: 2 ** 31, stock: 2 ** 31 }), token: t.admin.token });
    expect(fieldsOf(expectProblem(res, 422, 'validation-error', { instance: BASE }))).toEqual(['price', 'stock']);
  });

  it('a number beyond the safe-integer range still gives exactly one errors entry for its field', async () => {
    const res = await t.request({ method: 'POST', url: BASE, payload: productInput({ stock: 1e300 }), token: t.admin.token });
    expect(fieldsOf(expectProblem(res, 422, 'validation-error', { instance: BASE }))).toEqual(['stock']);
  });

  it('a text field containing a NUL character answers 422 naming the field, never 500', async () => {
    const res = await t.request({ method: 'POST', url: BASE, payload: productInput({ name: 'Bad\u0000name' }), token: t.admin.token });
    expect(fieldsOf(expectProblem(res, 422, 'validation-error', { instance: BASE }))).toEqual(['name']);
  });

  it.each([
    ['name', String.raw`Red \u001b[2J tee`],
    ['sku', String.raw`SKU-\u0085`],
    ['category', String.raw`apparel\n`],
    ['name', String.raw`Red \ud800 tee`],
    ['description', String.raw`Soft \u001b cotton`],
    ['description', String.raw`Soft \udfff cotton`],
  ])('%s with a control character or a lone surrogate (%s) answers 422 naming it (regression: accepted or silently replaced)', async (field, escaped) => {
    const input = alter(productInput(), { [field]: undefined });
    const body = JSON.stringify(input).replace(/}$/, `,"${field}":"${escaped}"}`);
    const res = await t.request({ method: 'POST', url: BASE, payload: body, headers: { 'content-type': 'application/json' }, token: t.admin.token });
    expect(fieldsOf(expectProblem(res, 422, 'validation-error', { instance: BASE }))).toEqual([field]);
  });

  it('a description may hold tabs and line breaks (it is multi-line text)', async () => {
    const description = 'Soft cotton.\r\n\tMachine washable.\nMade in Portugal.';
    const res = await t.request({ method: 'POST', url: BASE, payload: productInput({ description }), token: t.admin.token });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json<{ description: string }>().description).toBe(description);
  });

  it('a body that is not a JSON object answers 422', async () => {
    const res = await t.request({ method: 'POST', url: BASE, payload: [productInput()], token: t.admin.token });
    expectProblem(res, 422, 'validation-error', { instance: BASE });
  });

  it('values exactly at the bounds are accepted (sku 1 and 64, name 200, description 0 and 2000, category 64, price and stock 0)', async () => {
    const edge = [
      { sku: randomBytes(32).toString('hex'), name: 'x'.repeat(200), description: 'd'.repeat(2000), category: 'c'.repeat(64), price: 0, stock: 0 },
      { sku: randomBytes(1).toString('hex').slice(0, 1), name: 'n', description: '' },
    ];
    for (const overrides of edge) {
      const res = await t.request({ method: 'POST', url: BASE, payload: productInput(overrides), token: t.admin.token });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject(overrides);
    }
  });

  it('bad input changes nothing: the listing is the same after every rejected body', async () => {
    const before = await allListedIds();
    for (const [, overrides] of cases) {
      const body = productInput(overrides);
      await t.request({ method: 'POST', url: BASE, payload: body, token: t.admin.token });
    }
    await t.request({ method: 'POST', url: BASE, payload: { ...productInput(), colour: 'red' }, token: t.admin.token });
    expect(await allListedIds()).toEqual(before);
  });
});

describe('writes are admin-only (or a service client with products:write); reads are public', () => {
  it('POST without a token answers 401 with WWW-Authenticate: Bearer, and creates nothing', async () => {
    const before = await allListedIds();
    const res = await t.request({ method: 'POST', url: BASE, payload: productInput() });
    expectProblem(res, 401, 'unauthorized', { instance: BASE });
    expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/);
    expect(await allListedIds()).toEqual(before);
  });

  it('PUT and DELETE without a token answer 401 with WWW-Authenticate', async () => {
    const product = await createProduct();
    const put = await t.request({ method: 'PUT', url: `${BASE}/${product.id}`, payload: writable(product) });
    expectProblem(put, 401, 'unauthorized');
    expect(put.headers['www-authenticate']).toMatch(/^Bearer\b/);
    const del = await t.request({ method: 'DELETE', url: `${BASE}/${product.id}` });
    expectProblem(del, 401, 'unauthorized');
    expect(del.headers['www-authenticate']).toMatch(/^Bearer\b/);
    expect((await getProduct(product.id)).json()).toEqual(product);
  });

  it('an invalid token answers 401 with WWW-Authenticate error="invalid_token"', async () => {
    const res = await t.request({ method: 'POST', url: BASE, payload: productInput(), token: 'aaa.bbb.ccc' });
    expectProblem(res, 401, 'unauthorized');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer\b.*error="invalid_token"/);
  });

  it('a customer answers 403 on POST, PUT and DELETE, and nothing changes', async () => {
    const customer = await t.createUser('customer');
    const product = await createProduct();
    const before = await allListedIds();
    expectProblem(await t.request({ method: 'POST', url: BASE, payload: productInput(), token: customer.token }), 403, 'forbidden', { instance: BASE });
    expectProblem(
      await t.request({ method: 'PUT', url: `${BASE}/${product.id}`, payload: { ...writable(product), name: 'Hijacked' }, token: customer.token }),
      403,
      'forbidden',
    );
    expectProblem(await t.request({ method: 'DELETE', url: `${BASE}/${product.id}`, token: customer.token }), 403, 'forbidden');
    expect(await allListedIds()).toEqual(before);
    expect((await getProduct(product.id)).json()).toEqual(product);
  });

  it('a service client with the products:write scope may POST, PUT and DELETE', async () => {
    const token = await t.serviceToken(['products:write']);
    const created = await t.request({ method: 'POST', url: BASE, payload: productInput(), token });
    expect(created.statusCode).toBe(201);
    const product = created.json<ProductBody>();
    const put = await t.request({ method: 'PUT', url: `${BASE}/${product.id}`, payload: { ...writable(product), price: 1 }, token });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({ price: 1 });
    const del = await t.request({ method: 'DELETE', url: `${BASE}/${product.id}`, token });
    expect(del.statusCode).toBe(204);
  });

  it('a service client without the products:write scope answers 403 insufficient-scope on POST, PUT and DELETE', async () => {
    const token = await t.serviceToken(['orders:read', 'orders:write']);
    const product = await createProduct();
    expectProblem(await t.request({ method: 'POST', url: BASE, payload: productInput(), token }), 403, 'insufficient-scope');
    expectProblem(await t.request({ method: 'PUT', url: `${BASE}/${product.id}`, payload: writable(product), token }), 403, 'insufficient-scope');
    expectProblem(await t.request({ method: 'DELETE', url: `${BASE}/${product.id}`, token }), 403, 'insufficient-scope');
    expect((await getProduct(product.id)).statusCode).toBe(200);
  });

  it('GET one and GET list need no token', async () => {
    const product = await createProduct();
    const one = await getProduct(product.id);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(product);
    const list = await t.request({ method: 'GET', url: BASE });
    expect(list.statusCode).toBe(200);
  });

  it('a customer may read products', async () => {
    const customer = await t.createUser('customer');
    const product = await createProduct();
    const res = await t.request({ method: 'GET', url: `${BASE}/${product.id}`, token: customer.token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(product);
  });
});

describe('GET /products/{id} reads one product; an unknown id is 404', () => {
  it('an id that never existed answers 404 /problems/not-found', async () => {
    expectProblem(await getProduct(2_000_000_000), 404, 'not-found', { instance: `${BASE}/2000000000` });
  });

  it('an integer id beyond the id range answers 404, not 422', async () => {
    expectProblem(await t.request({ method: 'GET', url: `${BASE}/99999999999` }), 404, 'not-found');
  });
});

describe('GET /products lists: category is an exact match', () => {
  it('returns only the products whose category equals the filter, not prefixes or other cases', async () => {
    const category = freshCategory();
    const a = await createProduct({ category });
    const b = await createProduct({ category });
    await createProduct({ category: `${category}-kids` });
    await createProduct({ category: category.toUpperCase() });
    await createProduct({ category: category.slice(0, -1) });
    const res = await listCategory(category);
    expect(res.statusCode).toBe(200);
    expect(res.json<ListBody>().data.map((p) => p.id)).toEqual([a.id, b.id]);
    expect(res.json<ListBody>().data.every((p) => p.category === category)).toBe(true);
  });

  it('a category nothing has answers an empty page', async () => {
    const res = await listCategory(freshCategory());
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [], page: 1, limit: 20, has_more: false, next_cursor: null, prev_cursor: null });
  });

  it('a category filter containing a NUL character answers an empty page or 422, never 500', async () => {
    const res = await t.request({ method: 'GET', url: `${BASE}?category=a%00b` });
    expect([200, 422], res.body).toContain(res.statusCode);
    if (res.statusCode === 200) expect(res.json<ListBody>().data).toEqual([]);
    else expectProblem(res, 422, 'validation-error', { instance: BASE });
  });

  it('unknown query parameters answer 400 unknown-parameter naming each, never the unfiltered list (docs/api.md#unknown-parameters)', async () => {
    const category = freshCategory();
    await createProduct({ category });
    const res = await listCategory(category, '&colour=red&utm_source=x');
    expect(fieldsOf(expectProblem(res, 400, 'unknown-parameter'))).toEqual(['colour', 'utm_source']);
  });
});

describe('GET /products sort: a comma list of name, price, created_at, id, each optionally prefixed - for descending', () => {
  let category: string;
  let banana: ProductBody;
  let apple1: ProductBody;
  let apple2: ProductBody;
  let cherry: ProductBody;

  beforeAll(async () => {
    category = freshCategory();
    banana = await createProduct({ category, name: 'Banana', price: 300 });
    apple1 = await createProduct({ category, name: 'Apple', price: 100 });
    apple2 = await createProduct({ category, name: 'Apple', price: 200 });
    cherry = await createProduct({ category, name: 'Cherry', price: 150 });
  });

  const ids = async (sort: string) => {
    const res = await listCategory(category, `&sort=${encodeURIComponent(sort)}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<ListBody>().data.map((p) => p.id);
  };

  it('sort=price orders by price ascending', async () => {
    expect(await ids('price')).toEqual([apple1.id, cherry.id, apple2.id, banana.id]);
  });

  it('sort=-price orders by price descending', async () => {
    expect(await ids('-price')).toEqual([banana.id, apple2.id, cherry.id, apple1.id]);
  });

  it('sort=name,-id orders by name, then id descending among equal names', async () => {
    expect(await ids('name,-id')).toEqual([apple2.id, apple1.id, banana.id, cherry.id]);
  });

  it('sort=-name orders by name descending', async () => {
    const res = await listCategory(category, '&sort=-name');
    expect(res.json<ListBody>().data.map((p) => p.name)).toEqual(['Cherry', 'Banana', 'Apple', 'Apple']);
  });

  it('sort=id and sort=-id order by id', async () => {
    expect(await ids('id')).toEqual([banana.id, apple1.id, apple2.id, cherry.id]);
    expect(await ids('-id')).toEqual([cherry.id, apple2.id, apple1.id, banana.id]);
  });

  it('sort=created_at orders oldest first', async () => {
    expect(await ids('created_at')).toEqual([banana.id, apple1.id, apple2.id, cherry.id]);
  });

  it('a field sorted again changes nothing: its first mention counts, however long the list', async () => {
    expect(await ids('name,-name,-price')).toEqual([apple2.id, apple1.id, banana.id, cherry.id]);
    expect(await ids(['-price', ...Array.from({ length: 200 }, (_, i) => (i % 2 ? 'name' : '-price'))].join(','))).toEqual([
      banana.id,
      apple2.id,
      cherry.id,
      apple1.id,
    ]);
  });

  it.each(['stock', 'price,colour', '-password', '--price', 'name,', 'price desc'])('sort=%s (a field outside the list) answers 422 naming sort', async (sort) => {
    const res = await listCategory(category, `&sort=${encodeURIComponent(sort)}`);
    const problem = expectProblem(res, 422, 'validation-error', { instance: BASE });
    expect(fieldsOf(problem)).toEqual(['sort']);
  });
});

describe('GET /products pages: {data,page,limit,has_more,next_cursor,prev_cursor}, page >= 1, limit 1-100 default 20, Link next/prev by cursor', () => {
  let category: string;
  let all: ProductBody[];

  beforeAll(async () => {
    category = freshCategory();
    all = [];
    for (let i = 0; i < 21; i++) all.push(await createProduct({ category }));
  });

  it('the default page is 1 and the default limit 20; has_more says a next page exists', async () => {
    const res = await listCategory(category);
    expect(res.statusCode).toBe(200);
    const body = res.json<ListBody>();
    expect(Object.keys(body).sort()).toEqual(['data', 'has_more', 'limit', 'next_cursor', 'page', 'prev_cursor']);
    expect(body).toMatchObject({ page: 1, limit: 20, has_more: true, prev_cursor: null });
    expect(body.next_cursor).toEqual(expect.any(String));
    expect(body.data.map((p) => p.id)).toEqual(all.slice(0, 20).map((p) => p.id));
    expect(body.data[0]).toEqual(all[0]);
  });

  it('the first page has a Link rel="next" and no rel="prev"; following next gives the last page', async () => {
    const first = await listCategory(category);
    const links = parseLinks(first.headers.link);
    expect(links.prev).toBeUndefined();
    expect(links.next).toBeDefined();
    const nextUrl = new URL(String(links.next), 'http://localhost');
    expect(nextUrl.pathname).toBe(BASE);
    expect(nextUrl.searchParams.get('page')).toBeNull();
    expect(nextUrl.searchParams.get('cursor')).toBe(first.json<ListBody>().next_cursor);
    expect(nextUrl.searchParams.get('limit')).toBe('20');
    expect(nextUrl.searchParams.get('category')).toBe(category);

    const second = await t.request({ method: 'GET', url: String(links.next) });
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual({ data: [all[20]], page: 2, limit: 20, has_more: false, next_cursor: null, prev_cursor: expect.any(String) });
    const secondLinks = parseLinks(second.headers.link);
    expect(secondLinks.next).toBeUndefined();
    expect(secondLinks.prev).toBeDefined();
    const back = await t.request({ method: 'GET', url: String(secondLinks.prev) });
    expect(back.json<ListBody>()).toMatchObject({ page: 1, has_more: true, prev_cursor: null });
    expect(back.json<ListBody>().data.map((p) => p.id)).toEqual(all.slice(0, 20).map((p) => p.id));
  });

  it('a middle page links both next and prev, and keeps the other query parameters', async () => {
    const res = await listCategory(category, '&limit=5&page=2&sort=-id');
    const body = res.json<ListBody>();
    expect(body).toMatchObject({ page: 2, limit: 5, has_more: true });
    const newestFirst = [...all].reverse();
    expect(body.data.map((p) => p.id)).toEqual(newestFirst.slice(5, 10).map((p) => p.id));
    const links = parseLinks(res.headers.link);
    const next = new URL(String(links.next), 'http://localhost');
    const prev = new URL(String(links.prev), 'http://localhost');
    expect([next.searchParams.get('page'), prev.searchParams.get('page')]).toEqual([null, null]);
    expect([next.searchParams.get('cursor'), prev.searchParams.get('cursor')]).toEqual([body.next_cursor, body.prev_cursor]);
    const [third, first] = await Promise.all([t.request({ method: 'GET', url: String(links.next) }), t.request({ method: 'GET', url: String(links.prev) })]);
    expect(third.json<ListBody>()).toMatchObject({ page: 3, limit: 5 });
    expect(third.json<ListBody>().data.map((p) => p.id)).toEqual(newestFirst.slice(10, 15).map((p) => p.id));
    expect(first.json<ListBody>()).toMatchObject({ page: 1, limit: 5, prev_cursor: null });
    expect(first.json<ListBody>().data.map((p) => p.id)).toEqual(newestFirst.slice(0, 5).map((p) => p.id));
    for (const url of [next, prev]) {
      expect(url.searchParams.get('limit')).toBe('5');
      expect(url.searchParams.get('sort')).toBe('-id');
      expect(url.searchParams.get('category')).toBe(category);
    }
  });

  it('walking every page by next links visits each product exactly once', async () => {
    const seen: number[] = [];
    let url: string | undefined = `${BASE}?category=${category}&limit=4`;
    while (url !== undefined) {
      const res = await t.request({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      seen.push(...res.json<ListBody>().data.map((p) => p.id));
      url = parseLinks(res.headers.link).next;
    }
    expect(seen).toEqual(all.map((p) => p.id));
  });

  it('a single page that holds everything has no Link header', async () => {
    const res = await listCategory(category, '&limit=100');
    expect(res.json<ListBody>()).toMatchObject({ page: 1, limit: 100, has_more: false });
    expect(res.json<ListBody>().data).toHaveLength(21);
    expect(res.headers.link).toBeUndefined();
  });

  it('a page past the end answers an empty data array and has_more false', async () => {
    const res = await listCategory(category, '&page=9');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [], page: 9, limit: 20, has_more: false, next_cursor: null, prev_cursor: null });
    // No row to make a cursor from: the previous page by number (docs/api.md#cursor-paging).
    const links = parseLinks(res.headers.link);
    expect(links.next).toBeUndefined();
    expect(new URL(String(links.prev), 'http://localhost').searchParams.get('page')).toBe('8');
  });

  it.each([
    ['limit=101', 'limit'],
    ['limit=0', 'limit'],
    ['limit=-1', 'limit'],
    ['page=0', 'page'],
    ['page=-3', 'page'],
  ])('%s (an integer out of range) answers 422 naming the parameter', async (query, field) => {
    const problem = expectProblem(await listCategory(category, `&${query}`), 422, 'validation-error', { instance: BASE });
    expect(fieldsOf(problem)).toEqual([field]);
  });

  it.each([
    ['page=abc', 'page'],
    ['limit=1.5', 'limit'],
    ['limit=ten', 'limit'],
    ['page=2.0', 'page'],
  ])('%s (not an integer) answers 400 malformed-request naming the parameter', async (query, field) => {
    const problem = expectProblem(await listCategory(category, `&${query}`), 400, 'malformed-request', { instance: BASE });
    expect(fieldsOf(problem)).toEqual([field]);
  });

  it('limit=100 and limit=1 are accepted', async () => {
    expect((await listCategory(category, '&limit=100')).statusCode).toBe(200);
    const one = await listCategory(category, '&limit=1');
    expect(one.json<ListBody>()).toMatchObject({ limit: 1, has_more: true });
    expect(one.json<ListBody>().data).toHaveLength(1);
  });
});

describe('PUT /products/{id} replaces the whole product', () => {
  it('answers 200 with the replaced product, which GET then answers', async () => {
    const product = await createProduct();
    const replacement = productInput({ category: freshCategory() });
    const res = await t.request({ method: 'PUT', url: `${BASE}/${product.id}`, payload: replacement, token: t.admin.token });
    expect(res.statusCode).toBe(200);
    const replaced = res.json<ProductBody>();
    expect(replaced).toMatchObject({ ...replacement, id: product.id, created_at: product.created_at });
    expect((await getProduct(product.id)).json()).toEqual(replaced);
  });

  it('an omitted description becomes null', async () => {
    const product = await createProduct({ description: 'Will be dropped' });
    const body = alter(writable(product), { description: undefined });
    const res = await t.request({ method: 'PUT', url: `${BASE}/${product.id}`, payload: body, token: t.admin.token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ description: null });
    expect((await getProduct(product.id)).json()).toMatchObject({ description: null });
  });

  it('GET-modify-PUT works: read-only id, created_at, updated_at sent back are ignored', async () => {
    const product = await createProduct();
    const read = (await getProduct(product.id)).json<ProductBody>();
    const res = await t.request({
      method: 'PUT',
      url: `${BASE}/${product.id}`,
      payload: { ...read, name: 'Modified name' },
      token: t.admin.token,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: product.id, name: 'Modified name', created_at: product.created_at });
  });

  it('read-only fields with other values are ignored too: the path id and the stored created_at win', async () => {
    const product = await createProduct();
    const other = await createProduct();
    const res = await t.request({
      method: 'PUT',
      url: `${BASE}/${product.id}`,
      payload: { ...writable(product), id: other.id, created_at: '1999-01-01T00:00:00.000Z', updated_at: '1999-01-01T00:00:00.000Z', name: 'New' },
      token: t.admin.token,
    });
    expect(res.statusCode, res.body).toBe(200);
    const replaced = res.json<ProductBody>();
    expect(replaced).toMatchObject({ id: product.id, name: 'New', created_at: product.created_at });
    expect(replaced.updated_at).not.toBe('1999-01-01T00:00:00.000Z');
    expect((await getProduct(other.id)).json()).toEqual(other);
  });

  it('an unknown field answers 422 "Unknown field" and changes nothing', async () => {
    const product = await createProduct();
    const res = await t.request({
      method: 'PUT',
      url: `${BASE}/${product.id}`,
      payload: { ...writable(product), name: 'Should not stick', prise: 5 },
      token: t.admin.token,
    });
    const problem = expectProblem(res, 422, 'validation-error', { instance: `${BASE}/${product.id}` });
    expect(problem.errors).toEqual([{ field: 'prise', message: 'Unknown field' }]);
    expect((await getProduct(product.id)).json()).toEqual(product);
  });

  it('a body out of bounds answers 422 per bad field and changes nothing', async () => {
    const product = await createProduct();
    const res = await t.request({
      method: 'PUT',
      url: `${BASE}/${product.id}`,
      payload: { ...writable(product), name: '', price: -1 },
      token: t.admin.token,
    });
    expect(fieldsOf(expectProblem(res, 422, 'validation-error'))).toEqual(['name', 'price']);
    expect((await getProduct(product.id)).json()).toEqual(product);
  });

  it('a PUT without a required field answers 422 naming it', async () => {
    const product = await createProduct();
    const body = alter(writable(product), { sku: undefined });
    const res = await t.request({ method: 'PUT', url: `${BASE}/${product.id}`, payload: body, token: t.admin.token });
    expect(fieldsOf(expectProblem(res, 422, 'validation-error'))).toEqual(['sku']);
  });

  it('repeating a PUT changes nothing: same body, same updated_at, same ETag', async () => {
    const product = await createProduct();
    const body = { ...writable(product), name: 'Idempotent' };
    const first = await t.request({ method: 'PUT', url: `${BASE}/${product.id}`, payload: body, token: t.admin.token });
    const second = await t.request({ method: 'PUT', url: `${BASE}/${product.id}`, payload: body, token: t.admin.token });
    expect(first.statusCode).toBe(200);
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual(first.json());
    expect(second.headers.etag).toBeDefined();
    expect(second.headers.etag).toBe(first.headers.etag);
    const read = await getProduct(product.id);
    expect(read.headers.etag).toBe(first.headers.etag);
  });

  it('a PUT with the current values changes nothing, not even updated_at', async () => {
    const product = await createProduct();
    const before = await getProduct(product.id);
    const res = await t.request({ method: 'PUT', url: `${BASE}/${product.id}`, payload: writable(product), token: t.admin.token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(product);
    expect(res.headers.etag).toBe(before.headers.etag);
  });

  it('PUT to an id that does not exist answers 404', async () => {
    const res = await t.request({ method: 'PUT', url: `${BASE}/2000000001`, payload: productInput(), token: t.admin.token });
    expectProblem(res, 404, 'not-found', { instance: `${BASE}/2000000001` });
  });

  it('PUT to an unknown id creates nothing', async () => {
    const before = await allListedIds();
    const body = productInput();
    await t.request({ method: 'PUT', url: `${BASE}/2000000002`, payload: body, token: t.admin.token });
    expect(await allListedIds()).toEqual(before);
  });

  it('PUT taking another product\'s sku answers 409 duplicate-resource and changes nothing', async () => {
    const a = await createProduct();
    const b = await createProduct();
    const res = await t.request({ method: 'PUT', url: `${BASE}/${b.id}`, payload: { ...writable(b), sku: a.sku, name: 'Nope' }, token: t.admin.token });
    expectProblem(res, 409, 'duplicate-resource', { instance: `${BASE}/${b.id}` });
    expect((await getProduct(b.id)).json()).toEqual(b);
    expect((await getProduct(a.id)).json()).toEqual(a);
  });

  it('PUT keeping the product\'s own sku is not a duplicate', async () => {
    const product = await createProduct();
    const res = await t.request({ method: 'PUT', url: `${BASE}/${product.id}`, payload: { ...writable(product), price: 7 }, token: t.admin.token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ sku: product.sku, price: 7 });
  });
});

describe('DELETE /products/{id} archives: 204, then GET is 410 Gone, it leaves listings, a repeated DELETE is 404', () => {
  it('answers 204 with no body', async () => {
    const product = await createProduct();
    const res = await t.request({ method: 'DELETE', url: `${BASE}/${product.id}`, token: t.admin.token });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
  });

  it('GET of an archived product answers 410 /problems/gone', async () => {
    const product = await createProduct();
    await t.request({ method: 'DELETE', url: `${BASE}/${product.id}`, token: t.admin.token });
    expectProblem(await getProduct(product.id), 410, 'gone', { instance: `${BASE}/${product.id}` });
  });

  it('a repeated DELETE answers 404 /problems/not-found', async () => {
    const product = await createProduct();
    expect((await t.request({ method: 'DELETE', url: `${BASE}/${product.id}`, token: t.admin.token })).statusCode).toBe(204);
    const again = await t.request({ method: 'DELETE', url: `${BASE}/${product.id}`, token: t.admin.token });
    expectProblem(again, 404, 'not-found', { instance: `${BASE}/${product.id}` });
  });

  it('DELETE of an id that never existed answers 404', async () => {
    expectProblem(await t.request({ method: 'DELETE', url: `${BASE}/2000000003`, token: t.admin.token }), 404, 'not-found');
  });

  it('an archived product leaves listings, filtered or not', async () => {
    const category = freshCategory();
    const kept = await createProduct({ category });
    const archived = await createProduct({ category });
    await t.request({ method: 'DELETE', url: `${BASE}/${archived.id}`, token: t.admin.token });
    expect((await listCategory(category)).json<ListBody>().data.map((p) => p.id)).toEqual([kept.id]);
    const everything = await allListedIds();
    expect(everything).toContain(kept.id);
    expect(everything).not.toContain(archived.id);
  });

  it('the sku of an archived product stays taken (orders keep referring to the product)', async () => {
    const product = await createProduct();
    await t.request({ method: 'DELETE', url: `${BASE}/${product.id}`, token: t.admin.token });
    const res = await t.request({ method: 'POST', url: BASE, payload: productInput({ sku: product.sku }), token: t.admin.token });
    expectProblem(res, 409, 'duplicate-resource');
  });
});

describe('caching: products and product lists are Cache-Control public, max-age=60 with an ETag', () => {
  it('GET one carries Cache-Control public, max-age=60, a strong ETag and Last-Modified from updated_at', async () => {
    const product = await createProduct();
    const res = await getProduct(product.id);
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    expect(res.headers.etag).toMatch(/^"[^"]+"$/);
    expect(res.headers['last-modified']).toBe(new Date(product.updated_at).toUTCString());
  });

  it('GET list carries Cache-Control public, max-age=60 and an ETag', async () => {
    const res = await listCategory(freshCategory());
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    expect(res.headers.etag).toMatch(/^"[^"]+"$/);
  });

  it('the ETag is stable while the product is unchanged and changes when it changes', async () => {
    const product = await createProduct();
    const first = await getProduct(product.id);
    const again = await getProduct(product.id);
    expect(again.headers.etag).toBe(first.headers.etag);
    const put = await t.request({ method: 'PUT', url: `${BASE}/${product.id}`, payload: { ...writable(product), stock: product.stock + 1 }, token: t.admin.token });
    expect(put.statusCode).toBe(200);
    const after = await getProduct(product.id);
    expect(after.headers.etag).toBeDefined();
    expect(after.headers.etag).not.toBe(first.headers.etag);
    expect(put.headers.etag).toBe(after.headers.etag);
  });

  it('the list ETag changes when a product joins the list', async () => {
    const category = freshCategory();
    await createProduct({ category });
    const before = await listCategory(category);
    await createProduct({ category });
    const after = await listCategory(category);
    expect(after.headers.etag).not.toBe(before.headers.etag);
  });
});

describe('conditional GET: If-None-Match or If-Modified-Since on an unchanged resource or list answers 304', () => {
  it('If-None-Match with the current tag answers 304 with no body, the same ETag and Cache-Control', async () => {
    const product = await createProduct();
    const first = await getProduct(product.id);
    const etag = String(first.headers.etag);
    const res = await getProduct(product.id, { 'if-none-match': etag });
    expect(res.statusCode).toBe(304);
    expect(res.body).toBe('');
    expect(res.headers.etag).toBe(etag);
    expect(res.headers['cache-control']).toBe('public, max-age=60');
  });

  it('If-None-Match listing several tags, one of them current, answers 304', async () => {
    const product = await createProduct();
    const etag = String((await getProduct(product.id)).headers.etag);
    const res = await getProduct(product.id, { 'if-none-match': `"stale-one", ${etag}` });
    expect(res.statusCode).toBe(304);
  });

  it('If-None-Match with an old tag answers 200 with the body once the product changed', async () => {
    const product = await createProduct();
    const old = String((await getProduct(product.id)).headers.etag);
    await t.request({ method: 'PUT', url: `${BASE}/${product.id}`, payload: { ...writable(product), name: 'Changed' }, token: t.admin.token });
    const res = await getProduct(product.id, { 'if-none-match': old });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'Changed' });
    expect(res.headers.etag).not.toBe(old);
  });

  it('If-None-Match with the current list tag answers 304 with no body', async () => {
    const category = freshCategory();
    await createProduct({ category });
    const first = await listCategory(category);
    const res = await t.request({
      method: 'GET',
      url: `${BASE}?category=${category}`,
      headers: { 'if-none-match': String(first.headers.etag) },
    });
    expect(res.statusCode).toBe(304);
    expect(res.body).toBe('');
    expect(res.headers.etag).toBe(first.headers.etag);
    expect(res.headers['cache-control']).toBe('public, max-age=60');
  });

  it('If-None-Match with a stale list tag answers 200 once the list changed', async () => {
    const category = freshCategory();
    await createProduct({ category });
    const old = String((await listCategory(category)).headers.etag);
    await createProduct({ category });
    const res = await t.request({ method: 'GET', url: `${BASE}?category=${category}`, headers: { 'if-none-match': old } });
    expect(res.statusCode).toBe(200);
    expect(res.json<ListBody>().data).toHaveLength(2);
  });

  it('If-Modified-Since later than Last-Modified answers 304 with the same ETag', async () => {
    const product = await createProduct();
    const first = await getProduct(product.id);
    const lastModified = Date.parse(String(first.headers['last-modified']));
    const res = await getProduct(product.id, { 'if-modified-since': httpDate(lastModified + 3_600_000) });
    expect(res.statusCode).toBe(304);
    expect(res.body).toBe('');
    expect(res.headers.etag).toBe(first.headers.etag);
  });

  it('If-Modified-Since equal to Last-Modified answers 304', async () => {
    const product = await createProduct();
    const first = await getProduct(product.id);
    const res = await getProduct(product.id, { 'if-modified-since': String(first.headers['last-modified']) });
    expect(res.statusCode).toBe(304);
  });

  it('If-Modified-Since earlier than Last-Modified answers 200 with the body', async () => {
    const product = await createProduct();
    const first = await getProduct(product.id);
    const lastModified = Date.parse(String(first.headers['last-modified']));
    const res = await getProduct(product.id, { 'if-modified-since': httpDate(lastModified - 1000) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(product);
  });

  it('an If-Modified-Since that is not a date is ignored: 200 with the body', async () => {
    const product = await createProduct();
    const res = await getProduct(product.id, { 'if-modified-since': 'not a date' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(product);
  });

  it('If-None-Match wins over If-Modified-Since: a non-matching tag answers 200 even with a later date', async () => {
    const product = await createProduct();
    const first = await getProduct(product.id);
    const lastModified = Date.parse(String(first.headers['last-modified']));
    const res = await getProduct(product.id, { 'if-none-match': '"not-the-tag"', 'if-modified-since': httpDate(lastModified + 3_600_000) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(product);
  });

  it('If-None-Match wins over If-Modified-Since: a matching tag answers 304 even with an earlier date', async () => {
    const product = await createProduct();
    const first = await getProduct(product.id);
    const lastModified = Date.parse(String(first.headers['last-modified']));
    const res = await getProduct(product.id, { 'if-none-match': String(first.headers.etag), 'if-modified-since': httpDate(lastModified - 1000) });
    expect(res.statusCode).toBe(304);
  });
});

describe('HEAD /products/{id} answers like GET without a body', () => {
  it('answers 200 with ETag, Last-Modified and Cache-Control and an empty body', async () => {
    const product = await createProduct();
    const get = await getProduct(product.id);
    const head = await t.request({ method: 'HEAD', url: `${BASE}/${product.id}` });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers.etag).toBe(get.headers.etag);
    expect(head.headers['last-modified']).toBe(get.headers['last-modified']);
    expect(head.headers['cache-control']).toBe('public, max-age=60');
    expect(head.headers['content-type']).toMatch(/^application\/json/);
  });

  it('HEAD with If-None-Match of the current tag answers 304', async () => {
    const product = await createProduct();
    const etag = String((await getProduct(product.id)).headers.etag);
    const head = await t.request({ method: 'HEAD', url: `${BASE}/${product.id}`, headers: { 'if-none-match': etag } });
    expect(head.statusCode).toBe(304);
    expect(head.body).toBe('');
    expect(head.headers.etag).toBe(etag);
  });

  it('HEAD on the list answers 200 with no body', async () => {
    const head = await t.request({ method: 'HEAD', url: BASE });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers.etag).toBeDefined();
  });

  it('HEAD on an archived product answers 410 with no body', async () => {
    const product = await createProduct();
    await t.request({ method: 'DELETE', url: `${BASE}/${product.id}`, token: t.admin.token });
    const head = await t.request({ method: 'HEAD', url: `${BASE}/${product.id}` });
    expect(head.statusCode).toBe(410);
    expect(head.body).toBe('');
  });
});

describe('optimistic concurrency: If-Match with a stale tag on PUT or DELETE answers 412 and changes nothing', () => {
  it('PUT with a stale If-Match answers 412 /problems/precondition-failed and the product is unchanged', async () => {
    const product = await createProduct();
    const stale = String((await getProduct(product.id)).headers.etag);
    const moved = await t.request({ method: 'PUT', url: `${BASE}/${product.id}`, payload: { ...writable(product), price: 1 }, token: t.admin.token });
    const current = moved.json<ProductBody>();
    const res = await t.request({
      method: 'PUT',
      url: `${BASE}/${product.id}`,
      payload: { ...writable(product), price: 2 },
      headers: { 'if-match': stale },
      token: t.admin.token,
    });
    expectProblem(res, 412, 'precondition-failed', { instance: `${BASE}/${product.id}` });
    expect((await getProduct(product.id)).json()).toEqual(current);
  });

  it('DELETE with a stale If-Match answers 412 and the product is still there', async () => {
    const product = await createProduct();
    const stale = String((await getProduct(product.id)).headers.etag);
    await t.request({ method: 'PUT', url: `${BASE}/${product.id}`, payload: { ...writable(product), price: 1 }, token: t.admin.token });
    const res = await t.request({ method: 'DELETE', url: `${BASE}/${product.id}`, headers: { 'if-match': stale }, token: t.admin.token });
    expectProblem(res, 412, 'precondition-failed', { instance: `${BASE}/${product.id}` });
    const read = await getProduct(product.id);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ price: 1 });
  });

  it('an If-Match that never matched (made-up tag) answers 412', async () => {
    const product = await createProduct();
    const res = await t.request({
      method: 'PUT',
      url: `${BASE}/${product.id}`,
      payload: writable(product),
      headers: { 'if-match': '"made-up"' },
      token: t.admin.token,
    });
    expectProblem(res, 412, 'precondition-failed');
  });

  it('PUT with the current If-Match succeeds, and its response ETag is the next If-Match', async () => {
    const product = await createProduct();
    const etag = String((await getProduct(product.id)).headers.etag);
    const first = await t.request({
      method: 'PUT',
      url: `${BASE}/${product.id}`,
      payload: { ...writable(product), price: 11 },
      headers: { 'if-match': etag },
      token: t.admin.token,
    });
    expect(first.statusCode, first.body).toBe(200);
    const second = await t.request({
      method: 'PUT',
      url: `${BASE}/${product.id}`,
      payload: { ...writable(product), price: 12 },
      headers: { 'if-match': String(first.headers.etag) },
      token: t.admin.token,
    });
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json()).toMatchObject({ price: 12 });
  });

  it('DELETE with the current If-Match answers 204', async () => {
    const product = await createProduct();
    const etag = String((await getProduct(product.id)).headers.etag);
    const res = await t.request({ method: 'DELETE', url: `${BASE}/${product.id}`, headers: { 'if-match': etag }, token: t.admin.token });
    expect(res.statusCode).toBe(204);
    expectProblem(await getProduct(product.id), 410, 'gone');
  });

  it('two simultaneous PUTs with the same If-Match: one wins with 200, the other gets 412 (no lost update)', async () => {
    const product = await createProduct();
    const etag = String((await getProduct(product.id)).headers.etag);
    const [a, b] = await Promise.all(
      [101, 102].map((price) =>
        t.request({
          method: 'PUT',
          url: `${BASE}/${product.id}`,
          payload: { ...writable(product), price },
          headers: { 'if-match': etag },
          token: t.admin.token,
        }),
      ),
    );
    expect([a?.statusCode, b?.statusCode].sort()).toEqual([200, 412]);
    const winner = [a, b].find((r) => r?.statusCode === 200);
    expect((await getProduct(product.id)).json()).toEqual(winner?.json());
  });

  it('If-Match: * matches any existing product', async () => {
    const product = await createProduct();
    const res = await t.request({
      method: 'PUT',
      url: `${BASE}/${product.id}`,
      payload: { ...writable(product), price: 5 },
      headers: { 'if-match': '*' },
      token: t.admin.token,
    });
    expect(res.statusCode).toBe(200);
  });

  it('a weak tag never satisfies If-Match (strong comparison)', async () => {
    const product = await createProduct();
    const etag = String((await getProduct(product.id)).headers.etag);
    const res = await t.request({
      method: 'PUT',
      url: `${BASE}/${product.id}`,
      payload: { ...writable(product), price: 5 },
      headers: { 'if-match': `W/${etag}` },
      token: t.admin.token,
    });
    expectProblem(res, 412, 'precondition-failed');
    expect((await getProduct(product.id)).json()).toEqual(product);
  });
});

describe('every error is application/problem+json with type, title, status, detail, instance, request_id and Cache-Control no-store', () => {
  it('request_id echoes the X-Request-Id the client sent', async () => {
    const res = await t.request({ method: 'GET', url: `${BASE}/2000000004`, headers: { 'x-request-id': 'req-products-42' } });
    const problem = expectProblem(res, 404, 'not-found', { instance: `${BASE}/2000000004` });
    expect(res.headers['x-request-id']).toBe('req-products-42');
    expect(problem.request_id).toBe('req-products-42');
  });

  it('instance is the request path without the query string', async () => {
    const res = await t.request({ method: 'GET', url: `${BASE}?limit=0&category=x` });
    expectProblem(res, 422, 'validation-error', { instance: BASE });
  });

  it('instance keeps the alias path the client used', async () => {
    const res = await t.request({ method: 'GET', url: '/api/products/2000000005' });
    expectProblem(res, 404, 'not-found', { instance: '/api/products/2000000005' });
  });

  it('a body that is not valid JSON answers 400 malformed-request', async () => {
    const res = await t.request({
      method: 'POST',
      url: BASE,
      payload: '{"sku": "x",',
      headers: { 'content-type': 'application/json' },
      token: t.admin.token,
    });
    expectProblem(res, 400, 'malformed-request', { instance: BASE });
  });

  it('a body of another type than JSON answers 415 with Accept-Post', async () => {
    const res = await t.request({
      method: 'POST',
      url: BASE,
      payload: 'sku=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      token: t.admin.token,
    });
    expectProblem(res, 415, 'unsupported-media-type', { instance: BASE });
    expect(res.headers['accept-post']).toMatch(/application\/json/);
  });

  it('Accept excluding JSON answers 406', async () => {
    const product = await createProduct();
    const res = await getProduct(product.id, { accept: 'text/html' });
    expectProblem(res, 406, 'not-acceptable', { instance: `${BASE}/${product.id}` });
  });

  it('a method the path does not support answers 405 with Allow', async () => {
    const product = await createProduct();
    // A product takes PATCH since issue 25 (docs/api.md#patch); a POST to one is no operation.
    const res = await t.request({ method: 'POST', url: `${BASE}/${product.id}`, payload: { name: 'x' }, token: t.admin.token });
    expectProblem(res, 405, 'method-not-allowed', { instance: `${BASE}/${product.id}` });
    const allow = String(res.headers.allow)
      .split(',')
      .map((m) => m.trim());
    expect(allow).toEqual(expect.arrayContaining(['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE']));
    expect(allow).not.toContain('POST');
  });

  it('a body over 1 MiB answers 413 payload-too-large', async () => {
    const res = await t.request({
      method: 'POST',
      url: BASE,
      payload: productInput({ description: 'x'.repeat(1024 * 1024 + 10) }),
      token: t.admin.token,
    });
    expectProblem(res, 413, 'payload-too-large', { instance: BASE });
  });

  it('problems never leak internals: no stack traces or SQL in the body', async () => {
    const first = await createProduct();
    const res = await t.request({ method: 'POST', url: BASE, payload: productInput({ sku: first.sku }), token: t.admin.token });
    expectProblem(res, 409, 'duplicate-resource');
    expect(res.body).not.toMatch(/products_sku_key|duplicate key|insert into|\bat .+\.ts:\d+/i);
  });
});
