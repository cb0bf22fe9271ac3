/**
 * PATCH of products, users and payments (docs/api.md#writes and #metadata): the same machinery as
 * an order's PATCH (a merge patch or a JSON Patch applied to the representation, If-Match, 415
 * with Accept-Patch), metadata merged key by key (a key set to null is removed), the same bounds
 * (422 naming the field), the same events as PUT, and a patch that changes nothing changes
 * nothing. A payment takes metadata only, from admins and service clients (docs/api.md#payments).
 */
import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_PASSWORD, useTestApp } from '../helpers/app.ts';
import { readAllEvents, timelineOf, type EventBody } from '../helpers/events.ts';
import { createOrder, createOrderScene, JSON_PATCH, MERGE_PATCH, ORDERS, orderInStatus, type OrderScene } from '../helpers/orders.ts';
import { payOrder, PAYMENTS, type PaymentBody } from '../helpers/payments.ts';
import { expectProblem, problemFields } from '../helpers/problems.ts';
import { createProduct, PRODUCTS, writableProduct, type ProductBody } from '../helpers/products.ts';
import { USERS, type UserBody } from '../helpers/users.ts';

let scene: OrderScene;
const t = useTestApp();
beforeAll(async () => {
  scene = await createOrderScene(t);
});

type Headers = Record<string, string>;

const patch = (url: string, document: unknown, token: string, headers: Headers = MERGE_PATCH): Promise<LightMyRequestResponse> =>
  t.request({ method: 'PATCH', url, headers, payload: JSON.stringify(document), token });

async function read<T>(url: string, token = t.admin.token): Promise<{ body: T; etag: string }> {
  const res = await t.request({ method: 'GET', url, token });
  expect(res.statusCode, res.body).toBe(200);
  return { body: res.json<T>(), etag: String(res.headers.etag) };
}

/** The events of one type about resource `id`, newest first. */
async function eventsAbout(type: string, id: number): Promise<EventBody[]> {
  return (await readAllEvents(t, `/api/v1/events?type=${type}`)).filter((event) => (event.data.object as { id: number }).id === id);
}

const fiftyKeys = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`key_${i}`, `value ${i}`]));

/** Each bad merge patch of metadata and the field its 422 names (the resource holds nothing yet). */
const BAD: [string, Record<string, unknown>, string][] = [
  ['51 keys', { ...fiftyKeys, one_more: 'x' }, 'metadata'],
  ['a 41-character key', { ['k'.repeat(41)]: 'x' }, `metadata.${'k'.repeat(41)}`],
  ['a 501-character value', { note: 'x'.repeat(501) }, 'metadata.note'],
  ['a number value', { count: 3 }, 'metadata.count'],
  ['a nested object', { nested: { a: 'b' } }, 'metadata.nested'],
];

/** A paid order's payment, paid by Alice. */
async function payment(): Promise<PaymentBody> {
  const order = await orderInStatus(t, 'confirmed', scene.alice, { items: [{ product_id: scene.mug.id, quantity: 1 }], address: '1 Main St' });
  return payOrder(t, order, scene.alice.token);
}

describe('PATCH /products/{id}: merge patch and JSON Patch, as PUT allows (admins, service clients with products:write)', () => {
  it('a merge patch merges metadata key by key (null removes one), changes other fields as PUT would, and records product.updated with previous_attributes', async () => {
    const product = await createProduct(t, { metadata: { supplier: 'ACME', shelf: 'A1', color: 'red' } });
    const res = await patch(`${PRODUCTS}/${product.id}`, { price: 1799, metadata: { shelf: 'B2', color: null, season: 'spring' } }, t.admin.token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<ProductBody>()).toMatchObject({ price: 1799, name: product.name, sku: product.sku, metadata: { supplier: 'ACME', shelf: 'B2', season: 'spring' } });
    expect(Object.keys(res.json<ProductBody>().metadata).sort()).toEqual(['season', 'shelf', 'supplier']);
    const [event] = await eventsAbout('product.updated', product.id);
    expect(event?.data.previous_attributes).toMatchObject({ price: product.price, metadata: { supplier: 'ACME', shelf: 'A1', color: 'red' } });
    expect((event?.data.object as ProductBody).metadata).toEqual({ supplier: 'ACME', shelf: 'B2', season: 'spring' });
  });

  it('a JSON Patch adds and removes one key; application/json is read as a merge patch', async () => {
    const product = await createProduct(t, { metadata: { supplier: 'ACME' } });
    const added = await patch(`${PRODUCTS}/${product.id}`, [{ op: 'add', path: '/metadata/shelf', value: 'C3' }, { op: 'remove', path: '/metadata/supplier' }], t.admin.token, JSON_PATCH);
    expect(added.statusCode, added.body).toBe(200);
    expect(added.json<ProductBody>().metadata).toEqual({ shelf: 'C3' });
    const merged = await patch(`${PRODUCTS}/${product.id}`, { metadata: { bin: '7' } }, t.admin.token, { 'content-type': 'application/json' });
    expect(merged.json<ProductBody>().metadata).toEqual({ shelf: 'C3', bin: '7' });
  });

  it('a patch that changes nothing changes nothing: same ETag and updated_at, no event', async () => {
    const product = await createProduct(t, { metadata: { supplier: 'ACME' } });
    const before = await read<ProductBody>(`${PRODUCTS}/${product.id}`);
    const res = await patch(`${PRODUCTS}/${product.id}`, { price: product.price, metadata: { supplier: 'ACME', gone: null } }, t.admin.token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers.etag).toBe(before.etag);
    expect(res.json<ProductBody>().updated_at).toBe(before.body.updated_at);
    expect(await eventsAbout('product.updated', product.id)).toEqual([]);
  });

  it.each(BAD)('metadata with %s: 422 naming the field, the product unchanged', async (_name, metadata, field) => {
    const product = await createProduct(t);
    const before = await read<ProductBody>(`${PRODUCTS}/${product.id}`);
    const res = await patch(`${PRODUCTS}/${product.id}`, { metadata }, t.admin.token);
    expect(problemFields(expectProblem(res, 422, 'validation-error'))).toEqual([field]);
    expect((await read<ProductBody>(`${PRODUCTS}/${product.id}`)).etag).toBe(before.etag);
  });

  it('a merge past 50 keys is 422 naming metadata, though the patch itself has one key', async () => {
    const product = await createProduct(t, { metadata: fiftyKeys });
    const res = await patch(`${PRODUCTS}/${product.id}`, { metadata: { one_more: 'x' } }, t.admin.token);
    expect(problemFields(expectProblem(res, 422, 'validation-error'))).toEqual(['metadata']);
  });

  it('a required or defaulted field cannot be removed (422 naming it); a duplicate sku is 409; an archived product 410', async () => {
    const product = await createProduct(t);
    expect(problemFields(expectProblem(await patch(`${PRODUCTS}/${product.id}`, { currency: null }, t.admin.token), 422, 'validation-error'))).toEqual(['currency']);
    expect(problemFields(expectProblem(await patch(`${PRODUCTS}/${product.id}`, { name: null }, t.admin.token), 422, 'validation-error'))).toEqual(['name']);
    const other = await createProduct(t);
    expectProblem(await patch(`${PRODUCTS}/${product.id}`, { sku: other.sku }, t.admin.token), 409, 'duplicate-resource');
    expect((await t.request({ method: 'DELETE', url: `${PRODUCTS}/${product.id}`, token: t.admin.token })).statusCode).toBe(204);
    expectProblem(await patch(`${PRODUCTS}/${product.id}`, { name: 'Too late' }, t.admin.token), 410, 'gone');
  });

  it('a stale If-Match is 412 and changes nothing; the current tag applies the patch', async () => {
    const product = await createProduct(t, { metadata: { supplier: 'ACME' } });
    const before = await read<ProductBody>(`${PRODUCTS}/${product.id}`);
    expect((await patch(`${PRODUCTS}/${product.id}`, { name: 'Renamed' }, t.admin.token)).statusCode).toBe(200);
    const stale = await patch(`${PRODUCTS}/${product.id}`, { metadata: { supplier: null } }, t.admin.token, { ...MERGE_PATCH, 'if-match': before.etag });
    expectProblem(stale, 412, 'precondition-failed');
    const now = await read<ProductBody>(`${PRODUCTS}/${product.id}`);
    expect(now.body.metadata).toEqual({ supplier: 'ACME' });
    const fresh = await patch(`${PRODUCTS}/${product.id}`, { metadata: { supplier: null } }, t.admin.token, { ...MERGE_PATCH, 'if-match': now.etag });
    expect(fresh.statusCode, fresh.body).toBe(200);
    expect(fresh.json<ProductBody>().metadata).toEqual({});
  });

  it('who may PUT may PATCH: a customer is 403, a service client with products:write patches', async () => {
    const product = await createProduct(t);
    expectProblem(await patch(`${PRODUCTS}/${product.id}`, { metadata: { x: 'y' } }, scene.alice.token), 403, 'forbidden');
    const service = await t.serviceToken(['products:write']);
    const res = await patch(`${PRODUCTS}/${product.id}`, { metadata: { x: 'y' } }, service);
    expect(res.statusCode, res.body).toBe(200);
  });

  it('another media type is 415 with Accept-Patch naming the patch types', async () => {
    const product = await createProduct(t);
    const res = await t.request({ method: 'PATCH', url: `${PRODUCTS}/${product.id}`, headers: { 'content-type': 'text/plain' }, payload: 'name=x', token: t.admin.token });
    expectProblem(res, 415, 'unsupported-media-type');
    expect(res.headers['accept-patch']).toBe('application/merge-patch+json, application/json-patch+json, application/json');
  });
});

describe('PATCH /users/{id}: yourself, or anyone as an admin, as PUT allows', () => {
  it('a customer merges their own metadata and name; user.updated carries previous_attributes', async () => {
    const user = await t.createUser();
    await patch(`${USERS}/${user.id}`, { metadata: { crm_id: 'C-1', newsletter: 'yes' } }, user.token);
    const res = await patch(`${USERS}/${user.id}`, { name: 'Ada King', metadata: { newsletter: null, tier: 'gold' } }, user.token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<UserBody>()).toMatchObject({ name: 'Ada King', email: user.email, role: 'customer', metadata: { crm_id: 'C-1', tier: 'gold' } });
    expect(Object.keys(res.json<UserBody>().metadata).sort()).toEqual(['crm_id', 'tier']);
    const [event] = await eventsAbout('user.updated', user.id);
    expect(event?.data.previous_attributes).toMatchObject({ name: user.name, metadata: { crm_id: 'C-1', newsletter: 'yes' } });
  });

  it("another customer's user is 404; an admin patches anyone; a service client is 403", async () => {
    const user = await t.createUser();
    expectProblem(await patch(`${USERS}/${user.id}`, { metadata: { x: 'y' } }, scene.bob.token), 404, 'not-found');
    expect((await patch(`${USERS}/${user.id}`, { metadata: { x: 'y' } }, t.admin.token)).json<UserBody>().metadata).toEqual({ x: 'y' });
    expectProblem(await patch(`${USERS}/${user.id}`, { metadata: { x: 'z' } }, await t.serviceToken(['users:write', 'users:read'])), 403, 'forbidden');
  });

  it('the rules of PUT hold: your own email needs current_password (422), a role only an admin sets (403)', async () => {
    const user = await t.createUser();
    const email = `patched-${user.id}@example.com`;
    expect(problemFields(expectProblem(await patch(`${USERS}/${user.id}`, { email }, user.token), 422, 'validation-error'))).toEqual(['current_password']);
    expectProblem(await patch(`${USERS}/${user.id}`, { role: 'admin' }, user.token), 403, 'forbidden');
    const res = await patch(`${USERS}/${user.id}`, { email, current_password: TEST_PASSWORD }, user.token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<UserBody>()).toMatchObject({ email, role: 'customer' });
  });

  it('a patch that changes nothing changes nothing: same ETag, no event', async () => {
    const user = await t.createUser();
    const before = await read<UserBody>(`${USERS}/${user.id}`, user.token);
    const res = await patch(`${USERS}/${user.id}`, { name: user.name, metadata: { nothing: null } }, user.token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers.etag).toBe(before.etag);
    expect(await eventsAbout('user.updated', user.id)).toEqual([]);
  });

  it.each(BAD)('metadata with %s: 422 naming the field, the user unchanged', async (_name, metadata, field) => {
    const user = await t.createUser();
    const before = await read<UserBody>(`${USERS}/${user.id}`, user.token);
    const res = await patch(`${USERS}/${user.id}`, { metadata }, user.token);
    expect(problemFields(expectProblem(res, 422, 'validation-error'))).toEqual([field]);
    expect((await read<UserBody>(`${USERS}/${user.id}`, user.token)).etag).toBe(before.etag);
  });

  it('a stale If-Match is 412 and changes nothing', async () => {
    const user = await t.createUser();
    const before = await read<UserBody>(`${USERS}/${user.id}`, user.token);
    expect((await patch(`${USERS}/${user.id}`, { metadata: { a: '1' } }, user.token)).statusCode).toBe(200);
    const middle = await read<UserBody>(`${USERS}/${user.id}`, user.token);
    expectProblem(await patch(`${USERS}/${user.id}`, { metadata: { a: '2' } }, user.token, { ...MERGE_PATCH, 'if-match': before.etag }), 412, 'precondition-failed');
    expect(await read<UserBody>(`${USERS}/${user.id}`, user.token)).toEqual(middle);
  });
});

describe('PATCH /payments/{id}: metadata only, by admins and service clients with payments:write', () => {
  it('a merge patch merges metadata; updated_at moves; payment.updated carries the old metadata; no money moves', async () => {
    const paid = await payment();
    const first = await patch(`${PAYMENTS}/${paid.id}`, { metadata: { erp_id: 'ERP-1', gift_note: 'hi' } }, t.admin.token);
    expect(first.statusCode, first.body).toBe(200);
    const res = await patch(`${PAYMENTS}/${paid.id}`, { metadata: { gift_note: null, psp_ref: 'PSP-9' } }, t.admin.token);
    expect(res.statusCode, res.body).toBe(200);
    const patched = res.json<PaymentBody>();
    expect(patched).toMatchObject({ amount: paid.amount, amount_refunded: 0, order_id: paid.order_id, metadata: { erp_id: 'ERP-1', psp_ref: 'PSP-9' } });
    expect(Object.keys(patched.metadata).sort()).toEqual(['erp_id', 'psp_ref']);
    expect(Date.parse(patched.updated_at)).toBeGreaterThanOrEqual(Date.parse(paid.updated_at));
    expect(res.headers['last-modified']).toBeDefined();
    const [latest] = await eventsAbout('payment.updated', paid.id);
    expect(latest?.data.previous_attributes).toMatchObject({ metadata: { erp_id: 'ERP-1', gift_note: 'hi' } });
    expect(Object.keys(latest?.data.previous_attributes ?? {}).filter((key) => key !== 'metadata' && key !== 'updated_at')).toEqual([]);
    // In its order's timeline, like every payment event.
    const timeline = await timelineOf(t, paid.order_id);
    expect(timeline.map((event) => event.type)).toContain('payment.updated');
  });

  it('any other member is 422 naming it (merge patch or JSON Patch), and the payment is unchanged', async () => {
    const paid = await payment();
    const before = await read<PaymentBody>(`${PAYMENTS}/${paid.id}`);
    expect(problemFields(expectProblem(await patch(`${PAYMENTS}/${paid.id}`, { amount: 1, metadata: { a: 'b' } }, t.admin.token), 422, 'validation-error'))).toEqual(['amount']);
    expect(problemFields(expectProblem(await patch(`${PAYMENTS}/${paid.id}`, { status: null }, t.admin.token), 422, 'validation-error'))).toEqual(['status']);
    const json = await patch(`${PAYMENTS}/${paid.id}`, [{ op: 'add', path: '/metadata/a', value: 'b' }, { op: 'replace', path: '/amount_refunded', value: 5 }], t.admin.token, JSON_PATCH);
    expect(problemFields(expectProblem(json, 422, 'validation-error'))).toEqual(['amount_refunded']);
    expect((await read<PaymentBody>(`${PAYMENTS}/${paid.id}`)).etag).toBe(before.etag);
    expect(await eventsAbout('payment.updated', paid.id)).toEqual([]);
  });

  it('a JSON Patch on /metadata alone applies; a failed test is 409', async () => {
    const paid = await payment();
    const res = await patch(`${PAYMENTS}/${paid.id}`, [{ op: 'add', path: '/metadata/erp_id', value: 'ERP-7' }], t.admin.token, JSON_PATCH);
    expect(res.json<PaymentBody>().metadata).toEqual({ erp_id: 'ERP-7' });
    expectProblem(await patch(`${PAYMENTS}/${paid.id}`, [{ op: 'test', path: '/metadata/erp_id', value: 'ERP-8' }], t.admin.token, JSON_PATCH), 409, 'conflict');
  });

  it('customers (even the payer) are 403; a service client needs payments:write', async () => {
    const paid = await payment();
    expectProblem(await patch(`${PAYMENTS}/${paid.id}`, { metadata: { a: 'b' } }, scene.alice.token), 403, 'forbidden');
    expectProblem(await patch(`${PAYMENTS}/${paid.id}`, { metadata: { a: 'b' } }, await t.serviceToken(['orders:write', 'orders:read'])), 403, 'insufficient-scope');
    const res = await patch(`${PAYMENTS}/${paid.id}`, { metadata: { a: 'b' } }, await t.serviceToken(['payments:write']));
    expect(res.statusCode, res.body).toBe(200);
    expectProblem(await patch(`${PAYMENTS}/999999`, { metadata: { a: 'b' } }, t.admin.token), 404, 'not-found');
  });

  it('a patch that changes nothing changes nothing: same ETag and updated_at, no event', async () => {
    const paid = await payment();
    const before = await read<PaymentBody>(`${PAYMENTS}/${paid.id}`);
    const res = await patch(`${PAYMENTS}/${paid.id}`, { metadata: { gone: null } }, t.admin.token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers.etag).toBe(before.etag);
    expect(res.json<PaymentBody>().updated_at).toBe(paid.updated_at);
    expect(await eventsAbout('payment.updated', paid.id)).toEqual([]);
  });

  it.each(BAD)('metadata with %s: 422 naming the field, the payment unchanged', async (_name, metadata, field) => {
    const paid = await payment();
    const res = await patch(`${PAYMENTS}/${paid.id}`, { metadata }, t.admin.token);
    expect(problemFields(expectProblem(res, 422, 'validation-error'))).toEqual([field]);
    expect((await read<PaymentBody>(`${PAYMENTS}/${paid.id}`)).body.metadata).toEqual({});
  });

  it('a stale If-Match is 412 and changes nothing', async () => {
    const paid = await payment();
    const before = await read<PaymentBody>(`${PAYMENTS}/${paid.id}`);
    expect((await patch(`${PAYMENTS}/${paid.id}`, { metadata: { a: '1' } }, t.admin.token)).statusCode).toBe(200);
    expectProblem(await patch(`${PAYMENTS}/${paid.id}`, { metadata: { a: '2' } }, t.admin.token, { ...MERGE_PATCH, 'if-match': before.etag }), 412, 'precondition-failed');
    expect((await read<PaymentBody>(`${PAYMENTS}/${paid.id}`)).body.metadata).toEqual({ a: '1' });
  });
});

/**
 * Regression (issue 36 item 1): json-merge-patch returned the target untouched at any object
 * holding a `constructor`, `prototype` or `__proto__` key, so a PATCH answered 200 and wrote
 * nothing, not even the other keys, though create and PUT store `constructor` and `prototype`
 * (valid keys, docs/api.md#metadata). Every write stores them alike; `__proto__` is refused.
 */
describe('metadata keys named like JavaScript built-ins (constructor, prototype) are stored by every write, PATCH included', () => {
  const BUILT_IN_KEYS = { constructor: 'c', prototype: 'p', other: 'o' };

  /** Each resource that takes a PATCH of its metadata from the admin: how to make one, and its URL. */
  const RESOURCES: [string, () => Promise<string>][] = [
    ['an order', async () => `${ORDERS}/${(await createOrder(t, { customer_id: scene.alice.id, items: [{ product_id: scene.mug.id, quantity: 1 }] }, t.admin.token)).id}`],
    ['a product', async () => `${PRODUCTS}/${(await createProduct(t)).id}`],
  ];

  it.each(RESOURCES)('%s: a merge patch stores constructor and prototype with the other keys, and null removes them', async (_name, make) => {
    const url = await make();
    const res = await patch(url, { metadata: BUILT_IN_KEYS }, t.admin.token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<{ metadata: Record<string, string> }>().metadata).toEqual(BUILT_IN_KEYS);
    expect((await read<{ metadata: Record<string, string> }>(url)).body.metadata).toEqual(BUILT_IN_KEYS);
    const removed = await patch(url, { metadata: { constructor: null, prototype: 'p2' } }, t.admin.token);
    expect(removed.statusCode, removed.body).toBe(200);
    expect(removed.json<{ metadata: Record<string, string> }>().metadata).toEqual({ prototype: 'p2', other: 'o' });
  });

  it.each(RESOURCES)('%s: a JSON Patch adds, replaces and removes constructor and prototype', async (_name, make) => {
    const url = await make();
    const added = await patch(url, [{ op: 'add', path: '/metadata/constructor', value: 'c' }, { op: 'add', path: '/metadata/prototype', value: 'p' }], t.admin.token, JSON_PATCH);
    expect(added.statusCode, added.body).toBe(200);
    expect(added.json<{ metadata: Record<string, string> }>().metadata).toEqual({ constructor: 'c', prototype: 'p' });
    const changed = await patch(url, [{ op: 'replace', path: '/metadata/constructor', value: 'c2' }, { op: 'remove', path: '/metadata/prototype' }], t.admin.token, JSON_PATCH);
    expect(changed.statusCode, changed.body).toBe(200);
    expect((await read<{ metadata: Record<string, string> }>(url)).body.metadata).toEqual({ constructor: 'c2' });
  });

  it.each(RESOURCES)('%s: a top-level constructor member is refused as PUT refuses an unknown field (422), never 200 with nothing written', async (_name, make) => {
    const url = await make();
    const before = await read<unknown>(url);
    expect(problemFields(expectProblem(await patch(url, { constructor: 'x', metadata: { other: 'o' } }, t.admin.token), 422, 'validation-error'))).toEqual(['constructor']);
    expect((await read<unknown>(url)).etag).toBe(before.etag);
  });

  it.each(RESOURCES)('%s: a __proto__ key is refused (400) by a merge patch as by create, and by a JSON Patch; nothing is written', async (_name, make) => {
    const url = await make();
    const before = await read<unknown>(url);
    expectProblem(await patch(url, JSON.parse('{"metadata":{"__proto__":"x","other":"o"}}'), t.admin.token), 400, 'malformed-request');
    expectProblem(await patch(url, [{ op: 'add', path: '/metadata/other', value: 'o' }, { op: 'add', path: '/metadata/__proto__', value: 'x' }], t.admin.token, JSON_PATCH), 400, 'malformed-request');
    expect((await read<unknown>(url)).etag).toBe(before.etag);
  });

  it('create and PUT store the same keys the patches store', async () => {
    const product = await createProduct(t, { metadata: BUILT_IN_KEYS });
    expect(product.metadata).toEqual(BUILT_IN_KEYS);
    const order = await createOrder(t, { items: [{ product_id: scene.mug.id, quantity: 1 }], metadata: BUILT_IN_KEYS }, scene.alice.token);
    expect(order.metadata).toEqual(BUILT_IN_KEYS);
    const put = await t.request({ method: 'PUT', url: `${PRODUCTS}/${product.id}`, payload: writableProduct({ ...product, metadata: { constructor: 'c3' } }), token: t.admin.token });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json<ProductBody>().metadata).toEqual({ constructor: 'c3' });
  });
});
