/**
 * Strict parameters (docs/api.md#unknown-parameters): a query parameter an operation does not take
 * is 400 `unknown-parameter` naming it, on every REST operation (those without any query
 * parameter included), and a /trpc query whose input has a member the procedure does not take is
 * refused the same way; a mutation's unknown input member stays 422, as an unknown body field.
 * What an operation takes is read from its input schema (the route table), and the OpenAPI
 * document lists exactly that. The operations below are derived from the router, so one added
 * later is covered without editing this file.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { restRoutes, type RestRoute } from '../../server/http/rest-routes.ts';
import { appRouter } from '../../server/router.ts';
import type { Meta } from '../../server/trpc/meta.ts';
import { publicProcedure, router } from '../../server/trpc/trpc.ts';
import { listProcedures } from '../../server/trpc/trpc-internals.ts';
import { type TestUser, useTestApp } from '../helpers/app.ts';
import { createOrder, ORDERS, type OrderBody } from '../helpers/orders.ts';
import { expectProblem, type ProblemBody } from '../helpers/problems.ts';
import { createProduct, freshCategory, PRODUCTS, type ProductBody } from '../helpers/products.ts';

let customer: TestUser;
let product: ProductBody;
let order: OrderBody;
const t = useTestApp();
beforeAll(async () => {
  customer = await t.createUser();
  product = await createProduct(t, { category: freshCategory(), stock: 50 });
  order = await createOrder(t, { items: [{ product_id: product.id, quantity: 1 }] }, customer.token);
});

const routes = restRoutes(appRouter);
const UNKNOWN = 'zz_unknown';
/** An id no resource has: a write through a derived path never touches the fixtures, even before the rule. */
const NOWHERE = '2147483647';
const routeOf = (method: string, path: string): RestRoute => {
  const route = routes.find((r) => r.method === method && r.path === path);
  if (!route) throw new Error(`no route ${method} ${path}`);
  return route;
};
const countOrders = async () =>
  (await t.request({ method: 'GET', url: `${ORDERS}?limit=100`, token: customer.token })).json<{ data: unknown[] }>().data.length;

/** Asserts the unknown-parameter problem naming exactly `names`. */
function expectUnknown(res: Parameters<typeof expectProblem>[0], names: string[], instance?: string): ProblemBody {
  const problem = expectProblem(res, 400, 'unknown-parameter', instance === undefined ? {} : { instance });
  expect(problem.errors?.map((e) => e.field).sort()).toEqual([...names].sort());
  expect(problem.errors_total).toBe(names.length);
  for (const name of names) expect(problem.detail).toContain(`"${name}"`);
  return problem;
}

describe('the mistakes of issue 25: a filter an operation does not take is refused, never ignored', () => {
  const mistakes = [
    ['q', 'mug'],
    ['name', 'Mug'],
    ['expand', 'items.product'],
    ['bogus', '1'],
  ] as const;
  const lists = [
    ['GET', '/products', PRODUCTS],
    ['GET', '/orders', ORDERS],
  ] as const;
  for (const [method, path, url] of lists) {
    for (const [name, value] of mistakes) {
      // What an operation takes comes from its input schema: a feature that adds the parameter makes it known.
      const known = routeOf(method, path).queryParams.has(name);
      it(`${method} ${url}?${name}=${value} is ${known ? 'taken (the operation has the parameter)' : '400 naming it'}`, async () => {
        const res = await t.request({ method, url: `${url}?${name}=${encodeURIComponent(value)}`, token: t.admin.token });
        if (known) expect(res.json<ProblemBody>().type).not.toBe('/problems/unknown-parameter');
        else expectUnknown(res, [name], url);
      });
    }
  }
});

describe('every REST operation refuses an unknown query parameter with 400 unknown-parameter', () => {
  it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', async (_name, route) => {
    const path = route.path.replace(/\{(\w+)\}/g, (_m, key: string) => (route.pathParams.get(key) === 'int' ? NOWHERE : 'x'));
    const res = await t.request({
      method: route.method,
      url: `/api/v1${path}?${UNKNOWN}=1`,
      token: t.admin.token,
      ...(route.hasBody ? { payload: {} } : {}),
    });
    const problem = expectUnknown(res, [UNKNOWN], `/api/v1${path}`);
    const accepted = [...route.queryParams.keys()];
    // The detail says what the operation takes instead.
    if (accepted.length === 0) expect(problem.detail).toContain('takes no query parameters');
    else for (const name of accepted) expect(problem.detail).toContain(name);
  });

  it('POST /orders?bogus=1 with a valid body is 400 and creates nothing', async () => {
    const before = await countOrders();
    const res = await t.request({ method: 'POST', url: `${ORDERS}?bogus=1`, payload: { items: [{ product_id: product.id, quantity: 1 }] }, token: customer.token });
    expectUnknown(res, ['bogus'], ORDERS);
    expect(await countOrders()).toBe(before);
  });

  it('GET /orders/{id}?bogus=1 of an order the caller reads is 400 (the path alias /api too)', async () => {
    expect((await t.request({ method: 'GET', url: `${ORDERS}/${order.id}`, token: customer.token })).statusCode).toBe(200);
    expectUnknown(await t.request({ method: 'GET', url: `${ORDERS}/${order.id}?bogus=1`, token: customer.token }), ['bogus']);
    expectUnknown(await t.request({ method: 'GET', url: `/api/orders/${order.id}?bogus=1`, token: customer.token }), ['bogus'], `/api/orders/${order.id}`);
    // HEAD answers as GET does, without a body.
    expect((await t.request({ method: 'HEAD', url: `${ORDERS}/${order.id}?bogus=1`, token: customer.token })).statusCode).toBe(400);
  });

  it('names that are Object.prototype members are unknown parameters like any other', async () => {
    expectUnknown(await t.request({ method: 'GET', url: `${PRODUCTS}?__proto__=1&constructor=1&toString=1` }), ['__proto__', 'constructor', 'toString']);
    const input = encodeURIComponent('{"__proto__":{"x":1},"constructor":1}');
    const res = await t.request({ method: 'GET', url: `/trpc/products.list?input=${input}` });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json<TrpcError>().error.data.problem.type).toBe('/problems/unknown-parameter');
  });

  it('a path parameter sent in the query is unknown there: GET /orders/{id}?id=2', async () => {
    expectUnknown(await t.request({ method: 'GET', url: `${ORDERS}/${order.id}?id=2`, token: customer.token }), ['id']);
  });

  it('a confirm, a PUT and a DELETE with a query parameter change nothing', async () => {
    const draft = await createOrder(t, { items: [{ product_id: product.id, quantity: 1 }], address: '1 Main St' }, customer.token);
    expectUnknown(await t.request({ method: 'POST', url: `${ORDERS}/${draft.id}/confirm?force=true`, token: customer.token }), ['force']);
    expectUnknown(await t.request({ method: 'DELETE', url: `${ORDERS}/${draft.id}?hard=1`, token: customer.token }), ['hard']);
    const after = await t.request({ method: 'GET', url: `${ORDERS}/${draft.id}`, token: customer.token });
    expect(after.json<OrderBody>().status).toBe('draft');
  });

  it('names every unknown parameter, the first 20 listed and all counted, each name cut to 64 characters', async () => {
    const names = Array.from({ length: 25 }, (_, i) => `unknown_${String(i).padStart(2, '0')}`);
    const res = await t.request({ method: 'GET', url: `${PRODUCTS}?${names.map((n) => `${n}=1`).join('&')}&${'x'.repeat(100)}=1&limit=5` });
    const problem = expectProblem(res, 400, 'unknown-parameter');
    expect(problem.errors).toHaveLength(20);
    expect(problem.errors_total).toBe(26);
    expect(problem.errors?.every((e) => e.field.length <= 64 && e.message.length > 0)).toBe(true);
    expect(problem.detail.length).toBeLessThan(400);
  });

  it('the problem body: type, title, status, detail, instance, request_id, errors and errors_total, never cached', async () => {
    const res = await t.request({ method: 'GET', url: `${PRODUCTS}?name=Mug&limit=2` });
    const problem = expectUnknown(res, ['name'], PRODUCTS);
    expect(problem).toEqual({
      type: '/problems/unknown-parameter',
      title: 'Unknown parameter',
      status: 400,
      detail: expect.stringContaining('"name"'),
      instance: PRODUCTS,
      request_id: res.headers['x-request-id'],
      errors: [{ field: 'name', message: expect.any(String) }],
      errors_total: 1,
    });
    const page = await t.request({ method: 'GET', url: '/problems/unknown-parameter' });
    expect(page.statusCode).toBe(200);
  });
});

describe('the parameters an operation takes still work', () => {
  it('products: category, sort, page, limit and cursor', async () => {
    const first = await t.request({ method: 'GET', url: `${PRODUCTS}?category=${product.category}&sort=-price&page=1&limit=1` });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json<{ data: ProductBody[] }>().data.map((p) => p.id)).toEqual([product.id]);
    const cursor = first.json<{ next_cursor: string | null }>().next_cursor;
    if (cursor !== null) expect((await t.request({ method: 'GET', url: `${PRODUCTS}?category=${product.category}&sort=-price&cursor=${cursor}` })).statusCode).toBe(200);
  });

  it('orders: status, limit; a parameter with an empty value is still the parameter', async () => {
    const res = await t.request({ method: 'GET', url: `${ORDERS}?status=draft&limit=5`, token: customer.token });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<{ data: OrderBody[] }>().data.map((o) => o.id)).toContain(order.id);
  });

  it('a parameter given twice is 400 malformed-request naming it (never the last one silently)', async () => {
    const res = await t.request({ method: 'GET', url: `${ORDERS}?limit=1&limit=2`, token: customer.token });
    expectProblem(res, 400, 'malformed-request', { fields: ['limit'] });
  });
});

describe('the routes under /api that are no operation of the router', () => {
  it('the health and readiness checks are operations of the document: an unknown parameter is 400', async () => {
    expectUnknown(await t.request({ method: 'GET', url: '/api/health?verbose=1' }), ['verbose'], '/api/health');
    expectUnknown(await t.request({ method: 'GET', url: '/api/health/ready?verbose=1' }), ['verbose'], '/api/health/ready');
    expect((await t.request({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
  });

  it('the OpenAPI document and the docs page are documents: a query (a cache buster, the OAuth redirect) is ignored', async () => {
    expect((await t.request({ method: 'GET', url: '/api/openapi.json?v=2' })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: '/api/docs?v=2' })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: '/api/docs/oauth2-redirect.html?code=abc&state=xyz' })).statusCode).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------
// /trpc: the same rule on the procedures' inputs.

const procedures = listProcedures<Meta>(appRouter);
const queries = procedures.filter((p) => p.kind === 'query').map((p) => p.path);
const mutations = procedures.filter((p) => p.kind === 'mutation').map((p) => p.path);

interface TrpcError {
  error: { data: { httpStatus: number; problem: ProblemBody } };
}

describe('/trpc: a query whose input has a member the procedure does not take is 400 unknown-parameter', () => {
  it('the router has queries and mutations to check', () => {
    expect(queries).toEqual(expect.arrayContaining(['products.list', 'orders.get']));
    expect(mutations).toContain('orders.create');
  });

  it.each(queries)('%s', async (path) => {
    const input = encodeURIComponent(JSON.stringify({ [UNKNOWN]: 1 }));
    const res = await t.request({ method: 'GET', url: `/trpc/${path}?input=${input}`, token: t.admin.token });
    expect(res.statusCode, res.body).toBe(400);
    const { problem } = res.json<TrpcError>().error.data;
    expect(problem).toMatchObject({ type: '/problems/unknown-parameter', status: 400, errors: [{ field: UNKNOWN }], errors_total: 1 });
  });

  it('orders.get with a valid id and an unknown member; products.list with name, as REST', async () => {
    const res = await t.request({ method: 'GET', url: `/trpc/orders.get?input=${encodeURIComponent(JSON.stringify({ id: order.id, bogus: 1 }))}`, token: customer.token });
    expect(res.json<TrpcError>().error.data.problem).toMatchObject({ type: '/problems/unknown-parameter', errors: [{ field: 'bogus' }] });
    const list = await t.request({ method: 'GET', url: `/trpc/products.list?input=${encodeURIComponent(JSON.stringify({ name: 'Mug', limit: 'x' }))}` });
    expect(list.statusCode).toBe(400);
    // The unknown member first, as REST checks the query before its values.
    expect(list.json<TrpcError>().error.data.problem).toMatchObject({ type: '/problems/unknown-parameter', errors: [{ field: 'name' }] });
  });

  it('in a batch, only the call with the unknown member fails', async () => {
    const input = encodeURIComponent(JSON.stringify({ 0: { limit: 1 }, 1: { limit: 1, bogus: true } }));
    const res = await t.request({ method: 'GET', url: `/trpc/products.list,products.list?batch=1&input=${input}` });
    const [ok, refused] = res.json<[{ result?: unknown }, TrpcError]>();
    expect(ok.result).toBeDefined();
    expect(refused.error.data.problem.type).toBe('/problems/unknown-parameter');
  });

  it('known members still work: products.list with category and limit', async () => {
    const res = await t.request({ method: 'GET', url: `/trpc/products.list?input=${encodeURIComponent(JSON.stringify({ category: product.category, limit: 1 }))}` });
    expect(res.statusCode, res.body).toBe(200);
  });
});

describe('/trpc: a mutation whose input has an unknown member is 422 naming it, as an unknown body field is', () => {
  it.each(mutations)('%s', async (path) => {
    const res = await t.request({ method: 'POST', url: `/trpc/${path}`, payload: { [UNKNOWN]: 1 }, token: t.admin.token });
    expect(res.statusCode, res.body).toBe(422);
    const { problem } = res.json<TrpcError>().error.data;
    expect(problem.type).toBe('/problems/validation-error');
    expect(problem.errors?.map((e) => e.field)).toContain(UNKNOWN);
  });

  it('orders.confirm with a valid id and an unknown member confirms nothing', async () => {
    const draft = await createOrder(t, { items: [{ product_id: product.id, quantity: 1 }], address: '1 Main St' }, customer.token);
    const res = await t.request({ method: 'POST', url: '/trpc/orders.confirm', payload: { id: draft.id, force: true }, token: customer.token });
    expect(res.statusCode).toBe(422);
    expect((await t.request({ method: 'GET', url: `${ORDERS}/${draft.id}`, token: customer.token })).json<OrderBody>().status).toBe('draft');
  });
});

describe('the route table refuses, at start, an operation whose input lets an undeclared member through', () => {
  const list = (input: z.ZodType) =>
    router({ list: publicProcedure.meta({ openapi: { method: 'GET', path: '/things' } }).input(input).query(() => []) });

  it('a z.object input (which /trpc would strip silently) fails naming the procedure and the fix', () => {
    expect(() => restRoutes(list(z.object({ page: z.int().optional() }).prefault({})))).toThrow(/^list: the input must be a z\.strictObject/);
  });

  it('each parameter gets its kind from its schema: an array a list (with its closed set), a boolean a boolean', () => {
    const input = z.strictObject({ page: z.int().optional(), tags: z.array(z.enum(['a', 'b'])).max(5).optional(), any: z.array(z.string()).optional(), on: z.boolean().optional(), q: z.string().optional() }).prefault({});
    const [route] = restRoutes(list(input));
    expect(Object.fromEntries(route?.queryParams ?? [])).toEqual({ page: 'int', tags: 'list', any: 'list', on: 'boolean', q: 'string' });
    expect(Object.fromEntries(route?.listChoices ?? [])).toEqual({ tags: ['a', 'b'] });
  });

  it('a strict input, or none at all, is taken', () => {
    expect(restRoutes(list(z.strictObject({ page: z.int().optional() }).prefault({})))[0]?.queryParams.has('page')).toBe(true);
    const none = router({ list: publicProcedure.meta({ openapi: { method: 'GET', path: '/things' } }).query(() => []) });
    expect(restRoutes(none)[0]?.queryParams.size).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// The OpenAPI document lists what each operation takes.

interface DocParameter {
  name: string;
  in: string;
}

describe('the OpenAPI document lists exactly the query parameters each operation takes', () => {
  let paths: Record<string, Record<string, { parameters?: (DocParameter | { $ref: string })[] }>>;
  let components: Record<string, DocParameter>;
  beforeAll(async () => {
    const doc = (await t.request({ method: 'GET', url: '/api/openapi.json' })).json<{
      paths: typeof paths;
      components: { parameters: Record<string, DocParameter> };
    }>();
    paths = doc.paths;
    components = doc.components.parameters;
  });
  const documented = (method: string, path: string, where: string): string[] =>
    (paths[path]?.[method.toLowerCase()]?.parameters ?? [])
      .map((p) => ('$ref' in p ? components[p.$ref.split('/').pop() ?? ''] : p))
      .filter((p): p is DocParameter => p !== undefined && p.in === where)
      .map((p) => p.name)
      .sort();

  it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', async (_name, route) => {
    const docPath = `/api/v1${route.path}`;
    const query = documented(route.method, docPath, 'query');
    expect(query).toEqual([...route.queryParams.keys()].sort());
    expect(documented(route.method, docPath, 'path')).toEqual([...route.pathParams.keys()].sort());
    // Each documented query parameter is taken (its value may still be refused, never its name).
    const path = route.path.replace(/\{(\w+)\}/g, (_m, key: string) => (route.pathParams.get(key) === 'int' ? NOWHERE : 'x'));
    for (const name of query) {
      const res = await t.request({ method: route.method, url: `/api/v1${path}?${name}=1`, token: t.admin.token });
      if (res.statusCode >= 400) expect(res.json<ProblemBody>().type, `${name} on ${route.method} ${route.path}`).not.toBe('/problems/unknown-parameter');
    }
  });

  it('the health checks document no query parameter', () => {
    expect(documented('GET', '/api/health', 'query')).toEqual([]);
    expect(documented('GET', '/api/health/ready', 'query')).toEqual([]);
  });
});
