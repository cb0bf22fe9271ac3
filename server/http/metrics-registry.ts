/**
 * What `GET /metrics` reports (docs/api.md#metrics), in one prom-client registry per app: several
 * apps in one process (tests) never share or collide on a metric, and nothing is recorded in
 * prom-client's global registry.
 *
 * Labels are bounded by construction: the route is a template (or a known procedure, or a fixed
 * word), the method one Node parses, the status three digits, the operation a creating procedure.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PoolState } from '../db/client.ts';

/** What the registry reads when it is scraped, rather than on every request. */
export interface MetricsSources {
  /** The database pool (PostgreSQL); absent on PGlite, which has none. */
  pool?: (() => PoolState) | undefined;
}

/**
 * Seconds. The service answers most requests in 1-5 ms, so the low buckets are finer than
 * prom-client's defaults (which start at 5 ms); the top ones still catch a statement timeout.
 */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class ServiceMetrics {
  readonly registry = new Registry();
  private inFlight = 0;
  private readonly duration: Histogram<'method' | 'route' | 'status_code'>;
  private readonly refusals: Counter;
  private readonly replays: Counter<'operation'>;

  constructor(sources: MetricsSources = {}) {
    const registers = [this.registry];
    // Node's own: CPU, memory, heap spaces, GC, handles, event loop lag (min, mean, p50-p99).
    collectDefaultMetrics({ register: this.registry });
    this.duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving a request to the end of its answer, by method, route template and status.',
      labelNames: ['method', 'route', 'status_code'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    const inFlight = () => this.inFlight;
    new Gauge({
      name: 'http_requests_in_flight',
      help: 'Requests received and not yet answered.',
      registers,
      collect() {
        this.set(inFlight());
      },
    });
    this.refusals = new Counter({
      name: 'rate_limit_refusals_total',
      help: 'Requests refused with 429 because their caller was past a rate limit (the API\'s or /oauth\'s).',
      registers,
    });
    this.replays = new Counter({
      name: 'idempotency_replays_total',
      help: 'Requests answered with the stored result of an earlier one with the same Idempotency-Key, by operation.',
      labelNames: ['operation'],
      registers,
    });
    const { pool } = sources;
    if (pool) this.registerPool(pool);
  }

  /** A request was received: in flight until `requestEnded`. */
  requestReceived(): void {
    this.inFlight++;
  }

  /** A request received earlier was answered, or its client went away. */
  requestEnded(): void {
    this.inFlight--;
  }

  /** A request's answer: its duration, and a refusal if it was one. */
  requestAnswered(method: string, route: string, status: number, seconds: number): void {
    this.duration.observe({ method, route, status_code: status }, seconds);
    if (status === 429) this.refusals.inc();
  }

  /** Passed to the idempotency layer: a request was answered from a stored result. */
  readonly recordReplay = (operation: string): void => {
    this.replays.inc({ operation });
  };

  /** The exposition text (Prometheus text format 0.0.4). */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * postgres.js shows no connection states, so the pool is seen through what we gate: its size,
   * and the transactions holding a slot (one connection each) or waiting for one. A rising
   * `waiting` is what precedes 503s for a pool too small.
   */
  private registerPool(pool: () => PoolState): void {
    const registers = [this.registry];
    new Gauge({
      name: 'db_pool_max_connections',
      help: 'Connections the request pool may open (DATABASE_POOL_SIZE).',
      registers,
      collect() {
        this.set(pool().size);
      },
    });
    new Gauge({
      name: 'db_pool_transaction_slots',
      help: 'Connections of the pool that transactions may hold at once (the rest stay for single statements).',
      registers,
      collect() {
        this.set(pool().transactionSlots);
      },
    });
    new Gauge({
      name: 'db_pool_transactions',
      help: 'Transactions by state: active (holding a pool connection) or waiting (for a transaction slot).',
      labelNames: ['state'],
      registers,
      collect() {
        const state = pool();
        this.set({ state: 'active' }, state.activeTransactions);
        this.set({ state: 'waiting' }, state.waitingTransactions);
      },
    });
  }
}
