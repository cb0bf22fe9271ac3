/**
 * Issue 23 item 2 (docs/api.md#metrics): `GET /metrics` in the Prometheus text format, served on a
 * port of its own or to a bearer of `METRICS_TOKEN`, never to the public by default; each scrape
 * read back by a strict parser of the format (test/helpers/prometheus-text.ts).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../server/db/client.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { buildApp, type AppOptions } from '../../server/app.ts';
import { createUserRow, TEST_JWT, type TestUser } from '../helpers/app.ts';
import { createTestDatabase, onPostgres } from '../helpers/db.ts';
import { freePort } from '../helpers/ports.ts';
import { expectProblem } from '../helpers/problems.ts';
import { productInput } from '../helpers/products.ts';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { parsePrometheusText, type MetricFamily } from '../helpers/prometheus-text.ts';

const TOKEN = 'metrics-token-for-tests-0123456789';
const tokens = new TokenService(TEST_JWT);
const apps: FastifyInstance[] = [];
/** One database for every app of the file (a PGlite takes seconds to start); closed last. */
let database: Database;
let admin: TestUser;

beforeAll(async () => {
  database = await createTestDatabase();
  admin = await createUserRow(database.db, tokens, 'admin');
});
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await database?.close();
});

/** The shared database, left open when an app closes. */
const shared = (): Database => ({ ...database, close: async () => {} });

/** An app with these options, ready; closed after the file. */
async function appWith(options: Partial<AppOptions> = {}): Promise<FastifyInstance> {
  const app = await buildApp({ database: shared(), tokens, rateLimit: { max: 1_000_000, timeWindow: '1 minute' }, ...options });
  apps.push(app);
  await app.ready();
  return app;
}

type Families = Map<string, MetricFamily>;

async function scrape(app: FastifyInstance): Promise<Families> {
  const res = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  expect(res.headers['cache-control']).toBe('no-store');
  const families = parsePrometheusText(res.body);
  // A published parser of the format reads the same families, each with its declared type.
  const parsed = parsePrometheusTextFormat(res.body);
  expect(parsed.map((family) => family.name).sort()).toEqual([...families.keys()].sort());
  for (const family of parsed) expect(family.type.toLowerCase(), family.name).toBe(families.get(family.name)?.type);
  return families;
}

/** The value of one series (0 when absent: a counter not yet incremented). */
function value(families: Families, family: string, sample: string, labels: Record<string, string> = {}): number {
  const found = families.get(family)?.samples.find((s) => s.name === sample && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found?.value ?? 0;
}

/** The requests the duration histogram counted with these labels. */
const counted = (families: Families, labels: Record<string, string>) => value(families, 'http_request_duration_seconds', 'http_request_duration_seconds_count', labels);

/** Every value the route label takes. */
const routes = (families: Families) => new Set(families.get('http_request_duration_seconds')?.samples.map((s) => s.labels.route));

describe('never public by default: without METRICS_PORT or METRICS_TOKEN there is no /metrics', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await appWith();
  });

  it('GET /metrics is the 404 of an unknown path, with or without a bearer token', async () => {
    expectProblem(await app.inject({ method: 'GET', url: '/metrics' }), 404, 'not-found');
    expectProblem(await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } }), 404, 'not-found');
  });
});

describe('METRICS_TOKEN: GET /metrics on the main port answers only a bearer of the token', () => {
  let app: FastifyInstance;
  let other: FastifyInstance;
  beforeAll(async () => {
    app = await appWith({ metrics: { token: TOKEN } });
    other = await appWith({ metrics: { token: TOKEN } });
  });

  it.each([
    ['no Authorization', {}],
    ['another token', { authorization: 'Bearer metrics-token-for-tests-0123456788' }],
    ['the token under another scheme', { authorization: `Basic ${TOKEN}` }],
    ['the token with something after it', { authorization: `Bearer ${TOKEN} x` }],
    ['an access token of the API', { authorization: `Bearer ${TOKEN.slice(0, 10)}` }],
  ])('%s: the 404 of an unknown path (the endpoint stays invisible)', async (_name, headers) => {
    const res = await app.inject({ method: 'GET', url: '/metrics', headers });
    const problem = expectProblem(res, 404, 'not-found');
    expect(problem.detail).toBe('No resource at /metrics.');
    expect(res.body).not.toContain('http_request');
  });

  it('the bearer gets the exposition: request histogram, in flight, refusals, replays, event loop lag and Node defaults', async () => {
    const families = await scrape(app);
    expect(families.get('http_request_duration_seconds')?.type).toBe('histogram');
    expect(families.get('http_requests_in_flight')?.type).toBe('gauge');
    expect(families.get('rate_limit_refusals_total')?.type).toBe('counter');
    expect(families.get('idempotency_replays_total')?.type).toBe('counter');
    for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds', 'process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes']) {
      expect(families.has(name), name).toBe(true);
    }
    // The scrape itself is the one request in flight.
    expect(value(families, 'http_requests_in_flight', 'http_requests_in_flight')).toBe(1);
  });

  it('a request is counted by method, route template and status, never by its concrete path', async () => {
    const before = await scrape(app);
    const labels = { method: 'GET', route: '/api/v1/products/:id', status_code: '404' };
    for (const id of [900001, 900002, 900003]) expect((await app.inject({ method: 'GET', url: `/api/v1/products/${id}` })).statusCode).toBe(404);
    const after = await scrape(app);
    expect(counted(after, labels) - counted(before, labels)).toBe(3);
    expect([...routes(after)].filter((route) => route?.includes('900001'))).toEqual([]);
    expect(value(after, 'http_request_duration_seconds', 'http_request_duration_seconds_sum', labels)).toBeGreaterThan(0);
  });

  it('unknown paths share one label, "unmatched", however many are tried', async () => {
    const before = await scrape(app);
    for (let i = 0; i < 20; i++) expect((await app.inject({ method: 'GET', url: `/no/such/${randomUUID()}` })).statusCode).toBe(404);
    const after = await scrape(app);
    const labels = { method: 'GET', route: 'unmatched', status_code: '404' };
    expect(counted(after, labels) - counted(before, labels)).toBe(20);
    expect(routes(after).size).toBe(routes(before).size + (routes(before).has('unmatched') ? 0 : 1));
  });

  it('/trpc: one call by its procedure, a batch as "/trpc/(batch)", an unknown procedure by the template', async () => {
    const before = await scrape(app);
    expect((await app.inject({ method: 'GET', url: '/trpc/products.list' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: `/trpc/products.list,products.list?batch=1&input=${encodeURIComponent('{"0":{},"1":{}}')}` })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: `/trpc/no.such.${randomUUID()}` })).statusCode).toBe(404);
    const after = await scrape(app);
    const delta = (route: string, status: string) => counted(after, { route, status_code: status }) - counted(before, { route, status_code: status });
    expect(delta('/trpc/products.list', '200')).toBe(1);
    expect(delta('/trpc/(batch)', '200')).toBe(1);
    expect(delta('/trpc/:path', '404')).toBe(1);
    expect([...routes(after)].filter((route) => route?.includes('no.such'))).toEqual([]);
  });

  it('an answer replayed for a repeated Idempotency-Key counts as a replay of its operation', async () => {
    const before = await scrape(app);
    const request = {
      method: 'POST' as const,
      url: '/api/v1/products',
      headers: { authorization: `Bearer ${admin.token}`, 'idempotency-key': randomUUID() },
      payload: productInput(),
    };
    expect((await app.inject(request)).statusCode).toBe(201);
    const replayed = await app.inject(request);
    expect(replayed.statusCode).toBe(200);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    const after = await scrape(app);
    const replays = (families: Families) => value(families, 'idempotency_replays_total', 'idempotency_replays_total', { operation: 'products.create' });
    expect(replays(after) - replays(before)).toBe(1);
  });

  it(`the database pool: its size and transactions by state on PostgreSQL; nothing on PGlite (no pool)`, async () => {
    const families = await scrape(app);
    if (onPostgres) {
      expect(value(families, 'db_pool_max_connections', 'db_pool_max_connections')).toBe(20);
      expect(value(families, 'db_pool_transaction_slots', 'db_pool_transaction_slots')).toBe(18);
      expect(families.get('db_pool_transactions')?.samples.map((s) => [s.labels.state, s.value])).toEqual([
        ['active', 0],
        ['waiting', 0],
      ]);
    } else {
      expect([...families.keys()].filter((name) => name.startsWith('db_pool'))).toEqual([]);
    }
  });

  it('each app has its own registry: another app\'s requests are not in this one\'s figures', async () => {
    const before = await scrape(app);
    for (let i = 0; i < 3; i++) await other.inject({ method: 'GET', url: '/api/health' });
    const after = await scrape(app);
    const labels = { route: '/api/health', status_code: '200' };
    expect(counted(after, labels)).toBe(counted(before, labels));
    expect(counted(await scrape(other), labels)).toBe(3);
  });
});

// Regression: a request whose client went away before its answer was counted in flight for ever
// (Fastify runs no onResponse hook for it).
describe('a request whose client goes away is no longer in flight', () => {
  let app: FastifyInstance;
  let base: string;
  let entered: () => void;
  let release: () => void;
  const started = new Promise<void>((resolve) => (entered = resolve));
  const held = new Promise<void>((resolve) => (release = resolve));
  beforeAll(async () => {
    app = await buildApp({ database: shared(), tokens, metrics: { token: TOKEN } });
    apps.push(app);
    // A route that answers only when the test lets it, so the client can leave while it runs.
    app.get('/test/held', async () => {
      entered();
      await held;
      return 'late';
    });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });

  const inFlight = async () => value(await scrape(app), 'http_requests_in_flight', 'http_requests_in_flight');

  it('in flight while it runs; once the client aborts, only the scrape itself is', async () => {
    const abort = new AbortController();
    const request = fetch(`${base}/test/held`, { signal: abort.signal }).catch(() => 'aborted');
    await started;
    expect(await inFlight()).toBe(2);
    abort.abort();
    expect(await request).toBe('aborted');
    await vi.waitFor(async () => expect(await inFlight()).toBe(1), { timeout: 10_000, interval: 10 });
    release();
  });
});

describe('rate-limit refusals are counted (every 429, the API\'s limit and /oauth\'s)', () => {
  let app: FastifyInstance;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    app = await appWith({ rateLimit: { max: 2, timeWindow: '1 minute' }, metrics: { port } });
  });

  it('three requests past a limit of two: two answered, one refused and counted', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await app.inject({ method: 'GET', url: '/api/v1/products', remoteAddress: '10.23.2.1' })).statusCode);
    expect(statuses).toEqual([200, 200, 429]);
    const families = parsePrometheusText(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
    expect(value(families, 'rate_limit_refusals_total', 'rate_limit_refusals_total')).toBe(1);
    expect(counted(families, { route: '/api/v1/products', status_code: '429' })).toBe(1);
  });
});

describe('METRICS_PORT: a server of its own on METRICS_HOST serves only GET /metrics, and closes with the app', () => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = await appWith({ metrics: { port, host: '127.0.0.1' } });
  });

  it('GET /metrics answers the exposition (HEAD its headers), with no token asked', async () => {
    await app.inject({ method: 'GET', url: '/api/health' });
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const families = parsePrometheusText(await res.text());
    expect(counted(families, { method: 'GET', route: '/api/health', status_code: '200' })).toBe(1);
    const head = await fetch(`${base}/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('any other path is 404, another method on /metrics 405', async () => {
    expect((await fetch(`${base}/`)).status).toBe(404);
    expect((await fetch(`${base}/api/health`)).status).toBe(404);
    const post = await fetch(`${base}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('the main port still has no /metrics (no token configured)', async () => {
    expectProblem(await app.inject({ method: 'GET', url: '/metrics' }), 404, 'not-found');
  });

  it('a taken port fails the start loudly', async () => {
    const clash = await buildApp({ database: shared(), tokens, metrics: { port: Number(new URL(base).port) } });
    await expect(clash.ready()).rejects.toThrow(/EADDRINUSE/);
    await clash.close().catch(() => {});
  });

  it('closing the app closes the metrics server', async () => {
    await app.close();
    await expect(fetch(`${base}/metrics`)).rejects.toThrow();
  });
});

