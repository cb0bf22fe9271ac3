/**
 * The delivery worker (docs/webhooks.md#delivery): sends the due deliveries, in any number of
 * processes on one database. Small and our own rather than pg-boss or graphile-worker: the
 * deliveries are made by the fan-out trigger in the event's own transaction, and what is left, a
 * claim, an attempt and its record, is two statements a round that run alike on PostgreSQL and
 * PGlite (neither queue runs on PGlite).
 *
 * One round (`tick`) writes the outcomes of every attempt finished since the last round in one
 * statement, then claims in one statement whatever fits the free slots of every endpoint. Attempts
 * finishing while a round runs wait for the next: under load each round carries many deliveries,
 * so the statements per delivery fall as the load grows (docs/performance.md).
 *
 * - **Claim**: `FOR UPDATE SKIP LOCKED`, per endpoint, at most `concurrencyPerEndpoint` in flight
 *   at once in this process, so one slow receiver holds its own slots only and never starves the
 *   others. A claim is a lease: it moves `next_attempt_at` (and `locked_until`) `leaseSeconds`
 *   ahead and counts the attempt. A process killed mid-delivery leaves the delivery due again
 *   once the lease ends, and another worker sends it (at least once; receivers dedupe by
 *   `webhook-id`).
 * - **Record**: success, a retry after the schedule's next delay, or failed for good; made only if
 *   the lease is still this worker's (the attempt count has not moved), so an attempt that
 *   outlived its lease cannot overwrite a newer one. `410 Gone` also disables the endpoint. A
 *   record that fails (the database away) is dropped: the lease ends and the delivery is sent
 *   again, as after a crash.
 * - **Stop**: claims nothing more, and waits for the round in progress, the attempts it started
 *   and the record of their outcomes, so a stopped worker leaves no delivery to be sent twice.
 * - **Backpressure**: while receivers are down the deliveries wait in their table; requests only
 *   ever insert them (the trigger), so the API does not slow down.
 */
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'drizzle-orm';
import type { Db, Listen } from '../../db/client.ts';
import { events } from '../../db/schema.ts';
import { webhookDeliveries, webhookEndpoints } from './webhooks.table.ts';
import type { WebhookTargetRules } from './webhooks.targets.ts';
import { signedHeaders, WebhookSender, type AttemptOutcome } from './webhooks.sender.ts';
import { DELIVERIES_CHANNEL, onWake } from './webhooks.signal.ts';

export interface WebhookWorkerSettings {
  /** Seconds before each retry (`WEBHOOK_RETRY_SCHEDULE`); after the last, the delivery has failed. */
  retryScheduleSeconds: readonly number[];
  /** Attempts at once to one endpoint, in this process. */
  concurrencyPerEndpoint: number;
  /** How often to look for due deliveries when nothing woke the worker. */
  pollIntervalMs: number;
  /** How long a claim holds a delivery; longer than an attempt can take (10 s). */
  leaseSeconds: number;
  /**
   * The least time between the rounds a nudge starts (a delivery made as its event committed, a
   * delivery retried): under a stream of events one round per interval serves them all, instead
   * of one per event.
   */
  wakeIntervalMs: number;
}

export const defaultWebhookWorkerSettings: WebhookWorkerSettings = {
  retryScheduleSeconds: [5, 300, 1800, 7200, 18000, 36000, 36000],
  concurrencyPerEndpoint: 16,
  pollIntervalMs: 500,
  leaseSeconds: 60,
  wakeIntervalMs: 50,
};

/** A claimed delivery, with what its endpoint signs with and its body as sent. */
interface Claimed {
  id: number;
  attempts: number;
  endpointId: number;
  url: string;
  secret: string;
  /** The secret before a rotation, while it still signs. */
  previousSecret: string | null;
  eventId: string;
  /** What GET /api/v1/events/{id} answers for the event. */
  body: string;
}

/** An attempt's outcome, waiting for the next round to write it. */
interface Outcome {
  delivery: Claimed;
  outcome: AttemptOutcome;
}

const rowsOf = (result: unknown): Record<string, unknown>[] => (Array.isArray(result) ? result : ((result as { rows?: unknown[] }).rows ?? [])) as Record<string, unknown>[];

/**
 * One round, one statement: writes `outcomes`, then claims, for every enabled endpoint, up to its
 * free slots (`concurrency` less this process's attempts in flight to it, `busy`) of its due
 * deliveries, oldest due first, skipping those another worker holds.
 *
 * - An outcome is written only if its lease is still ours (the attempt count has not moved since
 *   the claim): success, a retry after the schedule's next delay, or failed for good. A 410 also
 *   disables its endpoint (whether or not the lease was still ours: the receiver said it is gone).
 * - A claim is a lease: `next_attempt_at` and `locked_until` move `leaseSeconds` ahead and the
 *   attempt is counted. A delivery written in the same round is never claimed in it (one
 *   statement may change a row once).
 *
 * Every value comes back as text or an integer, alike from both drivers; the body is made here
 * from the event's stored JSON text, never parsed and serialised again.
 *
 * Its commit does not wait for the WAL to reach the disk (`synchronous_commit` off for this
 * transaction only; the one row of `commit_without_flush` is what sets it): that flush was most of
 * a round's time (docs/performance.md). A PostgreSQL crash may then lose the last rounds' writes,
 * which leaves their deliveries due again (a claim lost) or sent again (a record lost): at least
 * once, as after a worker's crash. Nothing else waits on these writes.
 */
async function round(db: Db, outcomes: readonly Outcome[], busy: ReadonlyMap<number, number>, concurrency: number, settings: WebhookWorkerSettings): Promise<Claimed[]> {
  const written = outcomes.map(({ delivery, outcome }) => {
    const delay = outcome.ok || outcome.status === 410 ? undefined : settings.retryScheduleSeconds[delivery.attempts - 1];
    return {
      id: delivery.id,
      attempts: delivery.attempts,
      endpoint: delivery.endpointId,
      state: outcome.ok ? 'succeeded' : delay === undefined ? 'failed' : 'pending',
      delay: delay ?? null,
      status: outcome.status,
      error: outcome.ok ? null : outcome.error.slice(0, 500),
      gone: !outcome.ok && outcome.status === 410,
    };
  });
  const inFlight = [...busy].map(([endpoint, n]) => ({ endpoint, n }));
  // Column names as the migrations spell them: a SET names its target's columns bare.
  const result = await db.execute(sql`
    with v as (
      select * from json_to_recordset(${JSON.stringify(written)}::text::json)
        as v(id int, attempts int, endpoint int, state text, delay int, status int, error text, gone boolean)
    ), recorded as (
      update ${webhookDeliveries} d
      set state = v.state,
          next_attempt_at = case when v.state = 'pending' then now() + make_interval(secs => v.delay) end,
          locked_until = null,
          last_status = v.status,
          last_error = v.error
      from v
      where d.id = v.id and d.attempts = v.attempts and d.state = 'pending'
    ), gone as (
      update ${webhookEndpoints} e
      set disabled = true, disabled_reason = 'gone', updated_at = now()
      where e.id in (select v.endpoint from v where v.gone)
    ), candidates as (
      select c.id from ${webhookEndpoints} e
      left join json_to_recordset(${JSON.stringify(inFlight)}::text::json) as b(endpoint int, n int) on b.endpoint = e.id
      cross join lateral (
        select d.id from ${webhookDeliveries} d
        where d.endpoint_id = e.id and d.state = 'pending' and d.next_attempt_at <= now()
          and d.id not in (select v.id from v)
        order by d.next_attempt_at, d.id
        limit greatest(${concurrency}::int - coalesce(b.n, 0), 0)
        for update of d skip locked
      ) c
      where not e.disabled and e.id not in (select v.endpoint from v where v.gone)
    ), claimed as (
      update ${webhookDeliveries} d
      set attempts = d.attempts + 1,
          next_attempt_at = now() + make_interval(secs => ${settings.leaseSeconds}::int),
          locked_until = now() + make_interval(secs => ${settings.leaseSeconds}::int),
          last_attempt_at = now()
      where d.id in (select candidates.id from candidates)
      returning d.id, d.attempts, d.endpoint_id, d.event_id
    )
    select c.id, c.attempts, c.endpoint_id, e.url, e.secret,
           case when e.previous_secret_expires_at > now() then e.previous_secret end as previous_secret,
           ev.id as event_id,
           '{"id":' || to_json(ev.id)::text || ',"type":' || to_json(ev.type)::text
             || ',"created_at":"' || to_char(ev.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
             || '","api_version":' || to_json(ev.api_version)::text || ',"data":' || ev.data::text || '}' as body
    from (select set_config('synchronous_commit', 'off', true)) as commit_without_flush
    left join (claimed c
      join ${webhookEndpoints} e on e.id = c.endpoint_id
      join ${events} ev on ev.id = c.event_id) on true`);
  return rowsOf(result).filter((row) => row.id !== null).map((row) => ({
    id: Number(row.id),
    attempts: Number(row.attempts),
    endpointId: Number(row.endpoint_id),
    url: String(row.url),
    secret: String(row.secret),
    previousSecret: typeof row.previous_secret === 'string' ? row.previous_secret : null,
    eventId: String(row.event_id),
    body: String(row.body),
  }));
}

export class WebhookWorker {
  private readonly settings: WebhookWorkerSettings;
  private readonly sender: WebhookSender;
  /** Attempts on the wire, per endpoint. */
  private readonly inFlight = new Map<number, number>();
  /** Each attempt on the wire, until its outcome waits in `outcomes`. */
  private readonly running = new Set<Promise<void>>();
  private outcomes: Outcome[] = [];
  private started = false;
  private stopped = false;
  /** The loop of rounds, while one runs. */
  private looping: Promise<void> | undefined;
  private wanted = false;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  /** When the last round began (performance.now()). */
  private lastRoundAt = Number.NEGATIVE_INFINITY;
  /** The round a nudge asked for, while it waits for `wakeIntervalMs` to pass. */
  private wakeTimer: NodeJS.Timeout | undefined;
  /** The LISTEN on DELIVERIES_CHANNEL: its stop function once in place. */
  private listening: Promise<(() => Promise<void>) | undefined> | undefined;

  constructor(
    private readonly db: Db,
    rules: WebhookTargetRules,
    settings: Partial<WebhookWorkerSettings> = {},
    private readonly log?: FastifyBaseLogger,
    /** The LISTEN the fan-out's notifications come through; without it the worker polls. */
    private readonly listen?: Listen,
  ) {
    this.settings = { ...defaultWebhookWorkerSettings, ...settings };
    this.sender = new WebhookSender(rules);
  }

  /**
   * Looks for due deliveries every `pollIntervalMs`, and soon when a delivery is made (the
   * fan-out's NOTIFY, on any instance) or a request of this process nudges it. Resolves once the
   * LISTEN is in place (or has failed: the poll remains).
   */
  start(): Promise<void> {
    if (this.started || this.stopped) return Promise.resolve();
    this.started = true;
    this.unsubscribe = onWake(() => this.wake());
    // Each time the LISTEN is (again) in place, a round: what was notified while it was down.
    this.listening = this.listen?.(DELIVERIES_CHANNEL, () => this.wake(), () => this.wake()).catch((error: unknown) => {
      this.log?.warn({ err: error }, 'webhook worker: no LISTEN, deliveries wait for the poll');
      return undefined;
    });
    this.timer = setInterval(() => this.kick(), this.settings.pollIntervalMs);
    this.timer.unref();
    this.kick();
    return this.listening?.then(() => undefined) ?? Promise.resolve();
  }

  /**
   * Claims nothing more, and waits for the round in progress (its claim, then its attempts), the
   * attempts in flight (each bounded by its 10 s timeout) and the record of their outcomes.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.wakeTimer);
    this.unsubscribe?.();
    const unlisten = await this.listening;
    await unlisten?.().catch(() => undefined);
    await this.looping;
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
    if (this.outcomes.length > 0) await this.round(0).catch(() => undefined);
    this.sender.close();
  }

  /**
   * Sends every delivery due now, waiting for each attempt and its record, until none is due:
   * what a test calls instead of starting the worker. Answers the number of attempts made.
   */
  async deliverDue(): Promise<number> {
    let attempts = 0;
    for (;;) {
      const claimed = await this.round(this.settings.concurrencyPerEndpoint);
      attempts += claimed;
      if (claimed === 0 && this.running.size === 0 && this.outcomes.length === 0) return attempts;
      if (this.running.size > 0) await Promise.race(this.running);
    }
  }

  /**
   * A nudge: a delivery made (its event's transaction committed), or one retried by hand. A round
   * per event cost the service more CPU than the events themselves (docs/performance.md#events).
   * So a round now, or, when one began less than `wakeIntervalMs` ago, one round once that much
   * has passed, whatever the nudges meanwhile. An attempt that ends still asks for its round at
   * once.
   */
  private wake(): void {
    if (!this.started || this.stopped || this.wakeTimer !== undefined) return;
    const wait = this.lastRoundAt + this.settings.wakeIntervalMs - performance.now();
    if (wait <= 0) return this.kick();
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = undefined;
      this.kick();
    }, wait);
    this.wakeTimer.unref();
  }

  private kick(): void {
    if (!this.started || this.stopped) return;
    this.wanted = true;
    this.looping ??= this.loop();
  }

  /**
   * Rounds until nothing asks for one: each attempt that ends asks (its outcome to write, its
   * slot free). The first round's statement is sent at once, so a stop() right after start()
   * finds it under way and waits for it.
   */
  private async loop(): Promise<void> {
    try {
      while (this.wanted && !this.stopped) {
        this.wanted = false;
        await this.round(this.settings.concurrencyPerEndpoint);
      }
    } catch (error) {
      // The database is away, say: the next poll tries again.
      this.log?.warn({ err: error }, 'webhook worker: a round of claims and records failed');
    } finally {
      this.looping = undefined;
    }
  }

  /**
   * Writes the outcomes waiting and claims what fits `concurrency` slots per endpoint, then starts
   * sending it; answers how many it claimed. Outcomes that cannot be written are dropped: their
   * leases end and they are sent again, as after a crash.
   */
  private async round(concurrency: number): Promise<number> {
    this.lastRoundAt = performance.now();
    const outcomes = this.outcomes;
    this.outcomes = [];
    let claimed: Claimed[];
    try {
      claimed = await round(this.db, outcomes, this.inFlight, concurrency, this.settings);
    } catch (error) {
      if (outcomes.length > 0) this.log?.error({ err: error, deliveries: outcomes.map((o) => o.delivery.id) }, 'webhook worker: recording attempts failed; their leases end and they are sent again');
      throw error;
    }
    for (const { delivery, outcome } of outcomes) {
      if (!outcome.ok && outcome.status === 410) this.log?.warn({ endpoint: delivery.endpointId }, 'webhook endpoint answered 410 Gone: disabled');
    }
    for (const delivery of claimed) this.launch(delivery);
    return claimed.length;
  }

  private launch(delivery: Claimed): void {
    const { endpointId } = delivery;
    this.inFlight.set(endpointId, (this.inFlight.get(endpointId) ?? 0) + 1);
    const attempt = this.attempt(delivery)
      .then((outcome) => {
        this.outcomes.push({ delivery, outcome });
      })
      .catch((error: unknown) => this.log?.error({ err: error, delivery: delivery.id }, 'webhook worker: an attempt failed before sending; its lease ends and it is sent again'))
      .finally(() => {
        const left = (this.inFlight.get(endpointId) ?? 1) - 1;
        if (left > 0) this.inFlight.set(endpointId, left);
        else this.inFlight.delete(endpointId);
        this.running.delete(attempt);
        this.kick();
      });
    this.running.add(attempt);
  }

  private attempt(delivery: Claimed): Promise<AttemptOutcome> {
    const headers = signedHeaders(delivery.eventId, delivery.body, { secret: delivery.secret, previousSecret: delivery.previousSecret ?? undefined });
    return this.sender.send(delivery.url, delivery.body, headers);
  }
}
