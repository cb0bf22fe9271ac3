/**
 * The delivery worker (docs/webhooks.md#delivery): sends the due deliveries, in any number of
 * processes on one database. Small and our own rather than pg-boss or graphile-worker: the
 * deliveries are made by the fan-out trigger in the event's own transaction, and what is left, a
 * claim, an attempt and its record, is three statements that run alike on PostgreSQL and PGlite
 * (neither queue runs on PGlite).
 *
 * - **Claim**: `FOR UPDATE SKIP LOCKED`, per endpoint, at most `concurrencyPerEndpoint` at once in
 *   this process, so one slow receiver holds its own slots only and never starves the others. A
 *   claim is a lease: it moves `next_attempt_at` (and `locked_until`) `leaseSeconds` ahead and
 *   counts the attempt. A process killed mid-delivery leaves the delivery due again once the lease
 *   ends, and another worker sends it (at least once; receivers dedupe by `webhook-id`).
 * - **Record**: success, a retry after the schedule's next delay, or failed for good; made only if
 *   the lease is still this worker's (the attempt count has not moved), so an attempt that
 *   outlived its lease cannot overwrite a newer one. `410 Gone` also disables the endpoint.
 * - **Backpressure**: while receivers are down the deliveries wait in their table; requests only
 *   ever insert them (the trigger), so the API does not slow down.
 */
import type { FastifyBaseLogger } from 'fastify';
import { and, asc, eq, exists, inArray, sql } from 'drizzle-orm';
import { transaction, type Db } from '../../db/client.ts';
import { events, webhookDeliveries, webhookEndpoints } from '../../db/schema.ts';
import type { WebhookTargetRules } from '../../lib/webhook-targets.ts';
import { signedHeaders, WebhookSender, type AttemptOutcome } from './webhooks.sender.ts';
import { onWake } from './webhooks.signal.ts';

export interface WebhookWorkerSettings {
  /** Seconds before each retry (`WEBHOOK_RETRY_SCHEDULE`); after the last, the delivery has failed. */
  retryScheduleSeconds: readonly number[];
  /** Attempts at once to one endpoint, in this process. */
  concurrencyPerEndpoint: number;
  /** How often to look for due deliveries when nothing woke the worker. */
  pollIntervalMs: number;
  /** How long a claim holds a delivery; longer than an attempt can take (10 s). */
  leaseSeconds: number;
}

export const defaultWebhookWorkerSettings: WebhookWorkerSettings = {
  retryScheduleSeconds: [5, 300, 1800, 7200, 18000, 36000, 36000],
  concurrencyPerEndpoint: 8,
  pollIntervalMs: 500,
  leaseSeconds: 60,
};

interface DueEndpoint {
  id: number;
  url: string;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

interface Claimed {
  id: number;
  attempts: number;
  event: { id: string; type: string; apiVersion: string; data: unknown; createdAt: Date };
}

const due = sql`${webhookDeliveries.state} = 'pending' and ${webhookDeliveries.nextAttemptAt} <= now()`;

/** The enabled endpoints that have a due delivery, with what signs them. */
function dueEndpoints(db: Db): Promise<DueEndpoint[]> {
  return db
    .select({
      id: webhookEndpoints.id,
      url: webhookEndpoints.url,
      secret: webhookEndpoints.secret,
      previousSecret: webhookEndpoints.previousSecret,
      previousSecretExpiresAt: webhookEndpoints.previousSecretExpiresAt,
    })
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.disabled, false),
        exists(
          db
            .select({ one: sql`1` })
            .from(webhookDeliveries)
            .where(and(eq(webhookDeliveries.endpointId, webhookEndpoints.id), due)),
        ),
      ),
    );
}

/** Claims up to `limit` of the endpoint's due deliveries, oldest due first, skipping those another worker holds. */
async function claim(db: Db, endpointId: number, limit: number, leaseSeconds: number): Promise<Claimed[]> {
  const candidates = db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.endpointId, endpointId), due))
    .orderBy(asc(webhookDeliveries.nextAttemptAt), asc(webhookDeliveries.id))
    .limit(limit)
    .for('update', { skipLocked: true });
  const lease = sql`now() + make_interval(secs => ${leaseSeconds})`;
  const rows = await db
    .update(webhookDeliveries)
    .set({ attempts: sql`${webhookDeliveries.attempts} + 1`, nextAttemptAt: lease, lockedUntil: lease, lastAttemptAt: sql`now()` })
    .from(events)
    .where(and(inArray(webhookDeliveries.id, candidates), eq(events.id, webhookDeliveries.eventId)))
    .returning({
      id: webhookDeliveries.id,
      attempts: webhookDeliveries.attempts,
      eventId: events.id,
      type: events.type,
      apiVersion: events.apiVersion,
      data: events.data,
      createdAt: events.createdAt,
    });
  return rows.map((row) => ({ id: row.id, attempts: row.attempts, event: { id: row.eventId, type: row.type, apiVersion: row.apiVersion, data: row.data, createdAt: row.createdAt } }));
}

/** The event as GET /api/v1/events/{id} answers it: the body of every delivery of it. */
const eventBody = (event: Claimed['event']): string =>
  JSON.stringify({ id: event.id, type: event.type, created_at: event.createdAt.toISOString(), api_version: event.apiVersion, data: event.data });

export class WebhookWorker {
  private readonly settings: WebhookWorkerSettings;
  private readonly sender: WebhookSender;
  private readonly inFlight = new Map<number, number>();
  private readonly running = new Set<Promise<void>>();
  private started = false;
  private stopped = false;
  private looping = false;
  private wanted = false;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly db: Db,
    rules: WebhookTargetRules,
    settings: Partial<WebhookWorkerSettings> = {},
    private readonly log?: FastifyBaseLogger,
  ) {
    this.settings = { ...defaultWebhookWorkerSettings, ...settings };
    this.sender = new WebhookSender(rules);
  }

  /** Looks for due deliveries every `pollIntervalMs`, and at once when a request nudges it. */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.unsubscribe = onWake(() => this.kick());
    this.timer = setInterval(() => this.kick(), this.settings.pollIntervalMs);
    this.timer.unref();
    this.kick();
  }

  /** Claims nothing more and waits for the attempts in flight (each bounded by its 10 s timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.unsubscribe?.();
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
    this.sender.close();
  }

  /**
   * Sends every delivery due now, waiting for each attempt, until none is due: what a test calls
   * instead of starting the worker. Answers the number of attempts made.
   */
  async deliverDue(): Promise<number> {
    let attempts = 0;
    for (;;) {
      const claimed = await this.claimAndSend();
      attempts += claimed;
      if (claimed === 0 && this.running.size === 0) return attempts;
      if (claimed === 0) await Promise.race(this.running);
    }
  }

  private kick(): void {
    if (!this.started || this.stopped) return;
    this.wanted = true;
    if (!this.looping) void this.loop();
  }

  private async loop(): Promise<void> {
    this.looping = true;
    try {
      while (this.wanted && !this.stopped) {
        this.wanted = false;
        // A full claim may have left more behind: look again until a claim finds nothing.
        if ((await this.claimAndSend()) > 0) this.wanted = true;
      }
    } catch (error) {
      // The database is away, say: the next poll tries again.
      this.log?.warn({ err: error }, 'webhook worker: claiming deliveries failed');
    } finally {
      this.looping = false;
    }
  }

  /** One round: for each endpoint with due deliveries and free slots, claims what fits and starts sending it. */
  private async claimAndSend(): Promise<number> {
    let claimed = 0;
    for (const endpoint of await dueEndpoints(this.db)) {
      const free = this.settings.concurrencyPerEndpoint - (this.inFlight.get(endpoint.id) ?? 0);
      if (free <= 0 || this.stopped) continue;
      const deliveries = await claim(this.db, endpoint.id, free, this.settings.leaseSeconds);
      for (const delivery of deliveries) this.launch(endpoint, delivery);
      claimed += deliveries.length;
    }
    return claimed;
  }

  private launch(endpoint: DueEndpoint, delivery: Claimed): void {
    this.inFlight.set(endpoint.id, (this.inFlight.get(endpoint.id) ?? 0) + 1);
    const attempt = this.attempt(endpoint, delivery)
      .catch((error: unknown) => this.log?.error({ err: error, delivery: delivery.id }, 'webhook worker: recording an attempt failed; the lease ends and it is sent again'))
      .finally(() => {
        this.inFlight.set(endpoint.id, (this.inFlight.get(endpoint.id) ?? 1) - 1);
        this.running.delete(attempt);
        this.kick();
      });
    this.running.add(attempt);
  }

  private async attempt(endpoint: DueEndpoint, delivery: Claimed): Promise<void> {
    const body = eventBody(delivery.event);
    const now = new Date();
    const previousSecret = endpoint.previousSecret !== null && endpoint.previousSecretExpiresAt !== null && endpoint.previousSecretExpiresAt > now ? endpoint.previousSecret : undefined;
    const headers = signedHeaders(delivery.event.id, body, { secret: endpoint.secret, previousSecret }, now);
    const outcome = await this.sender.send(endpoint.url, body, headers);
    await this.record(endpoint.id, delivery, outcome);
  }

  /** Writes the attempt's outcome, if the lease is still ours (the attempt count has not moved since the claim). */
  private async record(endpointId: number, delivery: Claimed, outcome: AttemptOutcome): Promise<void> {
    const ours = and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.attempts, delivery.attempts), eq(webhookDeliveries.state, 'pending'));
    if (outcome.ok) {
      await this.db.update(webhookDeliveries).set({ state: 'succeeded', nextAttemptAt: null, lockedUntil: null, lastStatus: outcome.status, lastError: null }).where(ours);
      return;
    }
    const failed = { lockedUntil: null, lastStatus: outcome.status, lastError: outcome.error.slice(0, 500) };
    if (outcome.status === 410) {
      // The receiver says it is gone for good: nothing more is sent to it until someone enables it again.
      await transaction(this.db, async (tx) => {
        await tx.update(webhookDeliveries).set({ ...failed, state: 'failed', nextAttemptAt: null }).where(ours);
        await tx.update(webhookEndpoints).set({ disabled: true, disabledReason: 'gone', updatedAt: sql`now()` }).where(eq(webhookEndpoints.id, endpointId));
      });
      this.log?.warn({ endpoint: endpointId }, 'webhook endpoint answered 410 Gone: disabled');
      return;
    }
    const delay = this.settings.retryScheduleSeconds[delivery.attempts - 1];
    await this.db
      .update(webhookDeliveries)
      .set(delay === undefined ? { ...failed, state: 'failed', nextAttemptAt: null } : { ...failed, nextAttemptAt: sql`now() + make_interval(secs => ${delay})` })
      .where(ours);
  }
}
