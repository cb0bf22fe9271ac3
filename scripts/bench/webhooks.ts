/**
 * Webhook delivery throughput (docs/webhooks.md#delivery): N events fanned out to one endpoint on
 * a local receiver (node:http, 204 at once), sent by one worker; prints events delivered per
 * second. Measures the worker (claim, sign, POST, record), not the receiver.
 *
 *   npx tsx scripts/bench/webhooks.ts                      # PGlite in memory
 *   DATABASE_URL=postgres://... npx tsx scripts/bench/webhooks.ts   # PostgreSQL (a scratch database: it writes events)
 *   EVENTS=5000 CONCURRENCY=8 npx tsx scripts/bench/webhooks.ts
 *
 * Measured 2026-11-26 on the shared 2-core machine (other jobs running): PostgreSQL 116/s at
 * concurrency 8, ~250/s at 32 and 64; PGlite 30-45/s.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { openDatabase } from '../../server/db/client.ts';
import { createEndpoint } from '../../server/modules/webhooks/webhooks.service.ts';
import { WebhookWorker } from '../../server/modules/webhooks/webhooks.worker.ts';
import '../../server/router.ts';

const events = Number(process.env.EVENTS ?? 2000);
const concurrency = Number(process.env.CONCURRENCY ?? 8);

const database = await openDatabase({ url: process.env.DATABASE_URL ?? 'memory://', dataDir: '', poolSize: 20 });
let received = 0;
const receiver = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    received += 1;
    response.writeHead(204).end();
  });
});
receiver.listen(0, '127.0.0.1');
await once(receiver, 'listening');
const { port } = receiver.address() as AddressInfo;

const endpoint = await createEndpoint({
  db: database.db,
  settings: { production: false, allowedHosts: [], maxEndpoints: 1000 },
  input: { url: `http://127.0.0.1:${port}/hooks`, enabled_events: ['product.created'] },
});
// Events as the outbox writes them (a product's representation); the trigger makes the deliveries.
const object = JSON.stringify({ object: { id: 1, sku: 'BENCH-1', name: 'Bench', description: null, category: 'bench', price: 1299, currency: 'USD', stock: 10, created_at: new Date().toISOString(), updated_at: new Date().toISOString() } });
const runId = Date.now().toString(36);
await database.db.execute(
  sql`insert into events (id, type, data) select 'evt_' || ${runId} || lpad(i::text, 12, '0'), 'product.created', ${object}::text::json from generate_series(1, ${events}) as i`,
);

const worker = new WebhookWorker(database.db, { production: false, allowedHosts: [] }, { concurrencyPerEndpoint: concurrency });
const started = performance.now();
const attempts = await worker.deliverDue();
const seconds = (performance.now() - started) / 1000;
console.log(
  JSON.stringify({
    database: database.kind,
    events,
    concurrencyPerEndpoint: concurrency,
    attempts,
    received,
    seconds: Number(seconds.toFixed(2)),
    eventsPerSecond: Math.round(received / seconds),
  }),
);
// SHOW_RETRIES=1: the deliveries that took more than one attempt (none are expected here).
if (process.env.SHOW_RETRIES) console.log(JSON.stringify(await database.db.execute(sql`select attempts, state, last_status, last_error, last_attempt_at, created_at from webhook_deliveries where attempts > 1`)));
await worker.stop();
await database.db.execute(sql`delete from webhook_endpoints where id = ${endpoint.id}`);
receiver.close();
await database.close();
