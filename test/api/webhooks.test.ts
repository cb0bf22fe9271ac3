/**
 * Webhooks (docs/webhooks.md): endpoints (admins, or `webhooks:manage`) with a secret shown once,
 * the URL and event-type rules, and delivery to a real receiver on a loopback socket, verified
 * with `standardwebhooks` as a receiver would: the retry schedule, 410 disabling the endpoint,
 * redirects refused, both signatures during a rotation, the SSRF rules in production.
 */
import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookWorker } from '../../server/modules/webhooks/webhooks.worker.ts';
import { useTestApp } from '../helpers/app.ts';
import { timelineOf, type EventBody } from '../helpers/events.ts';
import { sendToFulfillment, shipOrder } from '../helpers/fulfillments.ts';
import { createOrderScene, draftOrder, orderAction, patchOrder, type OrderScene } from '../helpers/orders.ts';
import { payOrder } from '../helpers/payments.ts';
import { expectProblem } from '../helpers/problems.ts';
import { createProduct } from '../helpers/products.ts';
import { createEndpoint, deliveriesOf, makeDueNow, startReceiver, WEBHOOK_ENDPOINTS, type Receiver, type WebhookEndpointBody } from '../helpers/webhooks.ts';
import { until } from '../helpers/waits.ts';

let scene: OrderScene;
let worker: WebhookWorker;
const DEV_RULES = { production: false, allowedHosts: [] };

const t = useTestApp();
beforeAll(async () => {
  scene = await createOrderScene(t);
  worker = new WebhookWorker(t.db, DEV_RULES);
});
afterAll(async () => {
  await worker?.stop();
});

/** Removes every endpoint, so each test counts only its own deliveries. */
async function deleteAllEndpoints(): Promise<void> {
  const res = await t.request({ method: 'GET', url: `${WEBHOOK_ENDPOINTS}?limit=100`, token: t.admin.token });
  for (const endpoint of res.json<{ data: WebhookEndpointBody[] }>().data) {
    expect((await t.request({ method: 'DELETE', url: `${WEBHOOK_ENDPOINTS}/${endpoint.id}`, token: t.admin.token })).statusCode).toBe(204);
  }
}

/** A product created through the API: one `product.created` event. */
const newProduct = () => createProduct(t);

/** Verifies a received request as a receiver would, with the endpoint's secret; answers the payload. */
function verified(secret: string, received: { headers: Record<string, string | string[] | undefined>; body: string }): EventBody {
  const headers = {
    'webhook-id': String(received.headers['webhook-id']),
    'webhook-timestamp': String(received.headers['webhook-timestamp']),
    'webhook-signature': String(received.headers['webhook-signature']),
  };
  return new Webhook(secret).verify(received.body, headers) as EventBody;
}

describe('endpoints: admins and webhooks:manage manage them; the secret is shown only on creation', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await deleteAllEndpoints();
  });

  it('POST answers 201 with a whsec_ secret of 32 bytes and a Location; GET and the list never show it', async () => {
    const res = await t.request({ method: 'POST', url: WEBHOOK_ENDPOINTS, payload: { url: receiver.url, enabled_events: ['order.*', 'payment.created'], description: 'Warehouse' }, token: t.admin.token });
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json<WebhookEndpointBody>();
    expect(res.headers.location).toBe(`${WEBHOOK_ENDPOINTS}/${created.id}`);
    expect(created).toMatchObject({ url: receiver.url, enabled_events: ['order.*', 'payment.created'], description: 'Warehouse', disabled: false, disabled_reason: null, previous_secret_expires_at: null });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(created.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    const read = await t.request({ method: 'GET', url: `${WEBHOOK_ENDPOINTS}/${created.id}`, token: t.admin.token });
    expect(read.statusCode).toBe(200);
    expect(read.json()).not.toHaveProperty('secret');
    expect(read.body).not.toContain(created.secret);
    expect(read.headers['cache-control']).toBe('no-store');
    const list = await t.request({ method: 'GET', url: WEBHOOK_ENDPOINTS, token: t.admin.token });
    expect(list.json<{ data: { id: number }[] }>().data.map((e) => e.id)).toContain(created.id);
    expect(list.body).not.toContain(created.secret);
  });

  it('with an Idempotency-Key, a replay answers the endpoint without its secret, and the key\'s stored result never holds it', async () => {
    const payload = { url: receiver.url, enabled_events: ['product.created'] };
    const headers = { 'idempotency-key': 'webhook-endpoint-once' };
    const first = await t.request({ method: 'POST', url: WEBHOOK_ENDPOINTS, payload, headers, token: t.admin.token });
    expect(first.statusCode, first.body).toBe(201);
    const created = first.json<WebhookEndpointBody>();
    expect(created.secret).toMatch(/^whsec_/);
    const replay = await t.request({ method: 'POST', url: WEBHOOK_ENDPOINTS, payload, headers, token: t.admin.token });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json<{ id: number }>().id).toBe(created.id);
    expect(replay.json()).not.toHaveProperty('secret');
    expect(replay.body).not.toContain(created.secret);
    const stored = await t.database.db.execute(sql`select response_body from idempotency_keys where key = 'webhook-endpoint-once'`);
    expect(JSON.stringify(stored)).not.toContain('whsec_');
  });

  it('PATCH changes the fields given; DELETE answers 204, then 404', async () => {
    const created = await createEndpoint(t, { url: receiver.url, enabled_events: ['*'] });
    const res = await t.request({ method: 'PATCH', url: `${WEBHOOK_ENDPOINTS}/${created.id}`, payload: { enabled_events: ['product.*'], description: 'Catalogue', disabled: true }, token: t.admin.token });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ url: receiver.url, enabled_events: ['product.*'], description: 'Catalogue', disabled: true, disabled_reason: 'requested' });
    const enabled = await t.request({ method: 'PATCH', url: `${WEBHOOK_ENDPOINTS}/${created.id}`, payload: { disabled: false, description: null }, token: t.admin.token });
    expect(enabled.json()).toMatchObject({ disabled: false, disabled_reason: null, description: null });
    expect((await t.request({ method: 'DELETE', url: `${WEBHOOK_ENDPOINTS}/${created.id}`, token: t.admin.token })).statusCode).toBe(204);
    expectProblem(await t.request({ method: 'DELETE', url: `${WEBHOOK_ENDPOINTS}/${created.id}`, token: t.admin.token }), 404, 'not-found');
  });

  it('a service client needs webhooks:manage; a customer is 403', async () => {
    const withScope = await t.serviceToken(['webhooks:manage']);
    const created = await createEndpoint(t, { url: receiver.url, enabled_events: ['*'] }, withScope);
    expect((await t.request({ method: 'GET', url: `${WEBHOOK_ENDPOINTS}/${created.id}`, token: withScope })).statusCode).toBe(200);
    const without = await t.serviceToken(['events:read']);
    expectProblem(await t.request({ method: 'GET', url: WEBHOOK_ENDPOINTS, token: without }), 403, 'insufficient-scope');
    expectProblem(await t.request({ method: 'POST', url: WEBHOOK_ENDPOINTS, payload: { url: receiver.url, enabled_events: ['*'] }, token: scene.alice.token }), 403, 'forbidden');
  });

  it('an id that names no endpoint is 404 on every operation, and a delivery of another endpoint is 404', async () => {
    const missing = 999_999;
    for (const [method, url] of [
      ['GET', `${WEBHOOK_ENDPOINTS}/${missing}`],
      ['PATCH', `${WEBHOOK_ENDPOINTS}/${missing}`],
      ['DELETE', `${WEBHOOK_ENDPOINTS}/${missing}`],
      ['POST', `${WEBHOOK_ENDPOINTS}/${missing}/rotate-secret`],
      ['GET', `${WEBHOOK_ENDPOINTS}/${missing}/deliveries`],
      ['POST', `${WEBHOOK_ENDPOINTS}/${missing}/deliveries/1/retry`],
    ] as const) {
      const res = await t.request({ method, url, token: t.admin.token, ...(method === 'PATCH' ? { payload: { description: 'x' } } : {}) });
      expectProblem(res, 404, 'not-found');
    }
    const first = await createEndpoint(t, { url: receiver.url, enabled_events: ['product.created'] });
    const second = await createEndpoint(t, { url: receiver.url, enabled_events: ['user.created'] });
    await newProduct();
    const [delivery] = await deliveriesOf(t, first.id);
    expect(delivery?.event_type).toBe('product.created');
    expectProblem(await t.request({ method: 'POST', url: `${WEBHOOK_ENDPOINTS}/${second.id}/deliveries/${delivery?.id}/retry`, token: t.admin.token }), 404, 'not-found');
  });
});

describe('bad input is 422 naming the field, and changes nothing', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await deleteAllEndpoints();
  });

  const cases: [string, string][] = [
    ['http to a host that is not loopback', 'http://hooks.example.com/x'],
    ['another scheme', 'ftp://hooks.example.com/x'],
    ['credentials', 'https://user:secret@hooks.example.com/x'],
    ['a fragment', 'https://hooks.example.com/x#part'],
    ['an empty fragment', 'https://hooks.example.com/x#'],
    ['no URL at all', 'hooks.example.com/x'],
    // A control character the URL parser would percent-encode, but PostgreSQL cannot store: never a 500.
    ['a NUL', 'https://hooks.example.com/a\u0000b'],
    ['a line break', 'https://hooks.example.com/a\nb'],
  ];
  for (const [what, url] of cases) {
    it(`a URL with ${what} is 422 naming url`, async () => {
      const res = await t.request({ method: 'POST', url: WEBHOOK_ENDPOINTS, payload: { url, enabled_events: ['*'] }, token: t.admin.token });
      const problem = expectProblem(res, 422, 'validation-error');
      expect(problem.errors?.map((e) => e.field)).toEqual(['url']);
    });
  }

  it('an unknown event type, or * beside others, is 422 naming enabled_events; prefixes and * alone are accepted', async () => {
    const unknown = expectProblem(await t.request({ method: 'POST', url: WEBHOOK_ENDPOINTS, payload: { url: receiver.url, enabled_events: ['order.paid', 'order.teleported'] }, token: t.admin.token }), 422, 'validation-error');
    expect(unknown.errors?.map((e) => e.field)).toEqual(['enabled_events.1']);
    const prefix = expectProblem(await t.request({ method: 'POST', url: WEBHOOK_ENDPOINTS, payload: { url: receiver.url, enabled_events: ['spaceship.*'] }, token: t.admin.token }), 422, 'validation-error');
    expect(prefix.errors?.map((e) => e.field)).toEqual(['enabled_events.0']);
    const star = expectProblem(await t.request({ method: 'POST', url: WEBHOOK_ENDPOINTS, payload: { url: receiver.url, enabled_events: ['*', 'order.paid'] }, token: t.admin.token }), 422, 'validation-error');
    expect(star.errors?.map((e) => e.field)).toEqual(['enabled_events']);
    expectProblem(await t.request({ method: 'POST', url: WEBHOOK_ENDPOINTS, payload: { url: receiver.url, enabled_events: [] }, token: t.admin.token }), 422, 'validation-error');
    const list = await t.request({ method: 'GET', url: WEBHOOK_ENDPOINTS, token: t.admin.token });
    expect(list.json<{ data: unknown[] }>().data).toEqual([]);
    const ok = await createEndpoint(t, { url: receiver.url, enabled_events: ['order.*', 'payment.created', 'order.*'] });
    expect(ok.enabled_events).toEqual(['order.*', 'payment.created']);
  });

  it('PATCH with a bad url or type is 422 and leaves the endpoint as it was', async () => {
    const endpoint = await createEndpoint(t, { url: receiver.url, enabled_events: ['*'] });
    expectProblem(await t.request({ method: 'PATCH', url: `${WEBHOOK_ENDPOINTS}/${endpoint.id}`, payload: { url: 'http://hooks.example.com/' }, token: t.admin.token }), 422, 'validation-error');
    expectProblem(await t.request({ method: 'PATCH', url: `${WEBHOOK_ENDPOINTS}/${endpoint.id}`, payload: { enabled_events: ['nope.nope'] }, token: t.admin.token }), 422, 'validation-error');
    const read = await t.request({ method: 'GET', url: `${WEBHOOK_ENDPOINTS}/${endpoint.id}`, token: t.admin.token });
    expect(read.json()).toMatchObject({ url: receiver.url, enabled_events: ['*'], updated_at: endpoint.updated_at });
  });
});

describe('delivery to a receiver on a loopback socket, verified with standardwebhooks', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await deleteAllEndpoints();
  });

  it('a purchase (order, confirm, pay, fulfil, ship, deliver) arrives whole: each event once, signed, its body the event as GET /events answers it', async () => {
    const endpoint = await createEndpoint(t, { url: receiver.url, enabled_events: ['order.*', 'payment.*', 'fulfillment.*'] });
    const draft = await draftOrder(t, scene);
    expect((await orderAction(t, draft.id, 'confirm', scene.alice.token)).statusCode).toBe(200);
    await payOrder(t, draft, scene.alice.token);
    expect((await sendToFulfillment(t, draft.id, t.admin.token)).statusCode).toBe(202);
    await shipOrder(t, draft.id, t.admin.token);
    expect((await patchOrder(t, draft.id, { status: 'delivered' }, t.admin.token)).statusCode).toBe(200);
    const timeline = await timelineOf(t, draft.id, scene.alice.token);

    expect(await worker.deliverDue()).toBe(timeline.length);
    expect(receiver.received).toHaveLength(timeline.length);
    const payloads = receiver.received.map((request) => verified(endpoint.secret, request));
    const byCreation = [...payloads].sort((a, b) => a.created_at.localeCompare(b.created_at) || timeline.findIndex((e) => e.id === a.id) - timeline.findIndex((e) => e.id === b.id));
    expect(byCreation.map((event) => event.type)).toEqual(['order.created', 'order.confirmed', 'payment.created', 'order.paid', 'fulfillment.created', 'fulfillment.updated', 'order.shipped', 'order.delivered']);
    for (const request of receiver.received) {
      const event = timeline.find((e) => e.id === request.headers['webhook-id']);
      expect(event, 'webhook-id is the event id').toBeDefined();
      expect(JSON.parse(request.body)).toEqual(event);
      expect(request.headers['content-type']).toBe('application/json');
      expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(300);
    }
    const deliveries = await deliveriesOf(t, endpoint.id);
    expect(deliveries).toHaveLength(timeline.length);
    for (const delivery of deliveries) expect(delivery).toMatchObject({ state: 'succeeded', attempts: 1, last_status: 200, last_error: null, next_attempt_at: null });
  });

  it('an endpoint gets only the types it names; a disabled one gets nothing', async () => {
    await deleteAllEndpoints();
    const products = await createEndpoint(t, { url: receiver.url, enabled_events: ['product.created'] });
    const users = await createEndpoint(t, { url: receiver.url, enabled_events: ['user.*'] });
    const off = await createEndpoint(t, { url: receiver.url, enabled_events: ['*'] });
    await t.request({ method: 'PATCH', url: `${WEBHOOK_ENDPOINTS}/${off.id}`, payload: { disabled: true }, token: t.admin.token });
    await newProduct();
    expect((await deliveriesOf(t, products.id)).map((d) => d.event_type)).toEqual(['product.created']);
    expect(await deliveriesOf(t, users.id)).toEqual([]);
    expect(await deliveriesOf(t, off.id)).toEqual([]);
  });
});

/** No endpoint but one taking product.created, and one product event for it; answers the endpoint. */
async function oneDeliveryTo(receiver: Receiver): Promise<WebhookEndpointBody> {
  await deleteAllEndpoints();
  receiver.received.length = 0;
  const endpoint = await createEndpoint(t, { url: receiver.url, enabled_events: ['product.created'] });
  await newProduct();
  return endpoint;
}

describe('stop() waits for the round under way: a stopped worker leaves no delivery to be sent again', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });

  const oneDelivery = () => {
    receiver.answer(() => 200);
    return oneDeliveryTo(receiver);
  };

  it('a claim under way when stop() is called: stop() answers once its delivery is sent and recorded', async () => {
    const endpoint = await oneDelivery();
    const started = new WebhookWorker(t.db, DEV_RULES);
    // start() sends its first claim at once: stop() comes while it is under way.
    started.start();
    await started.stop();
    expect((await deliveriesOf(t, endpoint.id))[0]).toMatchObject({ state: 'succeeded', attempts: 1, last_status: 200 });
    expect(receiver.received).toHaveLength(1);
  });

  it('an attempt on the wire when stop() is called: stop() answers once the receiver answered and the outcome is recorded', async () => {
    const endpoint = await oneDelivery();
    let answer: (() => void) | undefined;
    receiver.answer(() => (response) => {
      answer = () => response.writeHead(204).end();
    });
    const started = new WebhookWorker(t.db, DEV_RULES, { pollIntervalMs: 50 });
    started.start();
    await until('the attempt to reach the receiver', () => answer !== undefined).catch(() => undefined);
    const stopping = started.stop();
    expect(answer, 'the attempt reached the receiver').toBeDefined();
    answer?.();
    await stopping;
    expect((await deliveriesOf(t, endpoint.id))[0]).toMatchObject({ state: 'succeeded', attempts: 1, last_status: 204 });
    expect(receiver.received).toHaveLength(1);
  });
});

describe('retries follow WEBHOOK_RETRY_SCHEDULE; 410 disables; a redirect is a failure', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });

  const oneDelivery = () => oneDeliveryTo(receiver);

  const secondsUntil = (iso: string | null) => (iso === null ? Number.NaN : (Date.parse(iso) - Date.now()) / 1000);

  it('a receiver failing twice then answering 2xx gets the event on the third attempt, after 5 s and then 300 s', async () => {
    const endpoint = await oneDelivery();
    receiver.answer((_request, n) => (n < 2 ? 503 : 204));
    expect(await worker.deliverDue()).toBe(1);
    let [delivery] = await deliveriesOf(t, endpoint.id);
    expect(delivery).toMatchObject({ state: 'pending', attempts: 1, last_status: 503, last_error: 'the receiver answered 503' });
    // Due 5 s after the attempt: nothing is due yet (generous bounds: the machine may be slow).
    expect(secondsUntil(delivery?.next_attempt_at ?? null)).toBeGreaterThan(0);
    expect(secondsUntil(delivery?.next_attempt_at ?? null)).toBeLessThanOrEqual(5);
    expect(await worker.deliverDue()).toBe(0);

    await makeDueNow(t, endpoint.id);
    expect(await worker.deliverDue()).toBe(1);
    [delivery] = await deliveriesOf(t, endpoint.id);
    expect(delivery).toMatchObject({ state: 'pending', attempts: 2, last_status: 503 });
    expect(secondsUntil(delivery?.next_attempt_at ?? null)).toBeGreaterThan(200);
    expect(secondsUntil(delivery?.next_attempt_at ?? null)).toBeLessThanOrEqual(300);

    await makeDueNow(t, endpoint.id);
    expect(await worker.deliverDue()).toBe(1);
    [delivery] = await deliveriesOf(t, endpoint.id);
    expect(delivery).toMatchObject({ state: 'succeeded', attempts: 3, last_status: 204, last_error: null, next_attempt_at: null });
    const ids = receiver.received.map((request) => request.headers['webhook-id']);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(1);
    for (const request of receiver.received) verified(endpoint.secret, request);
  });

  it('after the last retry of the schedule the delivery has failed; retrying it by hand answers 202 and sends it now', async () => {
    const endpoint = await oneDelivery();
    receiver.answer(() => 500);
    const short = new WebhookWorker(t.db, DEV_RULES, { retryScheduleSeconds: [5] });
    expect(await short.deliverDue()).toBe(1);
    await makeDueNow(t, endpoint.id);
    expect(await short.deliverDue()).toBe(1);
    const [failed] = await deliveriesOf(t, endpoint.id);
    expect(failed).toMatchObject({ state: 'failed', attempts: 2, last_status: 500, next_attempt_at: null });

    receiver.answer(() => 200);
    const res = await t.request({ method: 'POST', url: `${WEBHOOK_ENDPOINTS}/${endpoint.id}/deliveries/${failed?.id}/retry`, token: t.admin.token });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ id: failed?.id, state: 'pending' });
    expect(await short.deliverDue()).toBe(1);
    expect((await deliveriesOf(t, endpoint.id))[0]).toMatchObject({ state: 'succeeded', attempts: 3, last_status: 200 });
    await short.stop();
  });

  it('410 Gone fails the delivery and disables the endpoint: later events make no delivery for it (docs/webhooks.md)', async () => {
    const endpoint = await oneDelivery();
    receiver.answer(() => 410);
    expect(await worker.deliverDue()).toBe(1);
    expect((await deliveriesOf(t, endpoint.id))[0]).toMatchObject({ state: 'failed', attempts: 1, last_status: 410 });
    const read = await t.request({ method: 'GET', url: `${WEBHOOK_ENDPOINTS}/${endpoint.id}`, token: t.admin.token });
    expect(read.json()).toMatchObject({ disabled: true, disabled_reason: 'gone' });
    await newProduct();
    expect(await worker.deliverDue()).toBe(0);
    expect(receiver.received).toHaveLength(1);
    expect(await deliveriesOf(t, endpoint.id)).toHaveLength(1);
  });

  it('a redirect is a failed attempt, never followed', async () => {
    const target = await startReceiver();
    const endpoint = await oneDelivery();
    receiver.answer(() => (response) => response.writeHead(307, { location: target.url }).end());
    expect(await worker.deliverDue()).toBe(1);
    expect((await deliveriesOf(t, endpoint.id))[0]).toMatchObject({ state: 'pending', attempts: 1, last_status: 307 });
    expect((await deliveriesOf(t, endpoint.id))[0]?.last_error).toMatch(/redirect/);
    expect(target.received).toEqual([]);
    await target.close();
  });

  it('a status HTTP does not define (799) is a failed attempt without a status, and the deliveries list still answers', async () => {
    const endpoint = await oneDelivery();
    receiver.answer(() => (response) => response.writeHead(799).end());
    expect(await worker.deliverDue()).toBe(1);
    const res = await t.request({ method: 'GET', url: `${WEBHOOK_ENDPOINTS}/${endpoint.id}/deliveries`, token: t.admin.token });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<{ data: unknown[] }>().data[0]).toMatchObject({ state: 'pending', attempts: 1, last_status: null, last_error: expect.stringMatching(/799/) });
  });

  it('a huge answer is read no further than a small bound, and its 2xx stands', async () => {
    const endpoint = await oneDelivery();
    let written = 0;
    receiver.answer(() => (response) => {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 120);
      // Writes until the worker hangs up (at most 64 MiB, so a broken bound ends the test anyway).
      const pump = () => {
        while (written < 64 * 1024 * 1024 && !response.destroyed) {
          written += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        response.end();
      };
      pump();
    });
    expect(await worker.deliverDue()).toBe(1);
    expect((await deliveriesOf(t, endpoint.id))[0]).toMatchObject({ state: 'succeeded', last_status: 200 });
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });
});

describe('rotating the secret: for 24 hours each delivery carries both signatures', () => {
  it('rotate-secret answers a new secret; the next delivery verifies with the new one and with the old one', async () => {
    const receiver = await startReceiver();
    await deleteAllEndpoints();
    const endpoint = await createEndpoint(t, { url: receiver.url, enabled_events: ['product.created'] });
    const res = await t.request({ method: 'POST', url: `${WEBHOOK_ENDPOINTS}/${endpoint.id}/rotate-secret`, token: t.admin.token });
    expect(res.statusCode, res.body).toBe(200);
    const rotated = res.json<WebhookEndpointBody>();
    expect(rotated.secret).not.toBe(endpoint.secret);
    const hours = (Date.parse(rotated.previous_secret_expires_at ?? '') - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(23.9);
    expect(hours).toBeLessThanOrEqual(24);
    await newProduct();
    expect(await worker.deliverDue()).toBe(1);
    const [request] = receiver.received;
    if (!request) throw new Error('nothing was delivered');
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verified(rotated.secret, request).type).toBe('product.created');
    expect(verified(endpoint.secret, request).type).toBe('product.created');
    expect(() => verified(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, request)).toThrow();
    await receiver.close();
  });
});

describe('rotating twice within 24 hours is 409: only two secrets sign at once', () => {
  it('the second rotation is refused and changes nothing: deliveries still verify with the original secret and the first rotation\'s', async () => {
    const receiver = await startReceiver();
    await deleteAllEndpoints();
    const endpoint = await createEndpoint(t, { url: receiver.url, enabled_events: ['product.created'] });
    const once = await t.request({ method: 'POST', url: `${WEBHOOK_ENDPOINTS}/${endpoint.id}/rotate-secret`, token: t.admin.token });
    expect(once.statusCode).toBe(200);
    const twice = await t.request({ method: 'POST', url: `${WEBHOOK_ENDPOINTS}/${endpoint.id}/rotate-secret`, token: t.admin.token });
    expect(expectProblem(twice, 409, 'conflict').detail).toMatch(/24 hours/);
    await newProduct();
    expect(await worker.deliverDue()).toBe(1);
    const [request] = receiver.received;
    if (!request) throw new Error('nothing was delivered');
    expect(verified(endpoint.secret, request).type).toBe('product.created');
    expect(verified(once.json<WebhookEndpointBody>().secret, request).type).toBe('product.created');
    await receiver.close();
  });
});

describe('rotate-secret with an Idempotency-Key: a retry after a lost answer gets the same new secret (docs/webhooks.md#endpoints)', () => {
  const rotate = (id: number, key: string, token = t.admin.token) =>
    t.request({ method: 'POST', url: `${WEBHOOK_ENDPOINTS}/${id}/rotate-secret`, headers: { 'idempotency-key': key }, token });

  it('a lost rotate-secret answer is recovered: the retry with its key replays the same new secret, which signs the deliveries (regression)', async () => {
    const receiver = await startReceiver();
    await deleteAllEndpoints();
    const endpoint = await createEndpoint(t, { url: receiver.url, enabled_events: ['product.created'] });
    const first = await rotate(endpoint.id, 'rotate-lost-answer');
    expect(first.statusCode, first.body).toBe(200);
    const rotated = first.json<WebhookEndpointBody>();
    expect(rotated.secret).not.toBe(endpoint.secret);
    // The answer was lost on the way: the retry with the same key replays it, it does not rotate again (409).
    const retry = await rotate(endpoint.id, 'rotate-lost-answer');
    expect(retry.statusCode, retry.body).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json()).toEqual(rotated);
    expect(retry.headers.etag).toBe(first.headers.etag);
    // The replayed secret is the one that signs.
    await newProduct();
    expect(await worker.deliverDue()).toBe(1);
    const [request] = receiver.received;
    if (!request) throw new Error('nothing was delivered');
    expect(verified(retry.json<WebhookEndpointBody>().secret, request).type).toBe('product.created');
    await receiver.close();
  });

  it("the key's stored result holds the secret only encrypted: neither the secret nor a whsec_ text is in its row", async () => {
    await deleteAllEndpoints();
    const endpoint = await createEndpoint(t, { url: 'http://127.0.0.1:9/hooks', enabled_events: ['product.created'] });
    const res = await rotate(endpoint.id, 'rotate-stored-sealed');
    expect(res.statusCode, res.body).toBe(200);
    const { secret } = res.json<WebhookEndpointBody>();
    const stored = await t.database.db.execute(sql`select response_body from idempotency_keys where key = 'rotate-stored-sealed'`);
    const text = JSON.stringify(stored);
    expect(text).toContain(String(endpoint.id));
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret.slice('whsec_'.length, 20));
    expect(text).not.toContain('whsec_');
  });

  it("another caller's equal key is no replay: it rotates on its own, and so is refused within the 24 hours (409)", async () => {
    await deleteAllEndpoints();
    const endpoint = await createEndpoint(t, { url: 'http://127.0.0.1:9/hooks', enabled_events: ['product.created'] });
    expect((await rotate(endpoint.id, 'rotate-two-callers')).statusCode).toBe(200);
    const other = await t.createUser('admin');
    const res = await rotate(endpoint.id, 'rotate-two-callers', other.token);
    expectProblem(res, 409, 'conflict');
    expect(res.body).not.toContain('whsec_');
  });

  it('the same key on another endpoint is 422 idempotency-key-mismatch, and rotates nothing', async () => {
    await deleteAllEndpoints();
    const a = await createEndpoint(t, { url: 'http://127.0.0.1:9/a', enabled_events: ['product.created'] });
    const b = await createEndpoint(t, { url: 'http://127.0.0.1:9/b', enabled_events: ['product.created'] });
    expect((await rotate(a.id, 'rotate-mismatch')).statusCode).toBe(200);
    expectProblem(await rotate(b.id, 'rotate-mismatch'), 422, 'idempotency-key-mismatch');
    // Not rotated: a rotation now is its first (a second within 24 hours would be 409).
    const now = await t.request({ method: 'POST', url: `${WEBHOOK_ENDPOINTS}/${b.id}/rotate-secret`, token: t.admin.token });
    expect(now.statusCode, now.body).toBe(200);
  });
});

describe('SSRF: in production, loopback and private targets are refused unless WEBHOOK_ALLOWED_HOSTS names them', () => {
  const production = useTestApp({ webhooks: { production: true, allowedHosts: ['allowed.localhost'], maxEndpoints: 2 } });
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });

  const refusedUrls = [
    'https://127.0.0.1/hooks',
    'https://10.1.2.3/hooks',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hooks',
    'https://[::ffff:192.168.0.1]/hooks',
    // IPv6 prefixes that carry an IPv4 address a gateway may route to: NAT64, 6to4, IPv4-compatible.
    'https://[64:ff9b::a00:5]/hooks',
    'https://[2002:a00:5::1]/hooks',
    'https://[::a00:5]/hooks',
    'https://localhost/hooks',
    'http://127.0.0.1/hooks',
  ];
  for (const url of refusedUrls) {
    it(`${url} is 422 naming url`, async () => {
      const res = await production.request({ method: 'POST', url: WEBHOOK_ENDPOINTS, payload: { url, enabled_events: ['*'] }, token: production.admin.token });
      const problem = expectProblem(res, 422, 'validation-error');
      expect(problem.errors?.map((e) => e.field)).toEqual(['url']);
    });
  }

  it('a host named in WEBHOOK_ALLOWED_HOSTS may resolve to loopback; at most WEBHOOK_MAX_ENDPOINTS, then 409', async () => {
    const first = await createEndpoint(production, { url: 'https://allowed.localhost/hooks', enabled_events: ['*'] }, production.admin.token);
    expect(first.url).toBe('https://allowed.localhost/hooks');
    await createEndpoint(production, { url: 'https://allowed.localhost/other', enabled_events: ['*'] }, production.admin.token);
    const res = await production.request({ method: 'POST', url: WEBHOOK_ENDPOINTS, payload: { url: 'https://allowed.localhost/third', enabled_events: ['*'] }, token: production.admin.token });
    expectProblem(res, 409, 'conflict');
    const list = await production.request({ method: 'GET', url: WEBHOOK_ENDPOINTS, token: production.admin.token });
    expect(list.json<{ data: unknown[] }>().data).toHaveLength(2);
  });

  it('the check is made again at delivery: an endpoint saved outside production is refused by a production worker, and delivered where allowed', async () => {
    await deleteAllEndpoints();
    const port = new URL(receiver.url).port;
    const byLiteral = await createEndpoint(t, { url: receiver.url, enabled_events: ['product.created'] });
    const byName = await createEndpoint(t, { url: `http://localhost:${port}/hooks`, enabled_events: ['product.created'] });
    await newProduct();
    const strict = new WebhookWorker(t.db, { production: true, allowedHosts: [] }, { retryScheduleSeconds: [] });
    expect(await strict.deliverDue()).toBe(2);
    expect(receiver.received).toEqual([]);
    for (const endpoint of [byLiteral, byName]) {
      const [delivery] = await deliveriesOf(t, endpoint.id);
      expect(delivery).toMatchObject({ state: 'failed', last_status: null });
      expect(delivery?.last_error).toMatch(/refused/);
    }
    await strict.stop();

    const allowing = new WebhookWorker(t.db, { production: true, allowedHosts: ['localhost'] });
    await makeDueNow(t, byName.id);
    await t.request({ method: 'POST', url: `${WEBHOOK_ENDPOINTS}/${byName.id}/deliveries/${(await deliveriesOf(t, byName.id))[0]?.id}/retry`, token: t.admin.token });
    expect(await allowing.deliverDue()).toBe(1);
    expect(receiver.received).toHaveLength(1);
    verified(byName.secret, receiver.received[0] ?? { headers: {}, body: '' });
    await allowing.stop();
  });
});
