/**
 * Webhook receivers for tests: a real node:http server on a loopback socket, answering each
 * request as the test says, keeping what it received (headers and the body as sent).
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { and, eq, sql } from 'drizzle-orm';
import type { z } from 'zod';
import { webhookDeliveries } from '../../server/modules/webhooks/webhooks.table.ts';
import type { WebhookDelivery, WebhookEndpointInput, WebhookEndpointWithSecret } from '../../server/modules/webhooks/webhooks.schemas.ts';
import type { TestApp } from './app.ts';

export const WEBHOOK_ENDPOINTS = '/api/v1/webhook-endpoints';

export type WebhookEndpointBody = z.infer<typeof WebhookEndpointWithSecret>;
export type WebhookDeliveryBody = z.infer<typeof WebhookDelivery>;

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** The status it was answered. */
  status: number;
}

/** What the receiver answers its `n`th request (0-based): a status, or a function writing the answer. */
export type Answer = (request: { headers: IncomingHttpHeaders; body: string }, n: number) => number | ((response: ServerResponse) => void);

export interface Receiver {
  url: string;
  received: Received[];
  /** The answer from now on. */
  answer(answer: Answer): void;
  close(): Promise<void>;
}

/** A receiver on 127.0.0.1 (any port), answering 200 until told otherwise. */
export async function startReceiver(path = '/hooks', answer: Answer = () => 200): Promise<Receiver> {
  let current = answer;
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const outcome = current({ headers: request.headers, body }, received.length);
      if (typeof outcome === 'number') {
        received.push({ headers: request.headers, body, status: outcome });
        response.writeHead(outcome, { 'content-type': 'text/plain' }).end('ok');
      } else {
        received.push({ headers: request.headers, body, status: 0 });
        outcome(response);
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    answer: (next) => {
      current = next;
    },
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** POST /webhook-endpoints as the admin, expecting 201. */
export async function createEndpoint(t: TestApp, body: WebhookEndpointInput, token = t.admin.token): Promise<WebhookEndpointBody> {
  const res = await t.request({ method: 'POST', url: WEBHOOK_ENDPOINTS, payload: body, token });
  if (res.statusCode !== 201) throw new Error(`creating a webhook endpoint answered ${res.statusCode}: ${res.body}`);
  return res.json<WebhookEndpointBody>();
}

/** Every delivery of an endpoint, newest first (one page of 100 is plenty in a test). */
export async function deliveriesOf(t: TestApp, endpointId: number): Promise<WebhookDeliveryBody[]> {
  const res = await t.request({ method: 'GET', url: `${WEBHOOK_ENDPOINTS}/${endpointId}/deliveries?limit=100`, token: t.admin.token });
  if (res.statusCode !== 200) throw new Error(`listing deliveries answered ${res.statusCode}: ${res.body}`);
  return res.json<{ data: WebhookDeliveryBody[] }>().data;
}

/**
 * Time passes for an endpoint's pending deliveries: their next attempt is due now, as it would
 * be once the retry delay ran out (tests never wait the schedule's seconds).
 */
export async function makeDueNow(t: TestApp, endpointId: number): Promise<void> {
  await t.db
    .update(webhookDeliveries)
    .set({ nextAttemptAt: sql`now()`, lockedUntil: null })
    .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.state, 'pending')));
}
