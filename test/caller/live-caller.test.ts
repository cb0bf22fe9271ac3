/**
 * `orders.onChange` called directly (no HTTP), with the notifications in the test's hands: the
 * hub (server/events/live.ts) listens through a stand-in for `Database.listen`, so a test says
 * when each event is "heard". What a real LISTEN makes a matter of timing is then deterministic:
 * an event both read from the table on resume and heard live is sent once; a subscriber that
 * falls behind, or a feed that was lost, ends the stream with a retryable 503 (the client then
 * resumes from the table).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTrackedEnvelope } from '@trpc/server';
import type { Db } from '../../server/db/client.ts';
import { transaction } from '../../server/db/unit-of-work.ts';
import { sql } from 'drizzle-orm';
import { LiveEvents, type Listen, type LiveEventsOptions } from '../../server/events/live.ts';
import { REVOCATIONS_CHANNEL } from '../../server/events/revocations.ts';
import { readLiveEvents } from '../../server/modules/events/events.live.ts';
import type { Caller } from '../../server/auth/tokens.ts';
import { issueRefreshToken, newFamilyId, revokeFamily } from '../../server/oauth/refresh-tokens.ts';
import { insertClient } from '../helpers/oauth.ts';
import { createCaller } from '../../server/router.ts';
import { createContextInner } from '../../server/trpc/context.ts';
import { createTestHarness, testCallerIdentity, type TestCaller, type TestHarness, type TestIdentity } from '../../server/testing.ts';
import { createTestDatabase, onPostgres } from '../helpers/db.ts';
import { eventually } from '../helpers/live.ts';
import { productInput } from '../helpers/products.ts';

let harness: TestHarness;
let admin: TestCaller;
let alice: TestCaller;
let aliceId: number;
let productId: number;

beforeAll(async () => {
  harness = await createTestHarness(onPostgres ? { database: await createTestDatabase() } : {});
  admin = harness.caller({ role: 'admin' });
  const created = await harness.createUser({ name: 'Alice' });
  alice = created.caller;
  aliceId = created.user.id;
  productId = (await admin.products.create(productInput({ price: 500, stock: 100 }))).id;
});
afterAll(async () => {
  await harness?.close();
});

/**
 * A hub whose notifications the test delivers itself (`hear(id)`), and `relisten()` as after a
 * lost connection. Revocations (REVOCATIONS_CHANNEL) go through as a real LISTEN would deliver them:
 * `notifyRevocation` in a transaction reaches the hub once it commits.
 */
function handFedHub(db: Db, options: LiveEventsOptions = {}): { live: LiveEvents; hear: (id: string) => void; relisten: () => void } {
  let onNotify: (id: string) => void = () => {};
  let onListen: () => void = () => {};
  const listen: Listen = async (channel, notify, listened) => {
    if (channel === REVOCATIONS_CHANNEL) return harness.database.listen(channel, notify, listened);
    onNotify = notify;
    onListen = listened;
    listened();
    return async () => {};
  };
  const live = new LiveEvents(db, listen, readLiveEvents, options);
  return { live, hear: (id) => onNotify(id), relisten: () => onListen() };
}

/** `orders.onChange` as `identity`, on `live`: its iterator of events. */
async function changes(live: LiveEvents, identity: TestIdentity, input: { order_id?: number; lastEventId?: string }, signal?: AbortSignal): Promise<AsyncIterator<unknown>> {
  const caller = createCaller(createContextInner({ db: harness.db, caller: testCallerIdentity(identity), live }), signal === undefined ? {} : { signal });
  const iterable = await caller.orders.onChange(input);
  return iterable[Symbol.asyncIterator]();
}

/** The next event's type and id. */
async function next(iterator: AsyncIterator<unknown>): Promise<{ id: string; type: string }> {
  const result = await iterator.next();
  if (result.done === true || !isTrackedEnvelope<{ type: string }>(result.value)) throw new Error(`not an event: ${String(result.value)}`);
  const [id, event] = result.value;
  return { id, type: event.type };
}

async function timeline(orderId: number): Promise<{ id: string; type: string }[]> {
  return (await admin.events.listForOrder({ id: orderId, limit: 50 })).data.map(({ id, type }) => ({ id, type })).reverse();
}

async function confirmedOrder(): Promise<number> {
  const order = await alice.orders.create({ items: [{ product_id: productId, quantity: 1 }], address: '1 Caller Ct' });
  await alice.orders.confirm({ id: order.id });
  return order.id;
}

describe('resuming: the table, then the live events, each once', () => {
  it('an event read from the table and then heard live is sent once; the next live one follows', async () => {
    const { live, hear } = handFedHub(harness.db);
    const orderId = await confirmedOrder();
    const [created, confirmed] = await timeline(orderId);
    if (!created || !confirmed) throw new Error('no timeline');

    const iterator = await changes(live, { role: 'customer', userId: aliceId }, { order_id: orderId, lastEventId: created.id });
    // From the table: the confirmation, missed since order.created.
    expect(await next(iterator)).toEqual(confirmed);
    // Its notification comes late (it committed while the table was being read): not sent again.
    hear(confirmed.id);
    await alice.payments.create({ order_id: orderId, amount: 500, method: 'card' });
    const paid = (await timeline(orderId)).slice(2);
    for (const event of paid) hear(event.id);
    expect([await next(iterator), await next(iterator)]).toEqual(paid);
    await iterator.return?.();
    expect(live.subscribers).toBe(0);
  });

  it("a customer hears nothing of another customer's order, an admin does", async () => {
    const { live, hear } = handFedHub(harness.db);
    const bob = await harness.createUser({ name: 'Bob' });
    const bobs = await bob.caller.orders.create({ items: [{ product_id: productId, quantity: 1 }], address: '2 Caller Ct' });
    const asAlice = await changes(live, { role: 'customer', userId: aliceId }, {});
    const asAdmin = await changes(live, { role: 'admin' }, {});
    // The first next() runs each subscription up to its wait for live events.
    const alicesNext = next(asAlice);
    const adminsNext = next(asAdmin);
    await eventually(() => expect(live.subscribers).toBe(2));
    const [bobsCreated] = await timeline(bobs.id);
    const alicesOrder = await confirmedOrder();
    const alicesEvents = await timeline(alicesOrder);
    if (!bobsCreated) throw new Error('no timeline');
    for (const event of [bobsCreated, ...alicesEvents]) hear(event.id);
    expect(await alicesNext).toEqual(alicesEvents[0]);
    expect(await adminsNext).toEqual(bobsCreated);
    expect(await next(asAlice)).toEqual(alicesEvents[1]);
    await Promise.all([asAlice.return?.(), asAdmin.return?.()]);
  });
});

describe('what one caller may hold: docs/api.md#live-updates', () => {
  it('a resume with more to read than one stream takes sends that much, ends with the retryable 503, and the next resume goes on from there', async () => {
    const { live } = handFedHub(harness.db, { resumeLimit: 2 });
    const orderId = await confirmedOrder();
    await alice.payments.create({ order_id: orderId, amount: 500, method: 'card' });
    const [created, ...missed] = await timeline(orderId);
    if (!created) throw new Error('no timeline');
    expect(missed.length).toBeGreaterThan(2);

    const first = await changes(live, { role: 'customer', userId: aliceId }, { order_id: orderId, lastEventId: created.id });
    const got = [await next(first), await next(first)];
    expect(got).toEqual(missed.slice(0, 2));
    await expect(first.next()).rejects.toMatchObject({ cause: { slug: 'service-unavailable' } });
    expect(live.subscribers).toBe(0);

    const again = await changes(live, { role: 'customer', userId: aliceId }, { order_id: orderId, lastEventId: got[1]?.id ?? '' });
    expect(await next(again)).toEqual(missed[2]);
    await again.return?.();
  });

  it('a lastEventId more than an hour old is 410 gone: the client reads the order again and subscribes anew', async () => {
    const { live } = handFedHub(harness.db);
    const [created] = await timeline(await confirmedOrder());
    if (!created) throw new Error('no timeline');
    await harness.db.execute(sql`update events set created_at = now() - interval '61 minutes' where id = ${created.id}`);
    const iterator = await changes(live, { role: 'customer', userId: aliceId }, { lastEventId: created.id });
    await expect(iterator.next()).rejects.toMatchObject({ cause: { slug: 'gone' } });
    expect(live.subscribers).toBe(0);
  });

  it('one caller holds at most maxPerOwner streams on a process (429 rate-limited beyond); others are not counted against it, and a closed one frees its place', async () => {
    const { live } = handFedHub(harness.db, { maxPerOwner: 2 });
    // The first stream's client goes away (as an HTTP client's does: the request's signal aborts).
    const firstClient = new AbortController();
    const alices = [await changes(live, { role: 'customer', userId: aliceId }, {}, firstClient.signal), await changes(live, { role: 'customer', userId: aliceId }, {})];
    const waiting = alices.map((iterator) => iterator.next());
    await eventually(() => expect(live.subscribers).toBe(2));

    const third = await changes(live, { role: 'customer', userId: aliceId }, {});
    await expect(third.next()).rejects.toMatchObject({ code: 'TOO_MANY_REQUESTS', cause: { slug: 'rate-limited' } });
    const warehouse = await changes(live, { role: 'service', name: 'warehouse', scopes: ['orders:read'] }, {});
    const warehouseWaiting = warehouse.next();
    await eventually(() => expect(live.subscribers).toBe(3));

    firstClient.abort();
    await eventually(() => expect(live.subscribers).toBe(2));
    const fourth = await changes(live, { role: 'customer', userId: aliceId }, {});
    const fourthWaiting = fourth.next();
    await eventually(() => expect(live.subscribers).toBe(3));
    live.endAll('closing');
    await Promise.allSettled([...waiting, warehouseWaiting, fourthWaiting]);
    expect(live.subscribers).toBe(0);
  });
});

describe('a client gone before its stream began', () => {
  it('a signal aborted while the stream was being set up ends it at once, and its place is freed', async () => {
    const { live } = handFedHub(harness.db, { maxPerOwner: 1 });
    const gone = new AbortController();
    gone.abort();
    const iterator = await changes(live, { role: 'customer', userId: aliceId }, { order_id: await confirmedOrder() }, gone.signal);
    expect(await iterator.next()).toMatchObject({ done: true });
    expect(live.subscribers).toBe(0);
    // Its one place is free for the caller's next stream.
    const next = await changes(live, { role: 'customer', userId: aliceId }, {});
    const waiting = next.next();
    await eventually(() => expect(live.subscribers).toBe(1));
    live.endAll('closing');
    await waiting.catch(() => undefined);
  });
});

describe('a stream the hub ends: a retryable 503, the client resumes from the table', () => {
  it('a subscriber that falls behind (its queue full) gets what was queued, in order, then the 503', async () => {
    const { live, hear } = handFedHub(harness.db, { maxQueue: 2 });
    const iterator = await changes(live, { role: 'admin' }, {});
    const first = iterator.next();
    await eventually(() => expect(live.subscribers).toBe(1));
    const events = [...(await timeline(await confirmedOrder())), ...(await timeline(await confirmedOrder())), ...(await timeline(await confirmedOrder()))];
    // Heard all at once, faster than the stream is read.
    for (const event of events) hear(event.id);
    const got: unknown[] = [];
    let ended: unknown;
    for (let result = first; ; result = iterator.next()) {
      try {
        const { value } = await result;
        if (!isTrackedEnvelope(value)) throw new Error('not an event');
        got.push(value[0]);
      } catch (error) {
        ended = error;
        break;
      }
    }
    expect(ended).toMatchObject({ code: 'INTERNAL_SERVER_ERROR', cause: { slug: 'service-unavailable' } });
    expect(got.length).toBeLessThan(events.length);
    expect(got).toEqual(events.slice(0, got.length).map((event) => event.id));
    expect(live.subscribers).toBe(0);
  });

  it('a LISTEN made again (its connection was lost) ends every stream', async () => {
    const { live, relisten } = handFedHub(harness.db);
    const iterator = await changes(live, { role: 'admin' }, {});
    const pending = iterator.next();
    await eventually(() => expect(live.subscribers).toBe(1));
    relisten();
    await expect(pending).rejects.toMatchObject({ cause: { slug: 'service-unavailable' } });
  });

  it('a caller without live events (no HTTP door) is told so: 503', async () => {
    const caller = createCaller(createContextInner({ db: harness.db, caller: testCallerIdentity({ role: 'admin' }) }));
    const iterator = (await caller.orders.onChange({}))[Symbol.asyncIterator]();
    await expect(iterator.next()).rejects.toMatchObject({ cause: { slug: 'service-unavailable' } });
  });
});

describe('a stream ends with the token that holds it (docs/api.md#live-updates)', () => {
  /** `orders.onChange` as `caller` (a token's claims: its `exp`, its family), on `live`. */
  async function changesAs(live: LiveEvents, caller: Caller): Promise<AsyncIterator<unknown>> {
    const iterable = await createCaller(createContextInner({ db: harness.db, caller, live })).orders.onChange({});
    return iterable[Symbol.asyncIterator]();
  }
  const now = () => Math.floor(Date.now() / 1000);

  it('a live stream outlived its token: it now ends when the token expires, with the retryable 503 (its client reconnects with a fresh token) (regression)', async () => {
    const { live } = handFedHub(harness.db);
    const iterator = await changesAs(live, { ...testCallerIdentity({ role: 'customer', userId: aliceId }), expiresAt: now() + 1 });
    const pending = iterator.next();
    pending.catch(() => undefined);
    await eventually(() => expect(live.subscribers).toBe(1));
    // Waits for the token's exp (a second or two), then for the stream's end.
    await eventually(() => expect(live.subscribers).toBe(0));
    await expect(pending).rejects.toMatchObject({ cause: { slug: 'service-unavailable', message: expect.stringMatching(/access token expired/) } });
  });

  it("its user deleted: the stream ends with 401, and the deleted user's token opens no new one", async () => {
    const { live } = handFedHub(harness.db);
    const { user } = await harness.createUser({ name: 'Leaving' });
    const caller = { ...testCallerIdentity({ role: 'customer', userId: user.id }), expiresAt: now() + 3600 };
    const iterator = await changesAs(live, caller);
    const pending = iterator.next();
    pending.catch(() => undefined);
    await eventually(() => expect(live.subscribers).toBe(1));
    await admin.users.delete({ id: user.id });
    await expect(pending).rejects.toMatchObject({ code: 'UNAUTHORIZED', cause: { slug: 'unauthorized' } });
    expect(live.subscribers).toBe(0);
    await expect((await changesAs(live, caller)).next()).rejects.toMatchObject({ code: 'UNAUTHORIZED', cause: { slug: 'unauthorized' } });
    expect(live.subscribers).toBe(0);
  });

  it("its sign-in's refresh family revoked: that stream ends with 401, another family's goes on, and the revoked family's token opens no new one", async () => {
    const { live } = handFedHub(harness.db);
    const { client } = await insertClient(harness.db);
    const [revoked, kept] = [newFamilyId(), newFamilyId()];
    await harness.db.transaction(async (tx) => {
      for (const familyId of [revoked, kept]) await issueRefreshToken(tx, { familyId, clientId: client.client_id, userId: aliceId, scope: 'orders:read', ttlDays: 1 });
    });
    const holding = (family: string) => ({ ...testCallerIdentity({ role: 'customer', userId: aliceId }), expiresAt: now() + 3600, family });
    const ending = (await changesAs(live, holding(revoked))).next();
    ending.catch(() => undefined);
    const going = await changesAs(live, holding(kept));
    const goingOn = going.next();
    await eventually(() => expect(live.subscribers).toBe(2));
    await transaction(harness.db, (tx) => revokeFamily(tx, revoked));
    await expect(ending).rejects.toMatchObject({ code: 'UNAUTHORIZED', cause: { slug: 'unauthorized', message: expect.stringMatching(/revoked/) } });
    expect(live.subscribers).toBe(1);
    await expect((await changesAs(live, holding(revoked))).next()).rejects.toMatchObject({ cause: { slug: 'unauthorized' } });
    live.endAll('closing');
    await goingOn.catch(() => undefined);
  });

  it("its sign-in's OAuth client deleted: the stream ends with 401 (the client's families go with it)", async () => {
    const { live } = handFedHub(harness.db);
    const { client } = await insertClient(harness.db);
    const family = newFamilyId();
    await harness.db.transaction((tx) => issueRefreshToken(tx, { familyId: family, clientId: client.client_id, userId: aliceId, scope: 'orders:read', ttlDays: 1 }));
    const ending = (await changesAs(live, { ...testCallerIdentity({ role: 'customer', userId: aliceId }), expiresAt: now() + 3600, family })).next();
    ending.catch(() => undefined);
    await eventually(() => expect(live.subscribers).toBe(1));
    await admin.clients.delete({ client_id: client.client_id });
    await expect(ending).rejects.toMatchObject({ code: 'UNAUTHORIZED', cause: { slug: 'unauthorized' } });
    expect(live.subscribers).toBe(0);
  });
});
