/**
 * docs/api.md#live-updates: `orders.onChange`, a subscription over server-sent events on `/trpc`,
 * through the typed client on a listening service. A customer hears its own orders' events and
 * no one else's, an admin every order's; a client resuming with the last id it saw gets what it
 * missed, once, then the live ones; the refusals are the problems of an order read. The stream
 * outlives the request timeouts, and the drain ends it so the process can stop.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventSource } from 'eventsource';
import { createOrderServiceClient, isProblem } from '../../client-sdk/src/index.ts';
import { restRoutes } from '../../server/http/rest-routes.ts';
import { appRouter } from '../../server/router.ts';
import { useTestApp } from '../helpers/app.ts';
import { timelineOf, type EventBody } from '../helpers/events.ts';
import { eventually, liveClient, subscribe, type Received } from '../helpers/live.ts';
import { insertClient, postToken, signInWithPassword } from '../helpers/oauth.ts';
import { createOrder, createOrderScene, orderAction, type OrderScene } from '../helpers/orders.ts';
import { payOrder } from '../helpers/payments.ts';
import { paced } from '../helpers/waits.ts';

// Short request timeouts: a stream must outlive them (they bound receiving a request, not answering it).
const http = { headersTimeoutMs: 500, requestTimeoutMs: 1000, keepAliveTimeoutMs: 1000 };

let url: string;
let scene: OrderScene;
const open: Received[] = [];

const t = useTestApp({ http });
beforeAll(async () => {
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  scene = await createOrderScene(t);
});
afterAll(async () => {
  for (const received of open) received.stop();
});

/** Subscribes, and resolves once the service has the subscriber (it hears from then on). */
async function subscribed(token: string | undefined, input?: Parameters<typeof subscribe>[1]): Promise<Received> {
  const before = t.app.live.subscribers;
  const received = subscribe(liveClient(url, token), input);
  open.push(received);
  await eventually(() => expect(t.app.live.subscribers).toBeGreaterThan(before));
  return received;
}

/** The first error a subscription got: its problem's type and status. */
async function refusal(token: string | undefined, input?: Parameters<typeof subscribe>[1]): Promise<{ type: string; status: number }> {
  const received = subscribe(liveClient(url, token), input);
  open.push(received);
  await eventually(() => expect(received.errors.length).toBeGreaterThan(0));
  const [error] = received.errors;
  if (!isProblem(error)) throw new Error(`not a problem: ${String(error)}`);
  return { type: error.problem.type, status: error.problem.status };
}

/** An order of the scene's customer `who`, confirmed and paid: its events are created, confirmed, payment.created, paid. */
async function paidOrder(who: 'alice' | 'bob'): Promise<number> {
  const customer = scene[who];
  const order = await createOrder(t, { items: [{ product_id: scene.mug.id, quantity: 1 }], address: '1 Main St' }, customer.token);
  expect((await orderAction(t, order.id, 'confirm', customer.token)).statusCode).toBe(200);
  await payOrder(t, { id: order.id, total: order.total }, customer.token);
  return order.id;
}

const ofOrder = (events: EventBody[], orderId: number) => events.filter((event) => orderIdOf(event) === orderId);
function orderIdOf(event: EventBody): unknown {
  const object = event.data.object;
  return event.type.startsWith('order.') ? object.id : object.order_id;
}

describe('who hears what', () => {
  it('a customer receives its own orders\' events (confirm, pay) as the events API answers them, and not another customer\'s; an admin receives both', async () => {
    const alice = await subscribed(scene.alice.token);
    const bob = await subscribed(scene.bob.token);
    const admin = await subscribed(t.admin.token);

    const alicesOrder = await paidOrder('alice');
    const bobsOrder = await paidOrder('bob');
    const alicesTimeline = await timelineOf(t, alicesOrder);
    const bobsTimeline = await timelineOf(t, bobsOrder);
    expect(alicesTimeline.map((event) => event.type)).toEqual(expect.arrayContaining(['order.created', 'order.confirmed', 'order.paid']));

    // Each stream's events of these orders (an earlier order's event may still arrive: its
    // notification was on its way when the stream began, docs/api.md#live-updates).
    await eventually(() => expect(ofOrder(alice.events, alicesOrder)).toHaveLength(alicesTimeline.length));
    await eventually(() => expect(ofOrder(bob.events, bobsOrder)).toHaveLength(bobsTimeline.length));
    await eventually(() => expect(ofOrder(admin.events, bobsOrder)).toHaveLength(bobsTimeline.length));
    // Each exactly as GET /api/v1/orders/{id}/events answers it, in the order they were written.
    expect(ofOrder(alice.events, alicesOrder)).toEqual(alicesTimeline);
    expect(alice.ids.filter((id) => alicesTimeline.some((event) => event.id === id))).toEqual(alicesTimeline.map((event) => event.id));
    expect(ofOrder(bob.events, bobsOrder)).toEqual(bobsTimeline);
    // Never another customer's.
    expect(ofOrder(alice.events, bobsOrder)).toEqual([]);
    expect(ofOrder(bob.events, alicesOrder)).toEqual([]);
    expect(ofOrder(admin.events, alicesOrder)).toEqual(alicesTimeline);
    expect(ofOrder(admin.events, bobsOrder)).toEqual(bobsTimeline);
    // Only order events: a product's are not an order's change.
    expect(admin.events.every((event) => orderIdOf(event) !== undefined)).toBe(true);
    expect([alice, bob, admin].flatMap((received) => received.errors)).toEqual([]);
  });

  it('order_id narrows to one order; a service client with orders:read hears every order', async () => {
    const other = await paidOrder('alice');
    const watched = await createOrder(t, { items: [{ product_id: scene.shirt.id, quantity: 1 }], address: '2 Side St' }, scene.bob.token);
    const one = await subscribed(scene.bob.token, { order_id: watched.id });
    const service = await subscribed(await t.serviceToken(['orders:read']));
    await paidOrder('alice');
    expect((await orderAction(t, watched.id, 'confirm', scene.bob.token)).statusCode).toBe(200);
    await eventually(() => expect(one.events.map((event) => event.type).filter((type) => type !== 'order.created')).toEqual(['order.confirmed']));
    expect(ofOrder(one.events, watched.id)).toEqual(one.events);
    await eventually(() => expect(service.events.map((event) => event.type)).toContain('order.confirmed'));
    expect(ofOrder(service.events, other)).toEqual([]);
    expect(service.events.length).toBeGreaterThan(1);
  });
});

describe('resuming after the last event id', () => {
  it('gets the events committed while it was away, once each and in order, then the live ones', async () => {
    const customer = scene.alice;
    const order = await createOrder(t, { items: [{ product_id: scene.mug.id, quantity: 2 }], address: '1 Main St' }, customer.token);
    const first = await subscribed(customer.token, { order_id: order.id });
    expect((await orderAction(t, order.id, 'confirm', customer.token)).statusCode).toBe(200);
    // order.created may come first: it committed before the subscription began, but its
    // notification can still be on its way on a busy machine (docs/api.md#live-updates).
    await eventually(() => expect(first.events.at(-1)?.type).toBe('order.confirmed'));
    // The client goes: the service lets go of its subscriber.
    const subscribers = t.app.live.subscribers;
    first.stop();
    await eventually(() => expect(t.app.live.subscribers).toBe(subscribers - 1));
    const lastSeen = first.ids.at(-1);
    expect(first.events.map((event) => event.type).filter((type) => type !== 'order.created')).toEqual(['order.confirmed']);

    // While nobody listens: paid (payment.created, order.paid).
    await payOrder(t, { id: order.id, total: order.total }, customer.token);
    const afterLastSeen = async () => {
      const timeline = await timelineOf(t, order.id);
      return timeline.slice(timeline.findIndex((event) => event.id === lastSeen) + 1);
    };
    const missed = await afterLastSeen();
    expect(missed.map((event) => event.type)).toEqual(expect.arrayContaining(['payment.created', 'order.paid']));

    const resumed = await subscribed(customer.token, { order_id: order.id, lastEventId: lastSeen });
    await eventually(() => expect(resumed.events).toHaveLength(missed.length));
    expect(resumed.events).toEqual(missed);
    // Then live: cancelling the paid order (refunded in full) comes after, nothing twice.
    expect((await orderAction(t, order.id, 'cancel', customer.token)).statusCode).toBe(200);
    const all = await afterLastSeen();
    await eventually(() => expect(resumed.events).toHaveLength(all.length));
    expect(resumed.events).toEqual(all);
    expect(new Set(resumed.ids).size).toBe(resumed.ids.length);
  });

  it('a stream the service ends (its feed lost) reconnects by itself with the last id and misses nothing', async () => {
    const received = await subscribed(t.admin.token);
    const before = await paidOrder('bob');
    await eventually(() => expect(ofOrder(received.events, before).length).toBeGreaterThanOrEqual(4));
    const subscribers = t.app.live.subscribers;
    // As when the LISTEN connection was remade: the streams end, their clients resume from the table.
    t.app.live.endAll('relisten');
    const during = await paidOrder('bob');
    const expected = await timelineOf(t, during);
    await eventually(() => expect(ofOrder(received.events, during)).toHaveLength(expected.length));
    expect(ofOrder(received.events, during)).toEqual(expected);
    expect(new Set(received.ids).size).toBe(received.ids.length);
    expect(received.starts).toBeGreaterThanOrEqual(2);
    // Every stream endAll ended (this file's earlier ones too) reconnects on its own time.
    await eventually(() => expect(t.app.live.subscribers).toBe(subscribers));
    expect(received.errors).toEqual([]);
  });
});

describe('refusals: the problems of an order read', () => {
  it('anonymous: 401 unauthorized', async () => {
    expect(await refusal(undefined)).toEqual({ type: '/problems/unauthorized', status: 401 });
  });

  it("another customer's order: 404 not-found, as its read is; a missing order too", async () => {
    const bobs = await createOrder(t, { items: [{ product_id: scene.mug.id, quantity: 1 }] }, scene.bob.token);
    expect(await refusal(scene.alice.token, { order_id: bobs.id })).toEqual({ type: '/problems/not-found', status: 404 });
    expect(await refusal(t.admin.token, { order_id: 999_999 })).toEqual({ type: '/problems/not-found', status: 404 });
  });

  it('a service token without orders:read: 403 insufficient-scope', async () => {
    expect(await refusal(await t.serviceToken(['products:write']))).toEqual({ type: '/problems/insufficient-scope', status: 403 });
  });

  it('a lastEventId no longer kept: 410 gone; a malformed one 422; an unknown member 400 unknown-parameter, as a query\'s', async () => {
    expect(await refusal(t.admin.token, { lastEventId: 'evt_AAAAAAAAAAAAAAAAAAAA' })).toEqual({ type: '/problems/gone', status: 410 });
    expect(await refusal(t.admin.token, { lastEventId: 'nope' })).toEqual({ type: '/problems/validation-error', status: 422 });
    // @ts-expect-error the input is strict: an unknown member is refused, not ignored (as a query's: 400)
    expect(await refusal(t.admin.token, { order: 1 })).toEqual({ type: '/problems/unknown-parameter', status: 400 });
  });

  it('an invalid token is refused before the stream: 401', async () => {
    const res = await fetch(`${url}/trpc/orders.onChange`, { headers: { authorization: 'Bearer nope', accept: 'text/event-stream' } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { type: string }).type).toBe('/problems/unauthorized');
  });
});

describe('a stream ends with the token that holds it', () => {
  const problemOf = (error: unknown) => (isProblem(error) ? { type: error.problem.type, status: error.problem.status } : String(error));
  const customerToken = (user: { id: number; name: string }, ttlSeconds: number) => t.tokens.mint({ sub: String(user.id), role: 'customer', name: user.name }, ttlSeconds);

  it('a live stream kept delivering after its token expired: it ends at the exp, and reconnecting with the expired token is 401 (regression)', async () => {
    const received = await subscribed(await customerToken(scene.alice, 2));
    // The service ends the stream (a retryable 503: the client reconnects at once); the reconnection,
    // with the same token, now expired, is refused before any stream: the EventSource's 401.
    await eventually(() => expect(received.errors.map(String)).toEqual([expect.stringMatching(/\b401\b/)]));
    expect(received.starts).toBe(1);
  });

  it("with getToken the typed client reconnects with a fresh token when the stream's token expires, and goes on hearing", async () => {
    const before = t.app.live.subscribers;
    let minted = 0;
    const client = createOrderServiceClient({
      url,
      EventSource,
      getToken: async () => {
        minted += 1;
        return customerToken(scene.alice, 2);
      },
    });
    const received = subscribe(client);
    open.push(received);
    await eventually(() => expect(received.starts).toBeGreaterThanOrEqual(2));
    expect(minted).toBeGreaterThanOrEqual(2);
    const order = await createOrder(t, { items: [{ product_id: scene.mug.id, quantity: 1 }] }, scene.alice.token);
    await eventually(() => expect(ofOrder(received.events, order.id).map((event) => event.type)).toContain('order.created'));
    expect(received.errors).toEqual([]);
    received.stop();
    // Gone from the service too, so the next test counts its own stream.
    await eventually(() => expect(t.app.live.subscribers).toBe(before));
  });

  it("its user deleted: the stream ends with 401 (docs/api.md#live-updates)", async () => {
    const leaving = await t.createUser();
    const received = await subscribed(leaving.token);
    const deleted = await t.request({ method: 'DELETE', url: `/api/v1/users/${leaving.id}`, token: t.admin.token });
    expect(deleted.statusCode, deleted.body).toBe(204);
    await eventually(() => expect(received.errors.map(problemOf)).toEqual([{ type: '/problems/unauthorized', status: 401 }]));
  });

  it("its sign-in's refresh family revoked (POST /oauth/revoke): the stream ends with 401", async () => {
    const user = await t.createUser();
    const { client } = await insertClient(t.db);
    const tokens = await signInWithPassword(url, client.client_id, user);
    const received = await subscribed(tokens.access_token);
    const revoked = await postToken(url, { token: tokens.refresh_token, client_id: client.client_id }, {}, '/oauth/revoke');
    expect(revoked.status).toBe(200);
    await eventually(() => expect(received.errors.map(problemOf)).toEqual([{ type: '/problems/unauthorized', status: 401 }]));
  });
});

describe('not a REST operation', () => {
  it('has no route under /api/v1 and is not in the OpenAPI document', async () => {
    expect(restRoutes(appRouter).map((route) => route.procedurePath)).not.toContain('orders.onChange');
    const document = (await t.request({ method: 'GET', url: '/api/openapi.json' })).json<{ paths: Record<string, Record<string, { operationId?: string }>> }>();
    const operations = Object.values(document.paths).flatMap((path) => Object.values(path).map((operation) => operation.operationId));
    expect(operations.some((id) => id?.includes('onChange'))).toBe(false);
  });
});

describe('a long-lived stream and the service around it', () => {
  it('outlives the request and keep-alive timeouts: still one connection, still hearing', async () => {
    const received = await subscribed(t.admin.token);
    // Longer than requestTimeoutMs and keepAliveTimeoutMs, and Node's check of them: time must pass here.
    await paced(3 * http.requestTimeoutMs);
    const order = await createOrder(t, { items: [{ product_id: scene.mug.id, quantity: 1 }] }, scene.alice.token);
    await eventually(() => expect(ofOrder(received.events, order.id).map((event) => event.type)).toEqual(['order.created']));
    expect(received.starts).toBe(1);
    expect(received.errors).toEqual([]);
  });

  it('the drain ends every stream at once, so no connection is cut and the process can stop', async () => {
    const received = await subscribed(scene.alice.token);
    expect(t.app.live.subscribers).toBeGreaterThan(0);
    const cut = await t.app.lifecycle.drain({ timeoutMs: 20_000 });
    expect(cut).toBe(0);
    expect(t.app.live.subscribers).toBe(0);
    // The client tries to reconnect (to another instance, in production): here nothing listens.
    received.stop();
  });
});
