/**
 * Property tests: whatever a client sends, the service answers with a client error at worst
 * (docs/api.md#errors: a malformed value never produces a 5xx), and every error is a problem
 * (docs/api.md#errors). Runs are bounded so the file stays fast; the seed is fixed so a run is
 * reproducible (set FC_SEED to explore other inputs).
 */
import fc from 'fast-check';
import type { HTTPMethods, LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.ts';
import { createOrder } from '../helpers/orders.ts';
import { createProduct, productInput } from '../helpers/products.ts';
import { userInput } from '../helpers/users.ts';

let productId: number;
let userId: number;
let orderId: number;
const t = useTestApp();
beforeAll(async () => {
  productId = (await createProduct(t)).id;
  const customer = await t.createUser();
  userId = customer.id;
  orderId = (await createOrder(t, { items: [{ product_id: productId, quantity: 1 }] }, customer.token)).id;
});

const RUNS = 150;
const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : 20_260_131;
const settings = (runs = RUNS) => ({ numRuns: runs, seed, endOnFailure: true });

/** The answer is below 500, and an error answer is a problem document. */
function expectSafeAnswer(method: string, res: LightMyRequestResponse): void {
  expect(res.statusCode, `${method} answered ${res.statusCode}: ${res.body}`).toBeLessThan(500);
  if (res.statusCode < 400) return;
  expect(res.headers['content-type'], res.body).toMatch(/^application\/problem\+json/);
  if (method === 'HEAD') return;
  const body = res.json<Record<string, unknown>>();
  expect(body).toMatchObject({ type: expect.stringMatching(/^\/problems\//), title: expect.any(String), status: res.statusCode, detail: expect.any(String) });
  expect(body).not.toHaveProperty('stack');
}

// --- arbitraries -----------------------------------------------------------------------------

const printable = (maxLength = 40) =>
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength });

const METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const method = fc.constantFrom(...METHODS);
const prefix = fc.constantFrom('/api/v1', '/api');
const resource = fc.constantFrom('products', 'users', 'orders');

const intish = fc.oneof(
  fc.integer({ min: -5, max: 5 }),
  fc.integer(),
  fc.double({ noNaN: false }),
  fc.constantFrom(0, -1, 2_147_483_647, 2_147_483_648, Number.MAX_SAFE_INTEGER, 1e21),
);
const stringish = fc.oneof(printable(), fc.string({ maxLength: 300 }), fc.constantFrom('', ' ', 'USD', 'usd', 'admin', 'customer', 'a@b.co', 'DROP TABLE products;--'));
const anyValue = fc.oneof(intish, stringish, fc.jsonValue({ maxDepth: 2 }), fc.constant(null), fc.boolean());

/** Objects with the resources' real field names and random values. */
const productLike = fc.record(
  {
    id: anyValue,
    sku: fc.oneof(stringish, anyValue),
    name: fc.oneof(stringish, anyValue),
    description: fc.oneof(stringish, anyValue),
    category: fc.oneof(stringish, anyValue),
    price: fc.oneof(intish, anyValue),
    currency: fc.oneof(stringish, anyValue),
    stock: fc.oneof(intish, anyValue),
    created_at: anyValue,
  },
  { requiredKeys: [] },
);
const userLike = fc.record(
  {
    id: anyValue,
    email: fc.oneof(stringish, fc.emailAddress(), anyValue),
    name: fc.oneof(stringish, anyValue),
    role: fc.oneof(fc.constantFrom('customer', 'admin', 'service', 'ADMIN'), anyValue),
    password: fc.oneof(stringish, anyValue),
  },
  { requiredKeys: [] },
);
const orderLike = fc.record(
  {
    customer_id: fc.oneof(intish, anyValue),
    items: fc.oneof(fc.array(fc.record({ product_id: fc.oneof(intish, anyValue), quantity: fc.oneof(intish, anyValue) }, { requiredKeys: [] }), { maxLength: 3 }), anyValue),
    address: fc.oneof(stringish, anyValue),
    status: fc.oneof(fc.constantFrom('draft', 'CREATED', 'confirmed', 'paid', 'nope'), anyValue),
    discount_code: fc.oneof(stringish, anyValue),
  },
  { requiredKeys: [] },
);

/** A raw body: JSON of anything, resource-shaped JSON, a valid body, or text that is not JSON. */
const rawBody = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.anything({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? 'undefined'),
  productLike.map((v) => JSON.stringify(v)),
  userLike.map((v) => JSON.stringify(v)),
  orderLike.map((v) => JSON.stringify(v)),
  fc.constant(null).map(() => JSON.stringify(productInput())),
  fc.constant(null).map(() => JSON.stringify(userInput())),
  printable(60),
  fc.constantFrom('', '{', '[', '{"a":', 'null', '"str"', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}'),
);

const contentType = fc.option(
  fc.oneof(
    fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'APPLICATION/JSON',
      'application/merge-patch+json',
      'application/json-patch+json',
      'application/problem+json',
      'text/plain',
      'application/xml',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      '*/*',
      '',
      ';',
    ),
    printable(),
  ),
  { nil: undefined },
);
const accept = fc.option(
  fc.oneof(fc.constantFrom('application/json', '*/*', 'text/html', 'application/json;q=0', 'application/*', 'image/png, text/*;q=0.1', 'application/json;q=abc', ''), printable()),
  { nil: undefined },
);
const entityTags = fc.option(fc.oneof(fc.constantFrom('*', '"abc"', 'W/"abc"', '""', '"', ',,,', 'W/', '"a", W/"b", *'), printable()), { nil: undefined });
const dates = fc.option(fc.oneof(fc.constantFrom('Thu, 01 Jan 1970 00:00:00 GMT', 'Fri, 31 Dec 9999 23:59:59 GMT', 'yesterday', ''), printable()), { nil: undefined });

type TokenKind = 'none' | 'admin' | 'junk';
const junkAuthorization = fc.oneof(
  fc.constantFrom('Bearer', 'Bearer ', 'Basic Zm9vOmJhcg==', 'Bearer a.b.c', 'Bearer ...', 'bearer x.y.z', 'Bearer eyJhbGciOiJub25lIn0.e30.', 'Token abc'),
  printable().map((s) => `Bearer ${s}`),
  printable(),
);
const authorization = fc.oneof(
  fc.constant<TokenKind>('none'),
  fc.constant<TokenKind>('admin'),
  junkAuthorization.map((value) => ({ junk: value })),
);
type Authorization = TokenKind | { junk: string };

function authHeader(kind: Authorization): Record<string, string> {
  if (kind === 'none' || kind === 'junk') return {};
  if (kind === 'admin') return { authorization: `Bearer ${t.admin.token}` };
  return { authorization: kind.junk };
}

const headers = fc.record({
  'content-type': contentType,
  accept,
  'if-match': entityTags,
  'if-none-match': entityTags,
  'if-modified-since': dates,
  'x-request-id': fc.option(printable(140), { nil: undefined }),
  'idempotency-key': fc.option(printable(), { nil: undefined }),
});

function definedHeaders(record: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** A path parameter: a real id, any integer, random text, or URL oddities. */
const pathParam = fc.oneof(
  fc.constant('real'),
  fc.integer().map(String),
  fc.nat({ max: 10 }).map(String),
  printable(20).map(encodeURIComponent),
  fc.constantFrom('0', '-1', '1e3', '0x10', '1.5', '99999999999999999999', '%00', '%', '%zz', '..', '%2F', ' ', '+1', '007'),
);
const query = fc.array(
  fc.tuple(fc.constantFrom('page', 'limit', 'sort', 'category', 'status', 'unknown'), fc.oneof(printable(20), fc.integer().map(String), fc.constantFrom('', '-price', 'name,-id', 'price,bogus', '0', '101'))),
  { maxLength: 4 },
);

function realId(name: string): string {
  if (name === 'products') return String(productId);
  if (name === 'users') return String(userId);
  return String(orderId);
}

function urlOf(base: string, name: string, param: string | undefined, pairs: [string, string][]): string {
  const path = `${base}/${name}${param === undefined ? '' : `/${param === 'real' ? realId(name) : param}`}`;
  const search = new URLSearchParams(pairs).toString();
  return search ? `${path}?${search}` : path;
}

// --- properties ------------------------------------------------------------------------------

describe('a malformed value never produces a 5xx, and every error is a problem (docs/api.md#errors)', () => {
  it('random bodies sent as JSON to POST and PUT, with and without an admin token', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<HTTPMethods>('POST', 'PUT', 'PATCH'),
        resource,
        rawBody,
        fc.boolean(),
        async (verb, name, body, asAdmin) => {
          const url = verb === 'POST' ? `/api/v1/${name}` : `/api/v1/${name}/${realId(name)}`;
          const res = await t.request({
            method: verb,
            url,
            headers: { 'content-type': verb === 'PATCH' ? 'application/merge-patch+json' : 'application/json' },
            ...(body === undefined ? {} : { payload: body }),
            token: asAdmin ? t.admin.token : undefined,
          });
          expectSafeAnswer(verb, res);
        },
      ),
      settings(),
    );
  });

  it('random headers (content-type, accept, if-match, if-none-match, authorization junk) on every method', async () => {
    await fc.assert(
      fc.asyncProperty(method, resource, fc.boolean(), headers, authorization, rawBody, async (verb, name, item, randomHeaders, auth, body) => {
        const res = await t.request({
          method: verb,
          url: urlOf('/api/v1', name, item ? 'real' : undefined, []),
          headers: { ...definedHeaders(randomHeaders), ...authHeader(auth) },
          ...(body === undefined ? {} : { payload: body }),
        });
        expectSafeAnswer(verb, res);
      }),
      settings(),
    );
  });

  it('random path and query parameters on every method, with and without an admin token', async () => {
    await fc.assert(
      fc.asyncProperty(method, prefix, resource, fc.option(pathParam, { nil: undefined }), query, fc.boolean(), async (verb, base, name, param, pairs, asAdmin) => {
        const res = await t.request({
          method: verb,
          url: urlOf(base, name, param, pairs),
          token: asAdmin ? t.admin.token : undefined,
          ...(['POST', 'PUT', 'PATCH'].includes(verb) ? { payload: '{}', headers: { 'content-type': 'application/json' } } : {}),
        });
        expectSafeAnswer(verb, res);
      }),
      settings(),
    );
  });

  it('fully random requests: method, path, query, headers, token and body together', async () => {
    await fc.assert(
      fc.asyncProperty(
        method,
        prefix,
        resource,
        fc.option(pathParam, { nil: undefined }),
        query,
        headers,
        authorization,
        rawBody,
        async (verb, base, name, param, pairs, randomHeaders, auth, body) => {
          const res = await t.request({
            method: verb,
            url: urlOf(base, name, param, pairs),
            headers: { ...definedHeaders(randomHeaders), ...authHeader(auth) },
            ...(body === undefined ? {} : { payload: body }),
          });
          expectSafeAnswer(verb, res);
        },
      ),
      settings(200),
    );
  });

  it('random input on the tRPC door never produces a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('products.get', 'products.list', 'users.get', 'orders.get', 'products.create', 'users.create', 'orders.create'),
        rawBody,
        fc.boolean(),
        async (procedure, body, asAdmin) => {
          const isQuery = procedure.endsWith('.get') || procedure.endsWith('.list');
          const res = isQuery
            ? await t.request({ method: 'GET', url: `/trpc/${procedure}?input=${encodeURIComponent(body ?? '')}`, token: asAdmin ? t.admin.token : undefined })
            : await t.request({
                method: 'POST',
                url: `/trpc/${procedure}`,
                headers: { 'content-type': 'application/json' },
                ...(body === undefined ? {} : { payload: body }),
                token: asAdmin ? t.admin.token : undefined,
              });
          expect(res.statusCode, `${procedure} answered ${res.statusCode}: ${res.body}`).toBeLessThan(500);
        },
      ),
      settings(100),
    );
  });
});
