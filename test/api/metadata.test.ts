/**
 * `metadata` (docs/api.md#metadata): on orders, products, payments and users, set on create, in the
 * GET representation (so in events' `data.object`); a merge patch merges it and a key set to null
 * removes it; PUT replaces it. Bounds: 50 keys of 1-40 characters of [A-Za-z0-9_.-], string
 * values of at most 500: anything else is 422 naming the field, and changes nothing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.ts';
import { createOrderScene, draftOrder, ORDERS, patchOrder, putOrder, readOrder, type OrderBody, type OrderScene } from '../helpers/orders.ts';
import { expectProblem, problemFields } from '../helpers/problems.ts';
import { createProduct, productInput, PRODUCTS, writableProduct, type ProductBody } from '../helpers/products.ts';
import { PAYMENTS, paymentInput, type PaymentBody } from '../helpers/payments.ts';
import { USERS, userInput, type UserBody } from '../helpers/users.ts';

let scene: OrderScene;
const t = useTestApp();
beforeAll(async () => {
  scene = await createOrderScene(t);
});

const fiftyKeys = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`key_${i}`, `value ${i}`]));

/** Each bad metadata and the field its 422 names. */
const BAD: [string, unknown, string][] = [
  ['51 keys', { ...fiftyKeys, one_more: 'x' }, 'metadata'],
  ['a 41-character key', { ['k'.repeat(41)]: 'x' }, `metadata.${'k'.repeat(41)}`],
  ['a key with a space', { 'erp id': 'x' }, 'metadata.erp id'],
  // The empty key's path is `metadata` itself.
  ['an empty key', { '': 'x' }, 'metadata'],
  ['a 501-character value', { note: 'x'.repeat(501) }, 'metadata.note'],
  ['a number value', { count: 3 }, 'metadata.count'],
  ['a null value on create', { gone: null }, 'metadata.gone'],
  ['a nested object', { nested: { a: 'b' } }, 'metadata.nested'],
  ['an array instead of an object', ['a'], 'metadata'],
  ['a NUL character in a value', { note: 'a\u0000b' }, 'metadata.note'],
];

describe('orders: set on create, merged by a merge patch, replaced by PUT', () => {
  it('set on create, answered by GET, and the bounds themselves (50 keys, 40-character keys, 500-character values) are accepted', async () => {
    const metadata = { ...fiftyKeys, key_0: 'x'.repeat(500), ['k'.repeat(40)]: '' };
    delete (metadata as Record<string, string>).key_49;
    const res = await t.request({ method: 'POST', url: ORDERS, payload: { items: [], metadata }, token: scene.alice.token });
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json<OrderBody>();
    expect(created.metadata).toEqual(metadata);
    expect((await readOrder(t, created.id)).order.metadata).toEqual(metadata);
  });

  it('an order created without metadata has {}', async () => {
    const order = await draftOrder(t, scene);
    expect(order.metadata).toEqual({});
  });

  it.each(BAD)('create with %s: 422 naming the field, nothing created', async (_name, metadata, field) => {
    const before = (await t.request({ method: 'GET', url: `${ORDERS}?limit=100`, token: scene.bob.token })).json<{ data: unknown[] }>().data.length;
    const res = await t.request({ method: 'POST', url: ORDERS, payload: { items: [], metadata }, token: scene.bob.token });
    const problem = expectProblem(res, 422, 'validation-error');
    expect(problemFields(problem)).toEqual([field]);
    const after = (await t.request({ method: 'GET', url: `${ORDERS}?limit=100`, token: scene.bob.token })).json<{ data: unknown[] }>().data.length;
    expect(after).toBe(before);
  });

  it('a merge patch merges: new keys added, changed keys changed, a key set to null removed, the rest kept', async () => {
    const order = await draftOrder(t, scene);
    await patchOrder(t, order.id, { metadata: { erp_id: 'ERP-1', gift_note: 'Happy birthday', channel: 'web' } }, scene.alice.token);
    const res = await patchOrder(t, order.id, { metadata: { gift_note: null, channel: 'shop', campaign: 'spring' } }, scene.alice.token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<OrderBody>().metadata).toEqual({ erp_id: 'ERP-1', channel: 'shop', campaign: 'spring' });
    // `metadata: null` removes every key.
    const cleared = await patchOrder(t, order.id, { metadata: null }, scene.alice.token);
    expect(cleared.json<OrderBody>().metadata).toEqual({});
  });

  it('metadata changes in any status (a paid order too), and a patch that changes it is an order.updated', async () => {
    const order = await draftOrder(t, scene);
    await t.request({ method: 'POST', url: `${ORDERS}/${order.id}/confirm`, token: scene.alice.token });
    const { order: confirmed } = await readOrder(t, order.id);
    const paid = await t.request({ method: 'POST', url: PAYMENTS, payload: paymentInput(confirmed), token: scene.alice.token });
    expect(paid.statusCode, paid.body).toBe(201);
    const res = await patchOrder(t, order.id, { metadata: { erp_id: 'ERP-9' } }, scene.alice.token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<OrderBody>()).toMatchObject({ status: 'paid', metadata: { erp_id: 'ERP-9' } });
    const events = await t.request({ method: 'GET', url: `/api/v1/events?type=order.updated&limit=100`, token: t.admin.token });
    const mine = events.json<{ data: { data: { object: OrderBody } }[] }>().data.filter((e) => e.data.object.id === order.id);
    expect(mine[0]?.data.object.metadata).toEqual({ erp_id: 'ERP-9' });
  });

  it('a merge patch whose result breaks a bound is 422 naming the field, and the order is unchanged', async () => {
    const order = await draftOrder(t, scene);
    await patchOrder(t, order.id, { metadata: fiftyKeys }, scene.alice.token);
    const before = await readOrder(t, order.id);
    const res = await patchOrder(t, order.id, { metadata: { one_more: 'x' } }, scene.alice.token);
    expect(problemFields(expectProblem(res, 422, 'validation-error'))).toEqual(['metadata']);
    expect((await readOrder(t, order.id)).etag).toBe(before.etag);
  });

  it('PUT replaces the metadata; a PUT without it empties it', async () => {
    const order = await draftOrder(t, scene);
    await patchOrder(t, order.id, { metadata: { erp_id: 'ERP-1', channel: 'web' } }, scene.alice.token);
    const { order: current } = await readOrder(t, order.id);
    const replaced = await putOrder(t, order.id, { ...current, metadata: { channel: 'shop' } }, scene.alice.token);
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect(replaced.json<OrderBody>().metadata).toEqual({ channel: 'shop' });
    const withoutMetadata: Partial<OrderBody> = { ...replaced.json<OrderBody>() };
    delete withoutMetadata.metadata;
    const emptied = await putOrder(t, order.id, withoutMetadata, scene.alice.token);
    expect(emptied.json<OrderBody>().metadata).toEqual({});
  });

  it('a JSON Patch can add and remove one key', async () => {
    const order = await draftOrder(t, scene);
    const added = await patchOrder(t, order.id, [{ op: 'add', path: '/metadata/erp_id', value: 'ERP-7' }], scene.alice.token, { 'content-type': 'application/json-patch+json' });
    expect(added.json<OrderBody>().metadata).toEqual({ erp_id: 'ERP-7' });
    const removed = await patchOrder(t, order.id, [{ op: 'remove', path: '/metadata/erp_id' }], scene.alice.token, { 'content-type': 'application/json-patch+json' });
    expect(removed.json<OrderBody>().metadata).toEqual({});
  });
});

describe('products, users and payments: set on create, in GET, replaced by PUT', () => {
  it('products: create, GET, PUT replaces, bad metadata 422 naming the field', async () => {
    const product = await createProduct(t, { metadata: { supplier: 'ACME' } });
    expect(product.metadata).toEqual({ supplier: 'ACME' });
    const read = await t.request({ method: 'GET', url: `${PRODUCTS}/${product.id}` });
    expect(read.json<ProductBody>().metadata).toEqual({ supplier: 'ACME' });
    const put = await t.request({ method: 'PUT', url: `${PRODUCTS}/${product.id}`, payload: { ...writableProduct(product), metadata: { shelf: 'B2' } }, token: t.admin.token });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json<ProductBody>().metadata).toEqual({ shelf: 'B2' });
    for (const [, metadata, field] of BAD) {
      const res = await t.request({ method: 'POST', url: PRODUCTS, payload: { ...productInput(), metadata }, token: t.admin.token });
      expect(problemFields(expectProblem(res, 422, 'validation-error'))).toEqual([field]);
    }
  });

  it('users: set on registration, in GET; PUT replaces it', async () => {
    const res = await t.request({ method: 'POST', url: USERS, payload: userInput({ metadata: { crm_id: 'C-1' } }) });
    expect(res.statusCode, res.body).toBe(201);
    const user = res.json<UserBody>();
    expect(user.metadata).toEqual({ crm_id: 'C-1' });
    const put = await t.request({
      method: 'PUT',
      url: `${USERS}/${user.id}`,
      payload: { email: user.email, name: user.name, role: user.role, metadata: { crm_id: 'C-2' } },
      token: t.admin.token,
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json<UserBody>().metadata).toEqual({ crm_id: 'C-2' });
    const bad = await t.request({ method: 'POST', url: USERS, payload: userInput({ metadata: { count: 3 } as unknown as Record<string, string> }) });
    expect(problemFields(expectProblem(bad, 422, 'validation-error'))).toEqual(['metadata.count']);
  });

  it('payments: set on create, in GET; bad metadata is 422 and takes no money', async () => {
    const order = await draftOrder(t, scene);
    await t.request({ method: 'POST', url: `${ORDERS}/${order.id}/confirm`, token: scene.alice.token });
    const bad = await t.request({ method: 'POST', url: PAYMENTS, payload: { ...paymentInput(order), metadata: { note: 'x'.repeat(501) } }, token: scene.alice.token });
    expect(problemFields(expectProblem(bad, 422, 'validation-error'))).toEqual(['metadata.note']);
    expect((await readOrder(t, order.id)).order.status).toBe('confirmed');
    const res = await t.request({ method: 'POST', url: PAYMENTS, payload: { ...paymentInput(order), metadata: { psp_ref: 'PSP-1' } }, token: scene.alice.token });
    expect(res.statusCode, res.body).toBe(201);
    const payment = res.json<PaymentBody>();
    expect(payment.metadata).toEqual({ psp_ref: 'PSP-1' });
    const read = await t.request({ method: 'GET', url: `${PAYMENTS}/${payment.id}`, token: scene.alice.token });
    expect(read.json<PaymentBody>().metadata).toEqual({ psp_ref: 'PSP-1' });
  });
});
