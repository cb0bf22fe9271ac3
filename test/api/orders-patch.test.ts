/**
 * PATCH on an order (docs/api.md#writes): merge patch (RFC 7396), JSON Patch (RFC 6902) with all
 * six operations, the accepted media types, and the rule that a refused patch changes nothing.
 * Random documents are thrown at the same endpoint in orders-fuzz.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type TestUser, useTestApp } from '../helpers/app.ts';
import {
  createOrderScene,
  draftOrder as draftOrderIn,
  expectOrderUnchanged,
  JSON_PATCH,
  MERGE_PATCH as MERGE,
  ORDERS,
  patchOrder,
  readOrder,
  type OrderBody,
  type DraftOptions,
  type OrderScene,
} from '../helpers/orders.ts';
import { expectProblem } from '../helpers/problems.ts';
import type { ProductBody } from '../helpers/products.ts';

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

/** A draft of alice's: two shirts and a mug, an address, and optionally a discount code. */
const draftOrder = (options: Pick<DraftOptions, 'items' | 'discount_code'> = {}): Promise<OrderBody> => draftOrderIn(t, scene, options);
const read = (id: number) => readOrder(t, id);
const patch = (id: number, doc: unknown, token: string, headers: Record<string, string> = MERGE) => patchOrder(t, id, doc, token, headers);
const expectUnchanged = (before: { order: OrderBody; etag: string }): Promise<void> => expectOrderUnchanged(t, before);

describe('PATCH with a merge patch (RFC 7396)', () => {
  it('sets the fields it names and leaves the others', async () => {
    const order = await draftOrder();
    const res = await patch(order.id, { address: '5 Patch Ln', discount_code: 'WELCOME' }, alice.token);
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>()).toMatchObject({ address: '5 Patch Ln', discount_code: 'WELCOME', items: order.items, total: order.total });
  });

  it('null sets a nullable field to null', async () => {
    const order = await draftOrder({ discount_code: 'WELCOME' });
    const res = await patch(order.id, { address: null, discount_code: null }, alice.token);
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>()).toMatchObject({ address: null, discount_code: null, items: order.items });
  });

  it.each(['items', 'customer_id', 'status', 'currency'])('null on the required field %s is 422 naming it, and changes nothing', async (field) => {
    const order = await draftOrder();
    const before = await read(order.id);
    expectProblem(await patch(order.id, { [field]: null }, alice.token), 422, 'validation-error', { fields: [field] });
    await expectUnchanged(before);
  });

  it('an array replaces the whole items array', async () => {
    const order = await draftOrder();
    const res = await patch(order.id, { items: [{ product_id: mug.id, quantity: 3 }] }, alice.token);
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>().items).toEqual([{ product_id: mug.id, quantity: 3, unit_price: 550, line_total: 1650 }]);
    expect(res.json<OrderBody>().total).toBe(1650);
  });

  it('application/json is read as a merge patch', async () => {
    const order = await draftOrder();
    const res = await patch(order.id, { address: '6 Json Way' }, alice.token, { 'content-type': 'application/json' });
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>().address).toBe('6 Json Way');
  });

  it('a result that is not a valid order is 422 with field errors, and changes nothing', async () => {
    const order = await draftOrder();
    const before = await read(order.id);
    expectProblem(await patch(order.id, { items: [{ product_id: shirt.id, quantity: 0 }] }, alice.token), 422, 'validation-error', { fields: ['items.0.quantity'] });
    expectProblem(await patch(order.id, { address: 42 }, alice.token), 422, 'validation-error', { fields: ['address'] });
    expectProblem(await patch(order.id, { discount_code: 'no good' }, alice.token), 422, 'validation-error', { fields: ['discount_code'] });
    expectProblem(await patch(order.id, { colour: 'red' }, alice.token), 422, 'validation-error', { fields: ['colour'] });
    expectProblem(await patch(order.id, { items: [{ product_id: 999_999, quantity: 1 }] }, alice.token), 422, 'validation-error', { fields: ['items.0.product_id'] });
    await expectUnchanged(before);
  });

  it('read-only fields in a merge patch are ignored', async () => {
    const order = await draftOrder();
    const res = await patch(order.id, { total: 1, id: 999, address: '7 Ro Rd' }, alice.token);
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>()).toMatchObject({ id: order.id, total: order.total, address: '7 Ro Rd' });
  });

  it('repeating a merge patch changes nothing and answers the same ETag', async () => {
    const order = await draftOrder();
    const first = await patch(order.id, { address: '8 Twice St' }, alice.token);
    const second = await patch(order.id, { address: '8 Twice St' }, alice.token);
    expect(second.statusCode).toBe(200);
    expect(second.headers.etag).toBe(first.headers.etag);
    expect(second.json()).toEqual(first.json());
  });
});

describe('PATCH with a JSON Patch (RFC 6902): all six operations', () => {
  it('add appends an item, priced from the product', async () => {
    const order = await draftOrder({ items: [{ product_id: shirt.id, quantity: 1 }] });
    const res = await patch(order.id, [{ op: 'add', path: '/items/-', value: { product_id: mug.id, quantity: 2 } }], alice.token, JSON_PATCH);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<OrderBody>().items).toEqual([
      { product_id: shirt.id, quantity: 1, unit_price: 1999, line_total: 1999 },
      { product_id: mug.id, quantity: 2, unit_price: 550, line_total: 1100 },
    ]);
    expect(res.json<OrderBody>().total).toBe(3099);
  });

  it('remove deletes an item', async () => {
    const order = await draftOrder();
    const res = await patch(order.id, [{ op: 'remove', path: '/items/0' }], alice.token, JSON_PATCH);
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>().items.map((i) => i.product_id)).toEqual([mug.id]);
  });

  it('replace sets a value', async () => {
    const order = await draftOrder();
    const res = await patch(
      order.id,
      [
        { op: 'replace', path: '/address', value: '10 Replace Rd' },
        { op: 'replace', path: '/items/0/quantity', value: 5 },
      ],
      alice.token,
      JSON_PATCH,
    );
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>()).toMatchObject({ address: '10 Replace Rd' });
    expect(res.json<OrderBody>().items[0]).toEqual({ product_id: shirt.id, quantity: 5, unit_price: 1999, line_total: 9995 });
  });

  it('move reorders items', async () => {
    const order = await draftOrder();
    const res = await patch(order.id, [{ op: 'move', from: '/items/1', path: '/items/0' }], alice.token, JSON_PATCH);
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>().items.map((i) => i.product_id)).toEqual([mug.id, shirt.id]);
  });

  it('copy duplicates an item', async () => {
    const order = await draftOrder({ items: [{ product_id: mug.id, quantity: 2 }] });
    const res = await patch(order.id, [{ op: 'copy', from: '/items/0', path: '/items/-' }], alice.token, JSON_PATCH);
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>().items).toHaveLength(2);
    expect(res.json<OrderBody>().total).toBe(2200);
  });

  it('test guards the operations after it', async () => {
    const order = await draftOrder();
    const res = await patch(
      order.id,
      [
        { op: 'test', path: '/status', value: 'draft' },
        { op: 'replace', path: '/address', value: '11 Tested Ter' },
      ],
      alice.token,
      JSON_PATCH,
    );
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>().address).toBe('11 Tested Ter');
  });

  it('remove /discount_code removes the discount code', async () => {
    const order = await draftOrder({ discount_code: 'WELCOME' });
    const res = await patch(order.id, [{ op: 'remove', path: '/discount_code' }], alice.token, JSON_PATCH);
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>().discount_code).toBeNull();
    expect((await read(order.id)).order.discount_code).toBeNull();
  });

  it('a failed test is 409 and nothing changes', async () => {
    const order = await draftOrder();
    const before = await read(order.id);
    const res = await patch(
      order.id,
      [
        { op: 'replace', path: '/address', value: 'never' },
        { op: 'test', path: '/status', value: 'confirmed' },
      ],
      alice.token,
      JSON_PATCH,
    );
    expectProblem(res, 409, 'conflict');
    await expectUnchanged(before);
  });

  it.each([
    ['replace of a missing member', [{ op: 'replace', path: '/nickname', value: 'x' }]],
    ['remove of a missing item', [{ op: 'remove', path: '/items/9' }]],
    ['move from a missing path', [{ op: 'move', from: '/items/7', path: '/items/0' }]],
    ['add beyond the end of an array', [{ op: 'add', path: '/items/5', value: { product_id: 1, quantity: 1 } }]],
    ['a path through a missing member', [{ op: 'add', path: '/nothing/here', value: 1 }]],
    ['test of a missing path', [{ op: 'test', path: '/nothing', value: 1 }]],
    ['remove of /constructor, which an order does not have', [{ op: 'remove', path: '/constructor' }]],
    ['copy from /constructor', [{ op: 'copy', from: '/constructor', path: '/address' }]],
    ['replace of /hasOwnProperty', [{ op: 'replace', path: '/hasOwnProperty', value: 'x' }]],
    ['test of /toString', [{ op: 'test', path: '/toString', value: 'x' }]],
  ])('a path that does not exist (%s) is 409 and nothing changes', async (_name, doc) => {
    const order = await draftOrder();
    const before = await read(order.id);
    expectProblem(await patch(order.id, doc, alice.token, JSON_PATCH), 409, 'conflict');
    await expectUnchanged(before);
  });

  it.each([
    ['an object instead of an array', { op: 'replace', path: '/address', value: 'x' }],
    ['an unknown op', [{ op: 'frobnicate', path: '/address', value: 'x' }]],
    ['an op without path', [{ op: 'replace', value: 'x' }]],
    ['add without value', [{ op: 'add', path: '/address' }]],
    ['move without from', [{ op: 'move', path: '/address' }]],
    ['a string element', ['replace']],
    ['a path that is not a JSON pointer', [{ op: 'replace', path: 'address', value: 'x' }]],
  ])('a malformed patch document (%s) is 400 and nothing changes', async (_name, doc) => {
    const order = await draftOrder();
    const before = await read(order.id);
    expectProblem(await patch(order.id, doc, alice.token, JSON_PATCH), 400, 'malformed-request');
    await expectUnchanged(before);
  });

  // Regression (found by orders-fuzz.test.ts): these documents made the patch library throw a
  // plain TypeError, answered as 500. A client's document never makes a 5xx.
  it.each([
    ['a path through __proto__', [{ op: 'replace', path: '/__proto__', value: 1 }], [400, 409]],
    ['a from through __proto__', [{ op: 'copy', from: '/__proto__', path: '/address' }], [400, 409]],
    ['copy to the root from a path through a missing member', [{ op: 'copy', from: '/nope/deeper', path: '' }], [409]],
    ['move of a value into its own child', [{ op: 'move', from: '/items', path: '/items/0/x' }], [400, 409]],
    ['move of _links into _links/self', [{ op: 'move', from: '/_links', path: '/_links/self' }], [400, 409]],
    ['an op after the root was removed', [{ op: 'remove', path: '' }, { op: 'add', path: '/address', value: 'x' }], [409, 422]],
  ])('a patch with %s answers 4xx, never 500, and nothing changes', async (_name, doc, statuses) => {
    const order = await draftOrder();
    const before = await read(order.id);
    const res = await patch(order.id, doc, alice.token, JSON_PATCH);
    expect(statuses, res.body).toContain(res.statusCode);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    await expectUnchanged(before);
  });

  it('a result that is not a valid order is 422 with field errors, and nothing changes', async () => {
    const order = await draftOrder();
    const before = await read(order.id);
    const res = await patch(
      order.id,
      [
        { op: 'replace', path: '/items/0/quantity', value: -1 },
        { op: 'add', path: '/colour', value: 'red' },
      ],
      alice.token,
      JSON_PATCH,
    );
    expectProblem(res, 422, 'validation-error', { fields: ['items.0.quantity', 'colour'] });
    await expectUnchanged(before);
  });
});

describe('PATCH accepts only patch media types', () => {
  it.each(['text/plain', 'application/xml', 'application/x-www-form-urlencoded'])('%s is 415 with Accept-Patch, and nothing changes', async (type) => {
    const order = await draftOrder();
    const before = await read(order.id);
    const res = await t.request({ method: 'PATCH', url: `${ORDERS}/${order.id}`, headers: { 'content-type': type }, payload: 'address=x', token: alice.token });
    expectProblem(res, 415, 'unsupported-media-type');
    const accepted = String(res.headers['accept-patch']);
    expect(accepted).toContain('application/merge-patch+json');
    expect(accepted).toContain('application/json-patch+json');
    await expectUnchanged(before);
  });

  it('malformed JSON in a patch is 400', async () => {
    const order = await draftOrder();
    const res = await t.request({ method: 'PATCH', url: `${ORDERS}/${order.id}`, headers: MERGE, payload: '{"address":', token: alice.token });
    expectProblem(res, 400, 'malformed-request');
  });
});

describe('PATCH obeys the same rules as PUT', () => {
  it('items change only in draft: adding an item to a confirmed order is 409, and nothing changes', async () => {
    const order = await draftOrder();
    expect((await t.request({ method: 'POST', url: `${ORDERS}/${order.id}/confirm`, token: alice.token })).statusCode).toBe(200);
    const before = await read(order.id);
    const res = await patch(order.id, [{ op: 'add', path: '/items/-', value: { product_id: mug.id, quantity: 1 } }], alice.token, JSON_PATCH);
    expectProblem(res, 409, 'conflict');
    await expectUnchanged(before);
  });

  it("another customer's order is 404, whatever the document", async () => {
    const order = await draftOrder();
    const before = await read(order.id);
    expectProblem(await patch(order.id, { address: 'Mine now' }, bob.token), 404, 'not-found');
    expectProblem(await patch(order.id, [{ op: 'test', path: '/status', value: 'draft' }], bob.token, JSON_PATCH), 404, 'not-found');
    await expectUnchanged(before);
  });

  it('an unknown order is 404', async () => {
    expectProblem(await patch(987_654, { address: 'x' }, alice.token), 404, 'not-found');
  });
});
