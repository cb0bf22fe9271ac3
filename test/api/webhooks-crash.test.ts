/**
 * At least once, from any instance (docs/webhooks.md#delivery): a service process is killed with
 * SIGKILL while its deliveries are in flight (the receiver holds them unanswered), and another
 * process on the same database delivers every event: the ones never claimed at once, the ones the
 * dead process held once their lease ends. A receiver sees an event twice only with the same
 * `webhook-id`. PostgreSQL only: several processes on one database.
 */
import { Webhook } from 'standardwebhooks';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { openDatabase, type Database } from '../../server/db/client.ts';
import { events } from '../../server/db/schema.ts';
import { webhookDeliveries } from '../../server/modules/webhooks/webhooks.table.ts';
import { createUserRow, TEST_JWT } from '../helpers/app.ts';
import { onPostgres } from '../helpers/db.ts';
import { productInput } from '../helpers/products.ts';
import { callService, createPostgresDatabase, killService, serviceEnv, START_TIMEOUT_MS, startService, stopService, type Service } from '../helpers/service-process.ts';
import { startReceiver, type Receiver } from '../helpers/webhooks.ts';
import { until } from '../helpers/waits.ts';

const EVENTS = 20;
const CONCURRENCY = 4;
const LEASE_SECONDS = 15;

/** Polls `check` until it holds, at most `ms`: never a fixed sleep. */
const untilHolds = (what: string, check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> => until(what, check, { timeoutMs: ms, intervalMs: 100 });

describe.runIf(onPostgres)('a process killed with deliveries in flight loses none: another delivers every event', () => {
  const services: Service[] = [];
  let receiver: Receiver | undefined;
  let database: Database | undefined;
  let drop: (() => Promise<void>) | undefined;

  afterAll(async () => {
    for (const service of services) await stopService(service);
    await receiver?.close();
    await database?.close();
    await drop?.();
  });

  it(
    'every event arrives with a 2xx, verified; the held ones again with the same webhook-id',
    async () => {
      const created = await createPostgresDatabase();
      drop = created.drop;
      database = await openDatabase({ url: created.url, dataDir: '' });
      const db = database.db;
      const tokens = new TokenService(TEST_JWT);
      const admin = await createUserRow(db, tokens, 'admin');

      // The first CONCURRENCY requests are held unanswered: in flight when the process dies.
      let holding = true;
      receiver = await startReceiver('/hooks', () => (holding ? () => {} : 200));
      const env = serviceEnv(
        { url: created.url },
        { WEBHOOK_LEASE_SECONDS: String(LEASE_SECONDS), WEBHOOK_POLL_INTERVAL_MS: '100', WEBHOOK_CONCURRENCY_PER_ENDPOINT: String(CONCURRENCY) },
      );

      const first = await startService(env);
      services.push(first);
      const endpoint = await callService(first.base, 'POST', '/webhook-endpoints', admin.token, { url: receiver.url, enabled_events: ['product.created'] });
      expect(endpoint.status).toBe(201);
      const secret = String(endpoint.body.secret);
      for (let i = 0; i < EVENTS; i++) expect((await callService(first.base, 'POST', '/products', admin.token, productInput())).status).toBe(201);

      const received = receiver.received;
      await untilHolds(`${CONCURRENCY} deliveries in flight`, () => received.length >= CONCURRENCY, 60_000);
      expect(received).toHaveLength(CONCURRENCY);
      await killService(first);
      holding = false;

      const second = await startService(env);
      services.push(second);
      const succeeded = async () => {
        const [row] = await db
          .select({ n: sql<number>`count(*)::int` })
          .from(webhookDeliveries)
          .where(and(eq(webhookDeliveries.endpointId, Number(endpoint.body.id)), eq(webhookDeliveries.state, 'succeeded')));
        return row?.n === EVENTS;
      };
      // The held ones wait for their lease (15 s) to end; generous for a loaded machine.
      await untilHolds('every delivery to succeed', succeeded, LEASE_SECONDS * 1000 + 90_000);

      const eventIds = (await db.select({ id: events.id }).from(events).where(eq(events.type, 'product.created'))).map((row) => row.id);
      expect(eventIds).toHaveLength(EVENTS);
      const hook = new Webhook(secret);
      const answered = new Set<string>();
      const counts = new Map<string, number>();
      for (const request of received) {
        const id = String(request.headers['webhook-id']);
        const event = hook.verify(request.body, {
          'webhook-id': id,
          'webhook-timestamp': String(request.headers['webhook-timestamp']),
          'webhook-signature': String(request.headers['webhook-signature']),
        }) as { id: string };
        expect(event.id).toBe(id);
        counts.set(id, (counts.get(id) ?? 0) + 1);
        if (request.status === 200) answered.add(id);
      }
      expect([...answered].sort()).toEqual([...eventIds].sort());
      // Only the held ones came twice (held, then again after the lease), each with its own webhook-id.
      const held = new Set(received.slice(0, CONCURRENCY).map((request) => String(request.headers['webhook-id'])));
      for (const [id, n] of counts) expect(n, id).toBe(held.has(id) ? 2 : 1);
    },
    START_TIMEOUT_MS * 2 + LEASE_SECONDS * 1000 + 180_000,
  );
});
