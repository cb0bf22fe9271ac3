/**
 * Fulfillments over REST (docs/api.md#resources, #order-states, #caching and #authentication-and-authorization): a paid order is sent to fulfillment
 * (202, a requested fulfillment) and shipped (201, the order becomes shipped); fulfillments are
 * read like their order (another customer's is 404) and revalidated on every use. The whole life
 * of an order, draft to completed, through the doors a client uses.
 */
import { count, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { fulfillments } from '../../server/modules/fulfillments/fulfillments.table.ts';
import { useTestApp } from '../helpers/app.ts';
import { alter } from '../helpers/bodies.ts';
import {
  advanceOrder,
  createOrderScene,
  draftOrder,
  expectOrderUnchanged,
  MERGE_PATCH,
  orderAction,
  patchOrder,
  readOrder,
  ORDERS,
  type OrderBody,
  type OrderScene,
  ownLinks,
} from '../helpers/orders.ts';
import {
  fulfillmentsOf,
  postShipment,
  sendToFulfillment,
  shipmentInput,
  shipOrder,
  type FulfillmentBody,
  type FulfillmentListBody,
} from '../helpers/fulfillments.ts';
import { payOrder, PAYMENTS } from '../helpers/payments.ts';
import { expectProblem } from '../helpers/problems.ts';

let scene: OrderScene;
/** A warehouse: a service client that may ship, and read orders. */
let warehouse: string;

const t = useTestApp();
beforeAll(async () => {
  scene = await createOrderScene(t);
  warehouse = await t.serviceToken(['fulfillments:write', 'orders:read']);
});

const PRIVATE = 'private, max-age=0, must-revalidate';
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A paid order of alice's (or `owner`'s), paid through POST /payments. */
async function paidOrder(owner = scene.alice): Promise<OrderBody> {
  const order = await advanceOrder(t, await draftOrder(t, scene, { owner }), 'confirmed', owner);
  await payOrder(t, order, owner.token);
  return (await readOrder(t, order.id)).order;
}

async function fulfillmentRowsOf(orderId: number): Promise<number> {
  const [row] = await t.db.select({ n: count() }).from(fulfillments).where(eq(fulfillments.orderId, orderId));
  return row?.n ?? 0;
}

describe('POST /orders/{id}/send-to-fulfillment: 202, a requested fulfillment (docs/api.md#fulfillments)', () => {
  it('202 with Location and the fulfillment; the order stays paid', async () => {
    const order = await paidOrder();
    const res = await sendToFulfillment(t, order.id, t.admin.token);

    expect(res.statusCode, res.body).toBe(202);
    expect(res.headers['cache-control']).toBe('no-store');
    const fulfillment = res.json<FulfillmentBody>();
    expect(res.headers.location).toBe(`${fulfillmentsOf(order.id)}/${fulfillment.id}`);
    expect(fulfillment).toEqual({
      id: expect.any(Number),
      order_id: order.id,
      status: 'requested',
      carrier: null,
      tracking_number: null,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
    });
    const read = await t.request({ method: 'GET', url: String(res.headers.location), token: scene.alice.token });
    expect(read.json()).toEqual(fulfillment);
    expect((await readOrder(t, order.id)).order.status).toBe('paid');
  });

  it('a second request while one is open is 409 and opens nothing more', async () => {
    const order = await paidOrder();
    expect((await sendToFulfillment(t, order.id, warehouse)).statusCode).toBe(202);
    expectProblem(await sendToFulfillment(t, order.id, warehouse), 409, 'conflict');
    expect(await fulfillmentRowsOf(order.id)).toBe(1);
  });

  it.each(['draft', 'confirmed', 'cancelled'] as const)('an order in %s is 409 invalid-state-transition with allowed', async (status) => {
    const order = await advanceOrder(t, await draftOrder(t, scene), status, scene.alice);
    const problem = expectProblem(await sendToFulfillment(t, order.id, t.admin.token), 409, 'invalid-state-transition');
    expect(problem.allowed).toEqual([]);
    expect(await fulfillmentRowsOf(order.id)).toBe(0);
  });

  it('a shipped order is 409', async () => {
    const order = await paidOrder();
    await shipOrder(t, order.id, warehouse);
    expectProblem(await sendToFulfillment(t, order.id, warehouse), 409, 'invalid-state-transition');
  });

  it('an unknown order is 404', async () => {
    expectProblem(await sendToFulfillment(t, 999_999, t.admin.token), 404, 'not-found');
  });
});

describe('POST /orders/{id}/fulfillments ships the order: 201, the order becomes shipped (docs/api.md#resources and #order-states)', () => {
  it('without a request: a new shipped fulfillment, 201 with Location', async () => {
    const order = await paidOrder();
    const before = await readOrder(t, order.id);
    const res = await postShipment(t, order.id, shipmentInput({ carrier: 'DHL', tracking_number: 'JD0001' }), warehouse);

    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const fulfillment = res.json<FulfillmentBody>();
    expect(res.headers.location).toBe(`${fulfillmentsOf(order.id)}/${fulfillment.id}`);
    expect(fulfillment).toMatchObject({ order_id: order.id, status: 'shipped', carrier: 'DHL', tracking_number: 'JD0001' });
    const { order: shipped } = await readOrder(t, order.id);
    expect(shipped.status).toBe('shipped');
    expect(shipped.updated_at >= before.order.updated_at).toBe(true);
  });

  it('after a request: the open fulfillment itself becomes shipped (one record per shipment)', async () => {
    const order = await paidOrder();
    const requested = (await sendToFulfillment(t, order.id, warehouse)).json<FulfillmentBody>();
    const shipped = await shipOrder(t, order.id, warehouse);
    expect(shipped).toMatchObject({ id: requested.id, status: 'shipped', carrier: 'UPS', created_at: requested.created_at });
    expect(await fulfillmentRowsOf(order.id)).toBe(1);
  });

  it.each(['draft', 'confirmed', 'cancelled'] as const)('an order in %s is 409 invalid-state-transition, nothing changes', async (status) => {
    const order = await advanceOrder(t, await draftOrder(t, scene), status, scene.alice);
    const before = await readOrder(t, order.id);
    expectProblem(await postShipment(t, order.id, shipmentInput(), t.admin.token), 409, 'invalid-state-transition');
    await expectOrderUnchanged(t, before);
    expect(await fulfillmentRowsOf(order.id)).toBe(0);
  });

  it('shipping twice is 409: the order is already shipped', async () => {
    const order = await paidOrder();
    await shipOrder(t, order.id, warehouse);
    const problem = expectProblem(await postShipment(t, order.id, shipmentInput(), warehouse), 409, 'invalid-state-transition');
    expect(problem.allowed).toEqual([]);
    expect(await fulfillmentRowsOf(order.id)).toBe(1);
  });

  it.each([
    ['an empty carrier', { carrier: '' }, 'carrier'],
    ['a carrier over 100 characters', { carrier: 'x'.repeat(101) }, 'carrier'],
    ['a tracking number with a control character', { tracking_number: 'AB\u0007C' }, 'tracking_number'],
    ['no tracking number', { tracking_number: undefined }, 'tracking_number'],
    ['an unknown field', { weight: 3 }, 'weight'],
  ])('%s is 422 naming %s, nothing changes', async (_name, changes, field) => {
    const order = await paidOrder();
    const before = await readOrder(t, order.id);
    expectProblem(await postShipment(t, order.id, alter(shipmentInput(), changes), warehouse), 422, 'validation-error', { fields: [field] });
    await expectOrderUnchanged(t, before);
  });

  it('status=shipped by PATCH is 409: an order ships only by a fulfillment', async () => {
    const order = await paidOrder();
    expectProblem(await patchOrder(t, order.id, { status: 'shipped' }, t.admin.token, MERGE_PATCH), 409, 'invalid-state-transition');
  });
});

describe('who may send to fulfillment and ship (docs/api.md#authentication-and-authorization)', () => {
  it('a customer is 403, even on their own order', async () => {
    const order = await paidOrder();
    expectProblem(await sendToFulfillment(t, order.id, scene.alice.token), 403, 'forbidden');
    expectProblem(await postShipment(t, order.id, shipmentInput(), scene.alice.token), 403, 'forbidden');
    expect(await fulfillmentRowsOf(order.id)).toBe(0);
  });

  it('a service client without fulfillments:write is 403; no token is 401', async () => {
    const order = await paidOrder();
    const token = await t.serviceToken(['orders:read', 'orders:write', 'payments:write']);
    expectProblem(await sendToFulfillment(t, order.id, token), 403, 'insufficient-scope');
    expectProblem(await t.request({ method: 'POST', url: `${ORDERS}/${order.id}/send-to-fulfillment` }), 401, 'unauthorized');
  });
});

describe('GET /orders/{id}/fulfillments and .../{fulfillmentId}: read like the order, revalidated (docs/api.md#caching)', () => {
  let order: OrderBody;
  let shipped: FulfillmentBody;
  beforeAll(async () => {
    order = await paidOrder();
    shipped = await shipOrder(t, order.id, warehouse);
  });

  it('the owner reads one: 200, private revalidation, ETag and Last-Modified; 304 with the tag', async () => {
    const url = `${fulfillmentsOf(order.id)}/${shipped.id}`;
    const res = await t.request({ method: 'GET', url, token: scene.alice.token });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe(PRIVATE);
    expect(res.headers['last-modified']).toEqual(expect.any(String));
    expect(res.json()).toEqual(shipped);
    const again = await t.request({ method: 'GET', url, token: scene.alice.token, headers: { 'if-none-match': String(res.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.headers['cache-control']).toBe(PRIVATE);
  });

  it('the owner lists them in the list envelope, revalidated', async () => {
    const res = await t.request({ method: 'GET', url: fulfillmentsOf(order.id), token: scene.alice.token });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe(PRIVATE);
    expect(res.headers.etag).toEqual(expect.any(String));
    expect(res.json<FulfillmentListBody>()).toEqual({ data: [shipped], page: 1, limit: 20, has_more: false, next_cursor: null, prev_cursor: null });
  });

  it('another customer gets 404 for both, as for a missing order', async () => {
    expectProblem(await t.request({ method: 'GET', url: fulfillmentsOf(order.id), token: scene.bob.token }), 404, 'not-found');
    expectProblem(await t.request({ method: 'GET', url: `${fulfillmentsOf(order.id)}/${shipped.id}`, token: scene.bob.token }), 404, 'not-found');
  });

  it('a fulfillment of another order is 404 under this one; unknown ids are 404', async () => {
    const other = await paidOrder();
    expectProblem(await t.request({ method: 'GET', url: `${fulfillmentsOf(other.id)}/${shipped.id}`, token: t.admin.token }), 404, 'not-found');
    expectProblem(await t.request({ method: 'GET', url: `${fulfillmentsOf(order.id)}/999999`, token: t.admin.token }), 404, 'not-found');
    expectProblem(await t.request({ method: 'GET', url: fulfillmentsOf(999_999), token: t.admin.token }), 404, 'not-found');
  });

  it('an order without fulfillments lists none', async () => {
    const draft = await draftOrder(t, scene);
    const res = await t.request({ method: 'GET', url: fulfillmentsOf(draft.id), token: scene.alice.token });
    expect(res.json<FulfillmentListBody>().data).toEqual([]);
  });

  it('a service client reads with orders:read; without it 403', async () => {
    expect((await t.request({ method: 'GET', url: fulfillmentsOf(order.id), token: warehouse })).statusCode).toBe(200);
    const shipOnly = await t.serviceToken(['fulfillments:write']);
    expectProblem(await t.request({ method: 'GET', url: fulfillmentsOf(order.id), token: shipOnly }), 403, 'insufficient-scope');
  });
});

describe('the whole life of an order over REST: draft -> confirmed -> paid -> shipped -> delivered -> completed', () => {
  it('each step through its own door, each status offering the next step in _links', async () => {
    const alice = scene.alice;
    const links = (o: OrderBody) => Object.keys(ownLinks(o._links)).sort();

    const draft = await draftOrder(t, scene);
    expect(links(draft)).toEqual(['cancel', 'confirm', 'self']);

    const confirmed = (await orderAction(t, draft.id, 'confirm', alice.token)).json<OrderBody>();
    expect(confirmed.status).toBe('confirmed');
    expect(confirmed._links.pay).toEqual({ href: PAYMENTS, method: 'POST' });

    const payment = await payOrder(t, confirmed, alice.token);
    expect(payment).toMatchObject({ order_id: draft.id, amount: draft.total, status: 'captured' });
    const { order: paid } = await readOrder(t, draft.id, alice.token);
    expect(paid.status).toBe('paid');
    expect(links(paid)).toEqual(['cancel', 'fulfillments', 'self', 'send-to-fulfillment']);

    const sendHref = paid._links['send-to-fulfillment']?.href;
    const requested = await t.request({ method: 'POST', url: String(sendHref), token: warehouse });
    expect(requested.statusCode).toBe(202);

    const shipment = await shipOrder(t, draft.id, warehouse, { carrier: 'FedEx', tracking_number: '7712 3456 7890' });
    expect(shipment).toMatchObject({ id: requested.json<FulfillmentBody>().id, status: 'shipped', carrier: 'FedEx' });
    const { order: shipped } = await readOrder(t, draft.id, alice.token);
    expect(shipped.status).toBe('shipped');
    expect(links(shipped)).toEqual(['fulfillments', 'self']);
    const listed = await t.request({ method: 'GET', url: String(shipped._links.fulfillments?.href), token: alice.token });
    expect(listed.json<FulfillmentListBody>().data).toEqual([shipment]);

    // Delivered and completed are an admin's to set (docs/api.md#order-states); a customer is 403.
    expectProblem(await patchOrder(t, draft.id, { status: 'delivered' }, alice.token), 403, 'forbidden');
    const delivered = await patchOrder(t, draft.id, { status: 'delivered' }, t.admin.token);
    expect(delivered.statusCode, delivered.body).toBe(200);
    expect((await readOrder(t, draft.id, alice.token)).order.status).toBe('delivered');
    expectProblem(await patchOrder(t, draft.id, { status: 'shipped' }, t.admin.token), 409, 'invalid-state-transition');

    const completed = await patchOrder(t, draft.id, { status: 'COMPLETED' }, t.admin.token);
    expect(completed.statusCode, completed.body).toBe(200);
    expect(completed.json<OrderBody>()).toMatchObject({ status: 'completed', total: draft.total });
    expect(links(completed.json<OrderBody>())).toEqual(['fulfillments', 'self']);

    // Money taken stays: a completed order still cannot be deleted.
    expectProblem(await t.request({ method: 'DELETE', url: `${ORDERS}/${draft.id}`, token: t.admin.token }), 409, 'order-has-payment');
  });
});
