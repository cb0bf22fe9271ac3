/**
 * Webhook delivery (docs/performance.md#webhook-delivery): one endpoint on a local receiver
 * (node:http, 204 at once), one worker started as a process starts it. Measures the worker (claim,
 * sign, POST, record), not the receiver.
 *
 * - `MODE=backlog` (default): `EVENTS` events written at once, then delivered; prints events/s.
 * - `MODE=orders`: `CLIENTS` customers POST orders through the API (in this process, as the
 *   worker runs beside the API by default) for `SECONDS`; the endpoint takes `order.created`.
 *   Prints orders/s, events delivered/s and the lag from each POST's answer (after its commit)
 *   to the receiver, p50 and p99: the lag while the API is under load.
 *
 *   npx tsx scripts/bench/webhooks.ts                                  # PGlite in memory
 *   DATABASE_URL=postgres://... npx tsx scripts/bench/webhooks.ts      # PostgreSQL (a scratch database, migrated: it writes events)
 *   EVENTS=5000 CONCURRENCY=16 npx tsx scripts/bench/webhooks.ts
 *   MODE=orders CLIENTS=16 SECONDS=10 DATABASE_URL=postgres://... npx tsx scripts/bench/webhooks.ts
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { TokenService } from '../../server/auth/tokens.ts';
import { buildApp } from '../../server/app.ts';
import { openDatabase } from '../../server/db/client.ts';
import { createEndpoint } from '../../server/modules/webhooks/webhooks.service.ts';
import { WebhookWorker } from '../../server/modules/webhooks/webhooks.worker.ts';
import { createUserRow, TEST_JWT } from '../../test/helpers/app.ts';
import { productInput } from '../../test/helpers/products.ts';

const mode = process.env.MODE ?? 'backlog';
const events = Number(process.env.EVENTS ?? 2000);
const concurrency = Number(process.env.CONCURRENCY ?? 16);
const clients = Number(process.env.CLIENTS ?? 16);
const seconds = Number(process.env.SECONDS ?? 10);

const database = await openDatabase({ url: process.env.DATABASE_URL || 'memory://', dataDir: '', poolSize: 20 });
const db = database.db;
let closeDatabase = (): Promise<void> => database.close();

/** When the receiver got each event, by the key `keyOf` takes from its body. */
const receivedAt = new Map<string, number>();
let keyOf = (body: { id: string }): string => body.id;
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    receivedAt.set(keyOf(JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }), performance.now());
    response.writeHead(204).end();
  });
});
receiver.listen(0, '127.0.0.1');
await once(receiver, 'listening');
const { port } = receiver.address() as AddressInfo;

const endpoint = await createEndpoint({
  db,
  settings: { production: false, allowedHosts: [], maxEndpoints: 1000 },
  input: { url: `http://127.0.0.1:${port}/hooks`, enabled_events: [mode === 'orders' ? 'order.created' : 'product.created'] },
});
// Woken as the service's worker is: by the fan-out's notification of each delivery it makes.
const worker = new WebhookWorker(db, { production: false, allowedHosts: [] }, { concurrencyPerEndpoint: concurrency, pollIntervalMs: 500 }, undefined, database.listen);

/** Polls until `done` holds, at most `ms`. */
async function until(done: () => boolean, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  while (!done() && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
}

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN);
};

if (mode === 'backlog') {
  // Events as the outbox writes them (a product's representation); the trigger makes the deliveries.
  const object = JSON.stringify({ object: { id: 1, sku: 'BENCH-1', name: 'Bench', description: null, category: 'bench', price: 1299, currency: 'USD', stock: 10, created_at: new Date().toISOString(), updated_at: new Date().toISOString() } });
  const runId = Date.now().toString(36);
  await db.execute(sql`insert into events (id, type, data) select 'evt_' || ${runId} || lpad(i::text, 12, '0'), 'product.created', ${object}::text::json from generate_series(1, ${events}) as i`);
  const started = performance.now();
  worker.start();
  await until(() => receivedAt.size >= events, 600_000);
  const elapsed = (performance.now() - started) / 1000;
  console.log(JSON.stringify({ mode, database: database.kind, events, concurrencyPerEndpoint: concurrency, received: receivedAt.size, seconds: Number(elapsed.toFixed(2)), eventsPerSecond: Math.round(receivedAt.size / elapsed) }));
} else if (mode === 'orders') {
  const tokens = new TokenService(TEST_JWT);
  const app = await buildApp({ database, tokens, rateLimit: { max: 1_000_000, timeWindow: '1 minute' }, webhooks: { worker: false } });
  await app.ready();
  const admin = await createUserRow(db, tokens, 'admin');
  const product = await app.inject({ method: 'POST', url: '/api/v1/products', headers: { authorization: `Bearer ${admin.token}` }, payload: productInput({ stock: 1_000_000 }) });
  const productId = product.json<{ id: number }>().id;
  const customers = await Promise.all(Array.from({ length: clients }, () => createUserRow(db, tokens, 'customer')));
  // The key of an order.created delivery: its order's id.
  keyOf = (body) => String((body as unknown as { data: { object: { id: number } } }).data.object.id);
  const answeredAt = new Map<string, number>();
  let failed = 0;
  worker.start();
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    customers.map(async (customer) => {
      while (performance.now() < end) {
        const res = await app.inject({ method: 'POST', url: '/api/v1/orders', headers: { authorization: `Bearer ${customer.token}` }, payload: { items: [{ product_id: productId, quantity: 1 }], address: '1 Benchmark Road, Testville' } });
        if (res.statusCode === 201) answeredAt.set(String(res.json<{ id: number }>().id), performance.now());
        else failed += 1;
      }
    }),
  );
  const loadSeconds = (performance.now() - started) / 1000;
  await until(() => [...answeredAt.keys()].every((id) => receivedAt.has(id)), 120_000);
  const lags = [...answeredAt].flatMap(([id, at]) => {
    const received = receivedAt.get(id);
    return received === undefined ? [] : [received - at];
  });
  console.log(
    JSON.stringify({
      mode,
      database: database.kind,
      clients,
      concurrencyPerEndpoint: concurrency,
      ordersPerSecond: Math.round(answeredAt.size / loadSeconds),
      failedPosts: failed,
      delivered: lags.length,
      lagMsP50: percentile(lags, 50),
      lagMsP99: percentile(lags, 99),
      lagMsMax: percentile(lags, 100),
    }),
  );
  // The app's close closes the database too: the worker and the endpoint go first.
  closeDatabase = () => app.close();
} else {
  throw new Error(`MODE must be backlog or orders, not ${mode}`);
}
await worker.stop();
await db.execute(sql`delete from webhook_endpoints where id = ${endpoint.id}`);
receiver.close();
await closeDatabase();
