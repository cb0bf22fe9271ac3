/**
 * One webhook attempt on the wire (docs/webhooks.md#delivery): a POST of the event's JSON with the
 * Standard Webhooks headers, signed with `standardwebhooks`. Bounded in every way a receiver
 * could stall it: 10 s for the whole exchange, redirects never followed (a 3xx is a failed
 * attempt), the response body read to at most RESPONSE_BODY_LIMIT bytes. Every connection checks
 * the address it connects to (`guardedLookup`), so the check made when the URL was saved is made
 * again at delivery.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { bareHost, guardedLookup, isRefusedAddress, type WebhookTargetRules } from './webhooks.targets.ts';

/** Any 2xx within this time is success (docs/webhooks.md#delivery). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Read no more of a receiver's answer than this: its body says nothing we keep. */
export const RESPONSE_BODY_LIMIT = 16 * 1024;

export interface Signing {
  secret: string;
  /** The secret before a rotation, while it still signs. */
  previousSecret?: string | undefined;
}

/** The Standard Webhooks headers of one attempt: `webhook-signature` holds one signature per secret. */
export function signedHeaders(eventId: string, body: string, signing: Signing, now: Date = new Date()): Record<string, string> {
  const secrets = [signing.secret, ...(signing.previousSecret === undefined ? [] : [signing.previousSecret])];
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(eventId, now, body)).join(' '),
  };
}

export type AttemptOutcome = { ok: true; status: number } | { ok: false; status: number | null; error: string };

/** A sender: its agents keep connections to receivers open between attempts. */
export class WebhookSender {
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(private readonly rules: WebhookTargetRules) {
    const lookup = guardedLookup(rules);
    this.agents = { http: new http.Agent({ keepAlive: true, lookup }), https: new https.Agent({ keepAlive: true, lookup }) };
  }

  /** POSTs `body` to `url` with `headers`; never throws, never takes more than DELIVERY_TIMEOUT_MS. */
  send(url: string, body: string, headers: Record<string, string>): Promise<AttemptOutcome> {
    const target = new URL(url);
    const host = bareHost(target.hostname);
    // An IP literal is never looked up, so `guardedLookup` cannot see it: checked here.
    if (this.rules.production && isIP(host) !== 0 && isRefusedAddress(host) && !this.rules.allowedHosts.includes(host)) {
      return Promise.resolve({ ok: false, status: null, error: `refused: ${host} is a loopback, private or link-local address` });
    }
    const secure = target.protocol === 'https:';
    return new Promise((resolve) => {
      let status: number | null = null;
      let settled = false;
      const finish = (outcome: AttemptOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      // Node's parser takes any three digits; a status HTTP does not define (000, 799) is a failed
      // attempt without a status, so a receiver cannot store what the deliveries list cannot show.
      const byStatus = (code: number): AttemptOutcome =>
        code < 100 || code > 599
          ? { ok: false, status: null, error: `the receiver answered ${code}, not an HTTP status` }
          : code >= 200 && code < 300
          ? { ok: true, status: code }
          : { ok: false, status: code, error: code >= 300 && code < 400 ? `the receiver answered ${code}, a redirect, which is not followed` : `the receiver answered ${code}` };
      const request = (secure ? https : http).request(target, {
        method: 'POST',
        agent: secure ? this.agents.https : this.agents.http,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'order-service-webhooks/1' },
      });
      const timer = setTimeout(() => {
        request.destroy();
        finish(status === null ? { ok: false, status: null, error: `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s` } : byStatus(status));
      }, DELIVERY_TIMEOUT_MS);
      request.on('response', (response) => {
        status = response.statusCode ?? 0;
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          // More than we read: the connection goes, the answer's status stands.
          if (read > RESPONSE_BODY_LIMIT) response.destroy();
        });
        const done = () => finish(byStatus(status ?? 0));
        response.on('end', done);
        response.on('close', done);
        response.on('error', done);
      });
      request.on('error', (error) => finish(status === null ? { ok: false, status: null, error: error.message || error.name } : byStatus(status)));
      request.end(body);
    });
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}
