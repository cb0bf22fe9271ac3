/**
 * Events over REST (docs/api.md#events): every change writes its event in its own transaction
 * (no event without its change, no change without its event), holding the resource as its GET
 * answers it and, for an update, the old values of what changed; GET /events (admins, or
 * `events:read`), GET /events/{id}, and one order's timeline for whoever may read the order.
 */
import { count, eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { events } from '../../server/db/schema.ts';
import { webhookDeliveries, webhookEndpoints } from '../../server/modules/webhooks/webhooks.table.ts';
import { eventTypes } from '../../server/events/catalogue.ts';
import { transaction } from '../../server/db/unit-of-work.ts';
import { purgeOldEvents } from '../../server/modules/events/events.service.ts';
import { useTestApp } from '../helpers/app.ts';
import { onPostgres } from '../helpers/db.ts';
import { EVENTS, orderEventsOf, readAllEvents, readEvents, timelineOf, withoutLinks, type EventBody } from '../helpers/events.ts';
import { sendToFulfillment, shipOrder } from '../helpers/fulfillments.ts';
import { createOrderScene, draftOrder, orderAction, patchOrder, putOrder, readOrder, ORDERS, type OrderBody, type OrderScene } from '../helpers/orders.ts';
import { payOrder, postPayment, paymentInput, PAYMENTS, type PaymentBody } from '../helpers/payments.ts';
import { expectProblem } from '../helpers/problems.ts';
import { createProduct, PRODUCTS, writableProduct } from '../helpers/products.ts';
import { registerUser, USERS } from '../helpers/users.ts';
import { lockWaiters, until } from '../helpers/waits.ts';

let scene: OrderScene;

const t = useTestApp();
beforeAll(async () => {
  scene = await createOrderScene(t);
});

const EVENT_ID = /^evt_[A-Za-z0-9_-]{20}$/;

/** How many events are stored, all told. */
async function eventCount(): Promise<number> {
  const [row] = await t.db.select({ n: count() }).from(events);
  return row?.n ?? 0;
}

/** A purchase through the doors a client uses: create, confirm, pay, send to fulfillment, ship, deliver. */
async function purchase(): Promise<{ order: OrderBody; payment: PaymentBody }> {
  const draft = await draftOrder(t, scene);
  expect((await orderAction(t, draft.id, 'confirm', scene.alice.token)).statusCode).toBe(200);
  const payment = await payOrder(t, draft, scene.alice.token);
  expect((await sendToFulfillment(t, draft.id, t.admin.token)).statusCode).toBe(202);
  await shipOrder(t, draft.id, t.admin.token);
  expect((await patchOrder(t, draft.id, { status: 'delivered' }, t.admin.token)).statusCode).toBe(200);
  return { order: (await readOrder(t, draft.id)).order, payment };
}

describe('a purchase writes its events in order, each with the resource as its GET answers it', () => {
  let order: OrderBody;
  let payment: PaymentBody;
  let timeline: EventBody[];

  beforeAll(async () => {
    ({ order, payment } = await purchase());
    timeline = await timelineOf(t, order.id, scene.alice.token);
  });

  it('the order, its payment and its fulfillment, in order of created_at', () => {
    expect(timeline.map((e) => e.type)).toEqual([
      'order.created',
      'order.confirmed',
      'payment.created',
      'order.paid',
      'fulfillment.created',
      'fulfillment.updated',
      'order.shipped',
      'order.delivered',
    ]);
    const times = timeline.map((e) => e.created_at);
    expect([...times].sort()).toEqual(times);
    for (const event of timeline) {
      expect(event.id).toMatch(EVENT_ID);
      expect(event.api_version).toBe('v1');
    }
    expect(new Set(timeline.map((e) => e.id)).size).toBe(timeline.length);
  });

  it('data.object is the GET answer without _links; the last order event is the order as it is now', async () => {
    const last = timeline.at(-1);
    expect(last?.data.object).toEqual(withoutLinks(order));
    expect(timeline.find((e) => e.type === 'payment.created')?.data.object).toEqual(withoutLinks(payment));
    const res = await t.request({ method: 'GET', url: `${PAYMENTS}/${payment.id}`, token: scene.alice.token });
    expect(res.json()).toEqual(payment);
    expect(JSON.stringify(last?.data.object)).toBe(JSON.stringify(withoutLinks(order)));
  });

  it('a creation has no previous_attributes; a move holds the old status and updated_at', () => {
    const [created, confirmed] = timeline;
    expect(created?.data.object).toMatchObject({ id: order.id, status: 'draft' });
    expect(created?.data).not.toHaveProperty('previous_attributes');
    expect(confirmed?.data.object).toMatchObject({ status: 'confirmed' });
    expect(confirmed?.data.previous_attributes).toEqual({ status: 'draft', updated_at: created?.data.object.updated_at });
    const paid = timeline.find((e) => e.type === 'order.paid');
    expect(paid?.data.previous_attributes).toMatchObject({ status: 'confirmed' });
  });

  it('shipping a requested fulfillment is its update: previous_attributes holds requested and the empty carrier', () => {
    const requested = timeline.find((e) => e.type === 'fulfillment.created');
    const shipped = timeline.find((e) => e.type === 'fulfillment.updated');
    expect(requested?.data.object).toMatchObject({ order_id: order.id, status: 'requested', carrier: null });
    expect(shipped?.data.object).toMatchObject({ id: requested?.data.object.id, status: 'shipped', carrier: 'UPS' });
    expect(shipped?.data.previous_attributes).toMatchObject({ status: 'requested', carrier: null, tracking_number: null });
  });

  it('GET /events?order_id= answers the same events, and GET /events/{id} each one', async () => {
    const listed = (await readAllEvents(t, `${EVENTS}?order_id=${order.id}`)).reverse();
    expect(listed).toEqual(timeline);
    for (const event of timeline) {
      const res = await t.request({ method: 'GET', url: `${EVENTS}/${event.id}`, token: t.admin.token });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual(event);
      expect(res.headers['cache-control']).toBe('private, max-age=0, must-revalidate');
    }
  });

  it('the typed door (/trpc) answers the same timeline', async () => {
    const input = encodeURIComponent(JSON.stringify({ id: order.id, limit: 100 }));
    const res = await t.request({ method: 'GET', url: `/trpc/events.listForOrder?input=${input}`, token: scene.alice.token });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ result: { data: { data: EventBody[] } } }>();
    expect(body.result.data.data.map((e) => e.id).reverse()).toEqual(timeline.map((e) => e.id));
  });
});

describe('no event without its change: a refused or rolled-back change writes none', () => {
  it('a refused payment (wrong amount) writes neither payment.created nor order.paid', async () => {
    const draft = await draftOrder(t, scene);
    expect((await orderAction(t, draft.id, 'confirm', scene.alice.token)).statusCode).toBe(200);
    const before = await eventCount();
    expectProblem(await postPayment(t, paymentInput(draft, { amount: draft.total + 1 }), scene.alice.token), 422, 'validation-error');
    expect(await eventCount()).toBe(before);
    expect((await timelineOf(t, draft.id)).map((e) => e.type)).toEqual(['order.created', 'order.confirmed']);
  });

  it('a PUT whose fields were written before its confirm failed on stock rolls its order.updated back too', async () => {
    const scarce = await createProduct(t, { price: 100, stock: 1 });
    const draft = await draftOrder(t, scene, { items: [{ product_id: scarce.id, quantity: 5 }] });
    const before = await eventCount();
    const res = await putOrder(t, draft.id, { items: [{ product_id: scarce.id, quantity: 5 }], address: 'Elsewhere 2', status: 'confirmed' }, scene.alice.token);
    expectProblem(res, 409, 'insufficient-stock');
    expect(await eventCount()).toBe(before);
    expect((await readOrder(t, draft.id)).order.address).toBe(draft.address);
  });

  it('an order refused for an archived product writes no order.created', async () => {
    const gone = await createProduct(t);
    expect((await t.request({ method: 'DELETE', url: `${PRODUCTS}/${gone.id}`, token: t.admin.token })).statusCode).toBe(204);
    const before = await eventCount();
    const res = await t.request({ method: 'POST', url: ORDERS, payload: { items: [{ product_id: gone.id, quantity: 1 }] }, token: scene.alice.token });
    expectProblem(res, 422, 'validation-error', { fields: ['items.0.product_id'] });
    expect(await eventCount()).toBe(before);
  });

  it('a write that changes nothing writes no event', async () => {
    const draft = await draftOrder(t, scene);
    const before = await eventCount();
    expect((await patchOrder(t, draft.id, { address: draft.address }, scene.alice.token)).statusCode).toBe(200);
    expect((await orderAction(t, draft.id, 'cancel', scene.alice.token)).statusCode).toBe(200);
    expect((await orderAction(t, draft.id, 'cancel', scene.alice.token)).statusCode).toBe(200);
    expect(await eventCount()).toBe(before + 1);
  });
});

describe('every change the contract lists writes its type', () => {
  it('order.updated holds the old values of the fields that changed; order.cancelled and order.deleted follow', async () => {
    const draft = await draftOrder(t, scene);
    expect((await patchOrder(t, draft.id, { address: 'New 1', discount_code: 'SPRING' }, scene.alice.token)).statusCode).toBe(200);
    expect((await orderAction(t, draft.id, 'cancel', scene.alice.token)).statusCode).toBe(200);
    const cancelled = (await readOrder(t, draft.id)).order;
    expect((await t.request({ method: 'DELETE', url: `${ORDERS}/${draft.id}`, token: scene.alice.token })).statusCode).toBe(204);
    // The order is gone, so its timeline is 404 as its read is; GET /events still has them.
    expectProblem(await t.request({ method: 'GET', url: orderEventsOf(draft.id), token: t.admin.token }), 404, 'not-found');
    const all = (await readAllEvents(t, `${EVENTS}?order_id=${draft.id}`)).reverse();
    expect(all.map((e) => e.type)).toEqual(['order.created', 'order.updated', 'order.cancelled', 'order.deleted']);
    const updated = all[1];
    expect(updated?.data.previous_attributes).toEqual({ address: draft.address, discount_code: null, updated_at: draft.updated_at });
    expect(updated?.data.object).toMatchObject({ address: 'New 1', discount_code: 'SPRING', status: 'draft' });
    expect(all[3]?.data.object).toEqual(withoutLinks(cancelled));
  });

  it('product.created, product.updated (with the old values), product.archived', async () => {
    const product = await createProduct(t, { price: 700 });
    const res = await t.request({ method: 'PUT', url: `${PRODUCTS}/${product.id}`, payload: { ...writableProduct(product), price: 800 }, token: t.admin.token });
    expect(res.statusCode, res.body).toBe(200);
    expect((await t.request({ method: 'DELETE', url: `${PRODUCTS}/${product.id}`, token: t.admin.token })).statusCode).toBe(204);
    const mine = (await readAllEvents(t, `${EVENTS}?type=product.*`)).filter((e) => e.data.object.id === product.id).reverse();
    expect(mine.map((e) => e.type)).toEqual(['product.created', 'product.updated', 'product.archived']);
    expect(mine[0]?.data.object).toEqual(product);
    expect(mine[1]?.data.previous_attributes).toEqual({ price: 700, updated_at: product.updated_at });
    expect(mine[1]?.data.object).toEqual(res.json());
  });

  it('user.created, user.updated, user.deleted; a password never appears', async () => {
    const user = await registerUser(t);
    const res = await t.request({ method: 'PUT', url: `${USERS}/${user.id}`, payload: { email: user.email, name: 'Renamed', password: 'another-password-1' }, token: t.admin.token });
    expect(res.statusCode, res.body).toBe(200);
    expect((await t.request({ method: 'DELETE', url: `${USERS}/${user.id}`, token: t.admin.token })).statusCode).toBe(204);
    const mine = (await readAllEvents(t, `${EVENTS}?type=user.*`)).filter((e) => e.data.object.id === user.id).reverse();
    expect(mine.map((e) => e.type)).toEqual(['user.created', 'user.updated', 'user.deleted']);
    expect(mine[0]?.data.object).toEqual(user);
    expect(mine[1]?.data.previous_attributes).toEqual({ name: user.name, updated_at: user.updated_at });
    expect(JSON.stringify(mine)).not.toMatch(/password/);
  });
});

describe('GET /events: newest first, filtered by type and order, paged by cursor', () => {
  let order: OrderBody;

  beforeAll(async () => {
    ({ order } = await purchase());
  });

  it('`order.*` matches every order type and nothing else; a comma list matches each type', async () => {
    const orderOnly = await readAllEvents(t, `${EVENTS}?type=order.*&order_id=${order.id}`);
    expect(orderOnly.map((e) => e.type).reverse()).toEqual(['order.created', 'order.confirmed', 'order.paid', 'order.shipped', 'order.delivered']);
    const some = await readAllEvents(t, `${EVENTS}?type=${encodeURIComponent('payment.created, order.paid')}&order_id=${order.id}`);
    expect(some.map((e) => e.type)).toEqual(['order.paid', 'payment.created']);
    const all = await readAllEvents(t, `${EVENTS}?type=order.*,payment.*,fulfillment.*`);
    expect(all.length).toBeGreaterThan(0);
    expect(all.every((e) => /^(order|payment|fulfillment)\./.test(e.type))).toBe(true);
  });

  it('newest first, and paging by cursor (2 a page) walks the same list, each event once', async () => {
    const whole = await readEvents(t, `${EVENTS}?limit=100`);
    const keys = whole.data.map((e) => e.created_at);
    expect([...keys].sort().reverse()).toEqual(keys);
    const paged = await readAllEvents(t, `${EVENTS}?order_id=${order.id}`, t.admin.token, 2);
    expect(paged).toEqual(await readAllEvents(t, `${EVENTS}?order_id=${order.id}`));
    expect(paged).toHaveLength(8);
    const first = await readEvents(t, `${EVENTS}?order_id=${order.id}&limit=2`);
    expect(first.has_more).toBe(true);
    const res = await t.request({ method: 'GET', url: `${EVENTS}?order_id=${order.id}&limit=2`, token: t.admin.token });
    expect(res.headers.link).toMatch(/rel="next"/);
  });

  it('an unknown type or prefix is 422 naming type', async () => {
    for (const bad of ['order.nope', 'nope.*', 'order', '*', 'order.paid,', 'ORDER.PAID']) {
      const res = await t.request({ method: 'GET', url: `${EVENTS}?type=${encodeURIComponent(bad)}`, token: t.admin.token });
      expectProblem(res, 422, 'validation-error', { fields: ['type'] });
    }
    expectProblem(await t.request({ method: 'GET', url: `${orderEventsOf(order.id)}?type=nope.*`, token: t.admin.token }), 422, 'validation-error', { fields: ['type'] });
  });

  it('a malformed cursor, or one from other filters, is 400 naming cursor', async () => {
    const page = await readEvents(t, `${EVENTS}?type=order.*&limit=1`);
    const cursor = page.next_cursor ?? '';
    expect(cursor).not.toBe('');
    expectProblem(await t.request({ method: 'GET', url: `${EVENTS}?cursor=not-a-cursor`, token: t.admin.token }), 400, 'malformed-request', { fields: ['cursor'] });
    expectProblem(await t.request({ method: 'GET', url: `${EVENTS}?type=payment.*&cursor=${cursor}`, token: t.admin.token }), 400, 'malformed-request', { fields: ['cursor'] });
    // The same filter spelled another way is the same list.
    const spelled = [...eventTypes().keys()].filter((type) => type.startsWith('order.'));
    expect(spelled).toContain('order.paid');
    const res = await t.request({ method: 'GET', url: `${EVENTS}?type=${spelled.join(',')}&limit=1&cursor=${cursor}`, token: t.admin.token });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('a non-integer limit or order_id is 400, one out of range 422', async () => {
    expectProblem(await t.request({ method: 'GET', url: `${EVENTS}?limit=x`, token: t.admin.token }), 400, 'malformed-request');
    expectProblem(await t.request({ method: 'GET', url: `${EVENTS}?limit=0`, token: t.admin.token }), 422, 'validation-error');
    expectProblem(await t.request({ method: 'GET', url: `${EVENTS}?order_id=abc`, token: t.admin.token }), 400, 'malformed-request');
  });
});

describe('who reads events', () => {
  let order: OrderBody;

  beforeAll(async () => {
    order = await draftOrder(t, scene);
  });

  it('GET /events and /events/{id}: admins and service clients with events:read; customers are 403', async () => {
    const [event] = (await readEvents(t, `${EVENTS}?limit=1`)).data;
    expect(event).toBeDefined();
    const reader = await t.serviceToken(['events:read']);
    expect((await t.request({ method: 'GET', url: EVENTS, token: reader })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: `${EVENTS}/${event?.id}`, token: reader })).statusCode).toBe(200);
    expectProblem(await t.request({ method: 'GET', url: EVENTS, token: scene.alice.token }), 403, 'forbidden');
    expectProblem(await t.request({ method: 'GET', url: `${EVENTS}/${event?.id}`, token: scene.alice.token }), 403, 'forbidden');
    expectProblem(await t.request({ method: 'GET', url: EVENTS, token: await t.serviceToken(['orders:read']) }), 403, 'insufficient-scope');
    expectProblem(await t.request({ method: 'GET', url: EVENTS }), 401, 'unauthorized');
  });

  it("an order's timeline: its owner, admins, services with orders:read; another customer gets 404 as for the order", async () => {
    expect((await readEvents(t, orderEventsOf(order.id), scene.alice.token)).data).toHaveLength(1);
    expect((await readEvents(t, orderEventsOf(order.id), await t.serviceToken(['orders:read']))).data).toHaveLength(1);
    expectProblem(await t.request({ method: 'GET', url: `${ORDERS}/${order.id}`, token: scene.bob.token }), 404, 'not-found');
    expectProblem(await t.request({ method: 'GET', url: orderEventsOf(order.id), token: scene.bob.token }), 404, 'not-found');
    expectProblem(await t.request({ method: 'GET', url: orderEventsOf(2_000_000_000), token: t.admin.token }), 404, 'not-found');
    expectProblem(await t.request({ method: 'GET', url: orderEventsOf(order.id), token: await t.serviceToken(['events:read']) }), 403, 'insufficient-scope');
  });

  it('an event id that names nothing is 404, whatever its shape', async () => {
    for (const id of ['evt_AAAAAAAAAAAAAAAAAAAA', 'evt_short', 'nope', '1']) {
      expectProblem(await t.request({ method: 'GET', url: `${EVENTS}/${id}`, token: t.admin.token }), 404, 'not-found');
    }
  });
});

/** An endpoint taking order events, and an event `id` past the 30 days' retention: its one delivery is pending. */
async function oldEventWithDelivery(id: string): Promise<{ endpoint: { id: number }; old: string }> {
  const [endpoint] = await t.db
    .insert(webhookEndpoints)
    .values({ url: 'http://127.0.0.1:9/hooks', enabledEvents: ['order.*'], secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' })
    .returning({ id: webhookEndpoints.id });
  if (!endpoint) throw new Error('no endpoint');
  await t.db.insert(events).values({ id, type: 'order.created', data: { object: { id: 1 } }, createdAt: sql`now() - interval '31 days'` });
  return { endpoint, old: id };
}

describe('events are kept EVENT_RETENTION_DAYS, then purged in batches', () => {
  it('an event older than the retention goes; a younger one stays', async () => {
    const [recent] = (await readEvents(t, `${EVENTS}?limit=1`)).data;
    const old = 'evt_oldoldoldoldoldoldo';
    await t.db.insert(events).values({ id: old, type: 'order.created', data: { object: { id: 1 } }, createdAt: sql`now() - interval '31 days'` });
    expect(await purgeOldEvents(t.db, 30)).toBe(1);
    expect(await t.db.select({ id: events.id }).from(events).where(eq(events.id, old))).toEqual([]);
    expect((await t.request({ method: 'GET', url: `${EVENTS}/${recent?.id}`, token: t.admin.token })).statusCode).toBe(200);
  });

  it('an old event with a delivery still pending (its endpoint disabled, say) stays until the delivery ends', async () => {
    const { endpoint, old } = await oldEventWithDelivery('evt_pendingpendingpend');
    expect(await t.db.select({ state: webhookDeliveries.state }).from(webhookDeliveries).where(eq(webhookDeliveries.eventId, old))).toEqual([{ state: 'pending' }]);

    expect(await purgeOldEvents(t.db, 30)).toBe(0);
    expect(await t.db.select({ id: events.id }).from(events).where(eq(events.id, old))).toEqual([{ id: old }]);

    await t.db.update(webhookDeliveries).set({ state: 'failed', nextAttemptAt: null }).where(eq(webhookDeliveries.eventId, old));
    expect(await purgeOldEvents(t.db, 30)).toBe(1);
    expect(await t.db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.eventId, old))).toEqual([]);
    await t.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id));
  });

  // Two connections at once: PostgreSQL only (PGlite has one).
  it.runIf(onPostgres)('a delivery retried while the purge runs is kept, with its event (the purge neither loses it nor waits for it)', async () => {
    const { endpoint, old } = await oldEventWithDelivery('evt_retriedretriedretr');
    await t.db.update(webhookDeliveries).set({ state: 'failed', nextAttemptAt: null }).where(eq(webhookDeliveries.eventId, old));

    // A retry by hand (what retryDelivery writes) holds the delivery, uncommitted, while the purge runs.
    let outcome: 'purge finished' | 'purge waited on a lock' | undefined;
    let decided = false;
    let purge: Promise<'purge finished'> | undefined;
    await transaction(t.db, async (tx) => {
      await tx.update(webhookDeliveries).set({ state: 'pending', nextAttemptAt: sql`now()` }).where(eq(webhookDeliveries.eventId, old));
      purge = purgeOldEvents(t.db, 30).then(() => 'purge finished' as const);
      // Until the purge waits on the retry's lock, or the race is decided without it.
      const waiting = until('the purge to wait on a lock', async () => (decided ? 'decided' : (await lockWaiters(t.db)) > 0 && ('purge waited on a lock' as const)), { timeoutMs: 10_000 }).then(
        (found) => (found === 'purge waited on a lock' ? found : undefined),
        () => undefined,
      );
      outcome = await Promise.race([purge, waiting]);
      // The poller stops; a purge waiting on the retry's lock ends only once the retry commits.
      decided = true;
      await waiting;
    });
    await purge;
    expect(outcome).toBe('purge finished');
    expect(await t.db.select({ state: webhookDeliveries.state }).from(webhookDeliveries).where(eq(webhookDeliveries.eventId, old))).toEqual([{ state: 'pending' }]);
    expect(await t.db.select({ id: events.id }).from(events).where(eq(events.id, old))).toEqual([{ id: old }]);

    await t.db.update(webhookDeliveries).set({ state: 'succeeded', nextAttemptAt: null }).where(eq(webhookDeliveries.eventId, old));
    expect(await purgeOldEvents(t.db, 30)).toBe(1);
    await t.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id));
  });
});
