/**
 * The delivery worker of a running app wakes on the notification of the deliveries' channel, which
 * the fan-out sends when an event made a delivery (docs/webhooks.md#delivery): a delivery goes out
 * as its event commits, not at the next poll.
 * The poll here is an hour apart, so only the wake can send it within the test.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { WebhookWorker } from '../../server/modules/webhooks/webhooks.worker.ts';
import { DELIVERIES_CHANNEL, wakeWorkers } from '../../server/modules/webhooks/webhooks.signal.ts';
import { useTestApp } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { events } from '../../server/db/schema.ts';
import { webhookEndpoints } from '../../server/modules/webhooks/webhooks.table.ts';
import { createProduct } from '../helpers/products.ts';
import { createEndpoint, startReceiver, type Receiver } from '../helpers/webhooks.ts';
import { paced, until } from '../helpers/waits.ts';

let receiver: Receiver;

const t = useTestApp({ webhooks: { worker: { pollIntervalMs: 3_600_000 } } });
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

it('an event committed while the worker waits for its next poll is delivered at once', async () => {
  await createEndpoint(t, { url: receiver.url, enabled_events: ['product.created'] });
  const product = await createProduct(t, { name: 'Woken' });
  // Generous: a loaded machine delays the delivery by seconds, never by the hour the poll waits.
  await until('the delivery', () => receiver.received.length > 0).catch(() => undefined);
  expect(receiver.received.map(({ body }) => JSON.parse(body) as { type: string; data: { object: { id: number } } })).toMatchObject([{ type: 'product.created', data: { object: { id: product.id } } }]);
});

it('a stream of nudges (one per committed event) starts one round per wake interval, not one per nudge', async () => {
  // A database of its own, counting the worker's round statements (each writes outcomes from a json_to_recordset).
  let rounds = 0;
  let lastRoundAt = Number.NEGATIVE_INFINITY;
  const database = await createTestDatabase({
    onQuery: (text) => {
      if (!text.includes('json_to_recordset')) return;
      rounds += 1;
      lastRoundAt = performance.now();
    },
  });
  const worker = new WebhookWorker(database.db, { production: false, allowedHosts: [] }, { pollIntervalMs: 3_600_000, wakeIntervalMs: 300 });
  try {
    await worker.start();
    await vi.waitFor(() => expect(rounds).toBe(1), { timeout: 10_000 });
    const nudged = performance.now();
    // 40 nudges over about 200 ms, as 200 events a second would send.
    for (let i = 0; i < 40; i += 1) {
      wakeWorkers();
      await paced(5);
    }
    const lastNudge = performance.now();
    // Nudges still start rounds (this is no lost wake-up), but a few, however many nudges came.
    // Every nudge is answered by a round that begins after it (at once, or once the wake interval
    // has passed): once a round began after the last nudge, every round they asked for has begun.
    await vi.waitFor(() => expect(rounds).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
    await vi.waitFor(() => expect(lastRoundAt).toBeGreaterThan(lastNudge), { timeout: 10_000 });
    // One round per 300 ms since the nudges began, and one more for the start: on a slow machine
    // the nudges take longer and the bound grows with them; one round per nudge would be 41.
    expect(rounds).toBeLessThanOrEqual(2 + Math.ceil((lastRoundAt - nudged) / 300));
  } finally {
    await worker.stop();
    await database.close();
  }
});

it('the fan-out wakes the workers only for an event that made a delivery: an event no endpoint takes starts no round', async () => {
  let rounds = 0;
  const database = await createTestDatabase({ onQuery: (text) => void (text.includes('json_to_recordset') && (rounds += 1)) });
  const worker = new WebhookWorker(database.db, { production: false, allowedHosts: [] }, { pollIntervalMs: 3_600_000, wakeIntervalMs: 10 }, undefined, database.listen);
  const event = (id: string) => database.db.insert(events).values({ id, type: 'product.created', data: { object: { id: 1 } } });
  try {
    // The start's round, and the one the LISTEN's being in place asks for (what it may have missed).
    await worker.start();
    await vi.waitFor(() => expect(rounds).toBe(2), { timeout: 10_000 });
    // No endpoint: the event makes no delivery, so its commit notifies no worker (the poll is an
    // hour away). Notifications arrive in commit order on the one LISTEN connection: once a marker
    // committed after the event is heard, the event's would have been.
    const heard: string[] = [];
    const unlisten = await Promise.all(
      [DELIVERIES_CHANNEL, 'order_service_test_marker'].map((channel) => database.listen(channel, () => heard.push(channel), () => undefined)),
    );
    await event('evt_nodeliverynodeliver');
    await database.db.execute(sql`select pg_notify('order_service_test_marker', '')`);
    await vi.waitFor(() => expect(heard).toContain('order_service_test_marker'), { timeout: 10_000 });
    expect(heard).toEqual(['order_service_test_marker']);
    expect(rounds).toBe(2);
    await Promise.all(unlisten.map((stop) => stop()));
    // An endpoint that takes it: the next event makes a delivery, and its commit wakes the worker.
    await database.db.insert(webhookEndpoints).values({ url: 'http://127.0.0.1:9/hooks', enabledEvents: ['product.*'], secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });
    await event('evt_onedeliveryonedeliv');
    await vi.waitFor(() => expect(rounds).toBeGreaterThanOrEqual(3), { timeout: 30_000 });
  } finally {
    await worker.stop();
    await database.close();
  }
});
