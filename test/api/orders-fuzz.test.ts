/**
 * Property-based PATCH (docs/api.md#writes and #errors): random merge patches and random JSON Patch
 * documents, valid and not, against a draft order as its owner. Whatever the document:
 * - the answer is never a 5xx, and every 4xx is a problem document;
 * - the stored order always has the documented shape (docs/api.md#orders);
 * - a 4xx leaves the order exactly as it was (same body, same ETag);
 * - a 200 answers what is now stored.
 * The seed is fixed so a run is reproducible; FUZZ_SEED=<n> explores another seed and
 * FUZZ_RUNS=<n> changes the number of runs (default 100).
 */
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ORDER_STATUSES } from '../../server/modules/orders/orders.table.ts';
import { type TestUser, useTestApp } from '../helpers/app.ts';
import { ownLinks } from '../helpers/orders.ts';
import { createProduct } from '../helpers/products.ts';

const ORDERS = '/api/v1/orders';
const STATUSES = ORDER_STATUSES;
const RUNS = Number(process.env.FUZZ_RUNS ?? 100);
const SEED = process.env.FUZZ_SEED === undefined ? 20_260_101 : Number(process.env.FUZZ_SEED);
const TIME_LIMIT_MS = 90_000;

let owner: TestUser;
let productIds: number[] = [];

const t = useTestApp();
beforeAll(async () => {
  owner = await t.createUser('customer');
  for (const price of [1999, 550, 0]) {
    productIds.push((await createProduct(t, { price, stock: 100_000_000 })).id);
  }
  // An archived product: naming it in a new item must be refused.
  const archivedId = (await createProduct(t)).id;
  expect((await t.request({ method: 'DELETE', url: `/api/v1/products/${archivedId}`, token: t.admin.token })).statusCode).toBe(204);
  productIds = [...productIds, archivedId];
});

/** The documented shape of an order (docs/api.md#orders), with its arithmetic. */
function orderShape(id: number, customerId: number) {
  const self = `${ORDERS}/${id}`;
  return z
    .strictObject({
      id: z.literal(id),
      customer_id: z.literal(customerId),
      items: z.array(
        z.strictObject({
          product_id: z.int().positive(),
          quantity: z.int().min(1).max(10_000),
          unit_price: z.int().min(0),
          line_total: z.int().min(0),
        }),
      ),
      address: z.string().max(500).nullable(),
      status: z.enum(STATUSES),
      discount_code: z
        .string()
        .regex(/^[A-Z0-9_-]{3,32}$/)
        .nullable(),
      currency: z.string().regex(/^[A-Z]{3}$/),
      total: z.int().min(0),
      // docs/api.md#metadata: at most 50 keys of 1-40 characters, string values of at most 500.
      metadata: z
        .record(z.string().regex(/^[A-Za-z0-9_.-]{1,40}$/), z.string().max(500))
        .refine((metadata) => Object.keys(metadata).length <= 50, 'at most 50 keys'),
      created_at: z.iso.datetime(),
      updated_at: z.iso.datetime(),
      _links: z.record(z.string(), z.strictObject({ href: z.string(), method: z.string() })),
    })
    .superRefine((order, ctx) => {
      for (const [i, item] of order.items.entries()) {
        if (item.line_total !== item.unit_price * item.quantity) ctx.addIssue({ code: 'custom', message: `items.${i}.line_total != unit_price * quantity` });
      }
      if (order.total !== order.items.reduce((sum, item) => sum + item.line_total, 0)) ctx.addIssue({ code: 'custom', message: 'total != sum of line_total' });
      const links: Record<string, { href: string; method: string }> = { self: { href: self, method: 'GET' } };
      if (order.status === 'draft') links.confirm = { href: `${self}/confirm`, method: 'POST' };
      if (order.status === 'draft' || order.status === 'confirmed') links.cancel = { href: `${self}/cancel`, method: 'POST' };
      // Its own links; those other modules declare (order notes' `notes`) are theirs to test.
      if (JSON.stringify(ownLinks(order._links)) !== JSON.stringify(links)) ctx.addIssue({ code: 'custom', message: `_links ${JSON.stringify(order._links)}` });
      // A patch by the owner can only reach statuses open to customers through PUT/PATCH.
      if (!['draft', 'confirmed', 'cancelled'].includes(order.status)) ctx.addIssue({ code: 'custom', message: `status ${order.status}` });
      if (order.status === 'confirmed' && order.items.length === 0) ctx.addIssue({ code: 'custom', message: 'confirmed without items' });
    });
}

async function read(id: number): Promise<{ body: unknown; etag: string }> {
  const res = await t.request({ method: 'GET', url: `${ORDERS}/${id}`, token: owner.token });
  expect(res.statusCode).toBe(200);
  return { body: res.json(), etag: String(res.headers.etag) };
}

async function freshDraft(): Promise<number> {
  const res = await t.request({
    method: 'POST',
    url: ORDERS,
    payload: {
      items: [
        { product_id: productIds[0], quantity: 2 },
        { product_id: productIds[1], quantity: 1 },
      ],
      address: '1 Fuzz St',
      discount_code: 'FUZZ',
    },
    token: owner.token,
  });
  expect(res.statusCode).toBe(201);
  return res.json<{ id: number }>().id;
}

/** Sends one patch and checks every invariant; a failed expectation fails the property. */
async function checkPatch(contentType: string, document: unknown): Promise<void> {
  const id = await freshDraft();
  const before = await read(id);
  const res: LightMyRequestResponse = await t.request({
    method: 'PATCH',
    url: `${ORDERS}/${id}`,
    headers: { 'content-type': contentType },
    payload: JSON.stringify(document),
    token: owner.token,
  });
  const context = `PATCH ${contentType} ${JSON.stringify(document)} -> ${res.statusCode} ${res.body}`;
  expect(res.statusCode, context).toBeLessThan(500);
  expect([200, 400, 403, 409, 412, 415, 422], context).toContain(res.statusCode);

  const after = await read(id);
  const shape = orderShape(id, owner.id).safeParse(after.body);
  expect(shape.success, `${context}\nstored order: ${JSON.stringify(after.body)}\n${shape.error?.message}`).toBe(true);

  if (res.statusCode >= 400) {
    expect(res.headers['content-type'], context).toMatch(/^application\/problem\+json/);
    expect(res.json<{ status: number }>().status, context).toBe(res.statusCode);
    expect(after.body, context).toEqual(before.body);
    expect(after.etag, context).toBe(before.etag);
  } else {
    expect(res.json(), context).toEqual(after.body);
    expect(res.headers.etag, context).toBe(after.etag);
  }
}

// ---------------------------------------------------------------- arbitraries

const FIELDS = ['id', 'customer_id', 'items', 'address', 'status', 'discount_code', 'currency', 'total', 'metadata', 'created_at', 'updated_at', '_links'];

const anyStatus = fc.oneof(fc.constantFrom(...STATUSES, 'CREATED', 'CONFIRMED', 'Cancelled', 'active', ''), fc.string());
/** Product ids are only known after beforeAll, so the arbitraries that use them are built lazily. */
const productId = () => fc.oneof(fc.constantFrom(...productIds), fc.integer({ min: -5, max: 2_147_483_650 }));
const quantity = fc.oneof(fc.integer({ min: 1, max: 10_000 }), fc.constantFrom(0, -1, 10_001, 1.5), fc.integer());

const itemArb = () =>
  fc.oneof(
    { weight: 4, arbitrary: fc.record({ product_id: productId(), quantity }) },
    { weight: 1, arbitrary: fc.record({ product_id: productId(), quantity, unit_price: fc.integer(), line_total: fc.integer() }) },
    { weight: 1, arbitrary: fc.dictionary(fc.constantFrom('product_id', 'quantity', 'colour'), fc.jsonValue({ maxDepth: 1 })) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
  );

const valueFor = (field: string): fc.Arbitrary<unknown> => {
  switch (field) {
    case 'items':
      return fc.oneof({ weight: 4, arbitrary: fc.array(itemArb(), { maxLength: 4 }) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) });
    case 'status':
      return fc.oneof(anyStatus, fc.constant(null), fc.jsonValue({ maxDepth: 1 }));
    case 'address':
      return fc.oneof(fc.string({ maxLength: 40 }), fc.constant(null), fc.constant('x'.repeat(501)), fc.jsonValue({ maxDepth: 1 }));
    case 'discount_code':
      return fc.oneof(fc.stringMatching(/^[A-Z0-9_-]{3,32}$/), fc.constantFrom(null, 'ab', 'lower', 'A'.repeat(33)), fc.string({ maxLength: 10 }));
    case 'currency':
      return fc.oneof(fc.constantFrom('USD', 'usd', 'EURO', null), fc.jsonValue({ maxDepth: 1 }));
    case 'customer_id':
      return fc.oneof(fc.constant(null), fc.integer(), fc.jsonValue({ maxDepth: 1 }));
    case 'metadata':
      return fc.oneof(
        { weight: 3, arbitrary: fc.dictionary(fc.constantFrom('erp_id', 'note', 'a.b-c', 'bad key', 'k'.repeat(41)), fc.oneof(fc.string({ maxLength: 10 }), fc.constant(null), fc.constant('x'.repeat(501)), fc.integer())) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
      );
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
};

const mergePatchArb = () =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .uniqueArray(fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...FIELDS) }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }), { maxLength: 4 })
        .chain((keys) => (keys.length === 0 ? fc.constant({}) : fc.tuple(...keys.map((key) => valueFor(key))).map((values) => Object.fromEntries(keys.map((k, i) => [k, values[i]]))))),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  );

const PATHS = [
  '',
  '/',
  '/address',
  '/discount_code',
  '/status',
  '/currency',
  '/customer_id',
  '/total',
  '/id',
  '/_links',
  '/_links/self',
  '/items',
  '/items/-',
  '/items/0',
  '/items/1',
  '/items/2',
  '/items/0/quantity',
  '/items/1/product_id',
  '/items/0/unit_price',
  '/items/-1',
  '/items/01',
  '/nope',
  '/nope/deeper',
  '/__proto__',
  '/constructor/prototype',

  '/items/0/~1',
];
const pathArb = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...PATHS) }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) });

const valueForPath = (path: string): fc.Arbitrary<unknown> => {
  if (path === '/items/-' || /^\/items\/\d+$/.test(path)) return itemArb();
  if (path === '/items') return valueFor('items');
  if (path.endsWith('/quantity')) return quantity;
  if (path.endsWith('/product_id')) return productId();
  const field = path.slice(1);
  return FIELDS.includes(field) ? valueFor(field) : fc.jsonValue({ maxDepth: 2 });
};

const operationArb = () =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .record({ op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test'), path: pathArb, from: pathArb })
        .chain(({ op, path, from }) =>
          valueForPath(path).map((value) => {
            if (op === 'remove') return { op, path };
            if (op === 'move' || op === 'copy') return { op, from, path };
            return { op, path, value };
          }),
        ),
    },
    {
      weight: 1,
      arbitrary: fc.record(
        { op: fc.oneof(fc.constantFrom('add', 'frob', '_get', ''), fc.jsonValue({ maxDepth: 0 })), path: fc.oneof(pathArb, fc.jsonValue({ maxDepth: 0 })), value: fc.jsonValue({ maxDepth: 1 }) },
        { requiredKeys: [] },
      ),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
  );

const jsonPatchArb = () =>
  fc.oneof({ weight: 9, arbitrary: fc.array(operationArb(), { maxLength: 4 }) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) });

const params = (): fc.Parameters<[unknown]> => ({ numRuns: RUNS, seed: SEED, interruptAfterTimeLimit: TIME_LIMIT_MS, markInterruptAsFailure: false });
const TEST_TIMEOUT = TIME_LIMIT_MS + 30_000;

describe('PATCH never fails the service and never half-applies (property-based)', () => {
  it(
    'random merge patches: never 5xx; the stored order always validates; a 4xx changes nothing',
    async () => {
      await fc.assert(
        fc.asyncProperty(mergePatchArb(), (doc) => checkPatch('application/merge-patch+json', doc)),
        params(),
      );
    },
    TEST_TIMEOUT,
  );

  it(
    'random JSON Patch documents: never 5xx; the stored order always validates; a 4xx changes nothing',
    async () => {
      await fc.assert(
        fc.asyncProperty(jsonPatchArb(), (doc) => checkPatch('application/json-patch+json', doc)),
        params(),
      );
    },
    TEST_TIMEOUT,
  );

  it(
    'random documents under application/json are read as merge patches with the same guarantees',
    async () => {
      await fc.assert(
        fc.asyncProperty(mergePatchArb(), (doc) => checkPatch('application/json', doc)),
        { ...params(), numRuns: Math.ceil(RUNS / 4) },
      );
    },
    TEST_TIMEOUT,
  );
});
