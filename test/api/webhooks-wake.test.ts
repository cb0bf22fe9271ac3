/**
 * The delivery worker of a running app wakes on each event's notification
 * (docs/webhooks.md#delivery): a delivery goes out as its event commits, not at the next poll.
 * The poll here is an hour apart, so only the wake can send it within the test.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { createProduct } from '../helpers/products.ts';
import { createEndpoint, startReceiver, type Receiver } from '../helpers/webhooks.ts';

let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  t = await createTestApp({ webhooks: { worker: { pollIntervalMs: 3_600_000 } } });
  receiver = await startReceiver();
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

it('an event committed while the worker waits for its next poll is delivered at once', async () => {
  await createEndpoint(t, { url: receiver.url, enabled_events: ['product.created'] });
  const product = await createProduct(t, { name: 'Woken' });
  // Generous: a loaded machine delays the delivery by seconds, never by the hour the poll waits.
  const deadline = Date.now() + 60_000;
  while (receiver.received.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  expect(receiver.received.map(({ body }) => JSON.parse(body) as { type: string; data: { object: { id: number } } })).toMatchObject([{ type: 'product.created', data: { object: { id: product.id } } }]);
});
