/**
 * Issue 23 item 5 (docs/operations.md#several-instances): the service as a team deploys it. Three
 * service processes on one PostgreSQL database and one redis-server, behind Debian's nginx running
 * the repository's own configuration (deploy/nginx.conf, shown in docs/operations.md), and every
 * request goes through nginx. They behave as one service: one rate limit, one payment per
 * Idempotency-Key, one refresh-token family; and a SIGTERM to one of them under load loses no
 * request. nginx's access log (a format of the test's own) says which instance answered what.
 * PostgreSQL only: PGlite's data directory admits one process.
 */
import { randomBytes } from 'node:crypto';
import { count, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { openDatabase, type Database } from '../../server/db/client.ts';
import { oauthRefreshTokens } from '../../server/db/schema.ts';
import { payments } from '../../server/modules/payments/payments.table.ts';
import { products } from '../../server/modules/products/products.table.ts';
import { createUserRow, TEST_JWT, TEST_PASSWORD, type TestUser } from '../helpers/app.ts';
import { onPostgres } from '../helpers/db.ts';
import { hasNginx, startNginx, type AccessLogEntry, type Nginx } from '../helpers/nginx.ts';
import { insertClient, postToken } from '../helpers/oauth.ts';
import { freePort } from '../helpers/ports.ts';
import { productInput } from '../helpers/products.ts';
import { hasRedisServer, startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { createPostgresDatabase, serviceEnv, START_TIMEOUT_MS, startService, stopService, type Service } from '../helpers/service-process.ts';

if (onPostgres && !hasNginx) console.warn('nginx-instances.test.ts: nginx is not installed, so the instances behind nginx are not tested (scripts/ensure-test-tools.sh installs it).');

/** Answers before the SIGTERM. */
const WARM = 240;
/** Under 40, so Redis counts it exactly, one INCRBY a request (server/http/rate-limit-store.ts). */
const LIMIT = 30;
const tokens = new TokenService(TEST_JWT);
const tag = (name: string) => `${name}-${randomBytes(4).toString('hex')}`;

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

describe.skipIf(!onPostgres || !hasRedisServer || !hasNginx)('three instances behind nginx (deploy/nginx.conf) on one PostgreSQL and one Redis behave as one service', () => {
  const services: Service[] = [];
  let redis: RedisServer | undefined;
  let nginx: Nginx | undefined;
  let database: Database | undefined;
  let drop: (() => Promise<void>) | undefined;
  let admin: TestUser;

  beforeAll(async () => {
    redis = await startRedisServer();
    const created = await createPostgresDatabase();
    drop = created.drop;
    database = await openDatabase({ url: created.url, dataDir: '' });
    admin = await createUserRow(database.db, tokens, 'admin');
    const port = await freePort();
    const env = serviceEnv(
      { url: created.url },
      {
        REDIS_URL: redis.url,
        RATE_LIMIT_MAX: String(LIMIT),
        TRUST_PROXY: '1',
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        // As deployed: readiness 503 for a while before the drain (nginx OSS does not look), and a
        // drain bound no request here comes near.
        SHUTDOWN_DELAY_MS: '1000',
        SHUTDOWN_TIMEOUT_MS: '60000',
      },
    );
    // One after the other: the machine may be small, and each compiles the service at start.
    for (let i = 0; i < 3; i++) services.push(await startService(env));
    nginx = await startNginx({ instances: services.map((service) => new URL(service.base).host), port });
  }, 3 * START_TIMEOUT_MS + 60_000);

  afterAll(async () => {
    await nginx?.stop();
    await Promise.all(services.map(stopService));
    await redis?.stop();
    await database?.close();
    await drop?.();
  });

  const gateway = (): Nginx => {
    if (!nginx) throw new Error('nginx did not start');
    return nginx;
  };
  const db = () => {
    if (!database) throw new Error('no database');
    return database.db;
  };
  const instances = () => services.map((service) => new URL(service.base).host);

  /** One request through nginx, tagged with X-Test-Id for the access log. */
  async function send(method: string, path: string, options: { token?: string; body?: unknown; key?: string; testId: string }): Promise<Answer> {
    const res = await fetch(`${gateway().base}${path}`, {
      method,
      headers: {
        'x-test-id': options.testId,
        ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(options.key === undefined ? {} : { 'idempotency-key': options.key }),
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : { text }) as Record<string, unknown> };
  }

  /**
   * The access log's entries of `testId`, once there are `expected` of them: nginx writes an entry
   * after its answer, so a client may read the answer before the entry is there.
   */
  async function logged(testId: string, expected: number): Promise<AccessLogEntry[]> {
    let entries: AccessLogEntry[] = [];
    await vi.waitFor(
      () => {
        entries = gateway()
          .accessLog()
          .filter((entry) => entry.testId === testId);
        expect(entries.length).toBeGreaterThanOrEqual(expected);
      },
      { timeout: 20_000, interval: 20 },
    );
    return entries;
  }

  /** The instance that answered each of the `expected` requests of `testId`, in the order nginx logged them. */
  const answeredBy = async (testId: string, expected: number): Promise<string[]> => (await logged(testId, expected)).map((entry) => entry.upstreams.at(-1) ?? '-');

  /** A confirmed order of `customer`'s, ready to pay. */
  async function confirmedOrder(customer: TestUser): Promise<{ id: number; total: number }> {
    const testId = tag('setup');
    const product = await send('POST', '/api/v1/products', { token: admin.token, body: productInput({ price: 1250, stock: 100 }), testId });
    expect(product.status).toBe(201);
    const order = await send('POST', '/api/v1/orders', { token: customer.token, body: { items: [{ product_id: product.body.id, quantity: 2 }], address: '1 Main St, Springfield' }, testId });
    expect(order.status).toBe(201);
    expect((await send('POST', `/api/v1/orders/${String(order.body.id)}/confirm`, { token: customer.token, testId })).status).toBe(200);
    return { id: Number(order.body.id), total: Number(order.body.total) };
  }

  const paymentsOf = async (orderId: number) => (await db().select({ n: count() }).from(payments).where(eq(payments.orderId, orderId)))[0]?.n;

  describe('one rate limit (REDIS_URL)', () => {
    it(`a caller's ${3 * LIMIT} requests, spread by nginx over the three instances: ${LIMIT} pass (not ${3 * LIMIT}), counting down one shared count; the rest are 429`, async () => {
      const caller = await createUserRow(db(), tokens, 'customer');
      const testId = tag('limit');
      const answers: Answer[] = [];
      for (let i = 0; i < 3 * LIMIT; i++) answers.push(await send('GET', '/api/v1/products?limit=1', { token: caller.token, testId }));

      expect(answers.map((a) => a.status)).toEqual([...Array<number>(LIMIT).fill(200), ...Array<number>(2 * LIMIT).fill(429)]);
      expect(answers.slice(0, LIMIT).map((a) => a.headers.get('ratelimit-remaining'))).toEqual(Array.from({ length: LIMIT }, (_, i) => String(LIMIT - 1 - i)));
      expect(Number(answers.at(-1)?.headers.get('retry-after'))).toBeGreaterThan(0);
      const by = await answeredBy(testId, 3 * LIMIT);
      expect(by).toHaveLength(3 * LIMIT);
      // Each instance let some of them pass: the count is one, not one per instance.
      expect(new Set(by.slice(0, LIMIT))).toEqual(new Set(instances()));
    });
  });

  describe('exactly one payment per Idempotency-Key (docs/api.md#idempotency)', () => {
    it('a keyed payment sent three times, each landing on another instance: one 201, then replays of it (200, Idempotent-Replayed); one payment', async () => {
      const customer = await createUserRow(db(), tokens, 'customer');
      const order = await confirmedOrder(customer);
      const key = tag('pay');
      const testId = tag('retries');
      const answers: Answer[] = [];
      for (let i = 0; i < 3; i++) answers.push(await send('POST', '/api/v1/payments', { token: customer.token, body: { order_id: order.id, amount: order.total, method: 'card' }, key, testId }));

      expect(answers.map((a) => a.status)).toEqual([201, 200, 200]);
      const [created, ...replays] = answers;
      for (const replay of replays) {
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect(replay.body).toEqual(created?.body);
        expect(replay.headers.get('location')).toBe(created?.headers.get('location'));
      }
      expect(new Set(await answeredBy(testId, 3))).toEqual(new Set(instances()));
      expect(await paymentsOf(order.id)).toBe(1);
    });

    it('12 concurrent requests with one key, spread over the three instances: one 201, eleven replays of it; one payment', async () => {
      const customer = await createUserRow(db(), tokens, 'customer');
      const order = await confirmedOrder(customer);
      const key = tag('pay');
      const testId = tag('concurrent');
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => send('POST', '/api/v1/payments', { token: customer.token, body: { order_id: order.id, amount: order.total, method: 'card' }, key, testId })),
      );

      expect(answers.map((a) => a.status).sort((a, b) => a - b), JSON.stringify(answers.map((a) => a.body))).toEqual([...Array<number>(11).fill(200), 201]);
      const created = answers.find((a) => a.status === 201);
      for (const replay of answers.filter((a) => a.status === 200)) expect(replay.body).toEqual(created?.body);
      expect(new Set(await answeredBy(testId, 12))).toEqual(new Set(instances()));
      expect(await paymentsOf(order.id)).toBe(1);
    });
  });

  describe('one refresh-token family (RFC 9700 rotation)', () => {
    it('a refresh token used through one instance is spent for the others; presenting it again through a third revokes the family everywhere', async () => {
      const user = await createUserRow(db(), tokens, 'customer');
      const { client } = await insertClient(db());
      const clientId = client.client_id;
      const token = async (body: Record<string, string>, testId: string) => {
        const response = await postToken(gateway().base, { client_id: clientId, ...body }, { 'x-test-id': testId });
        return { status: response.status, body: (await response.json()) as Record<string, string> };
      };

      const signedIn = await token({ grant_type: 'password', username: user.email, password: TEST_PASSWORD }, tag('sign-in'));
      expect(signedIn.status).toBe(200);
      const first = signedIn.body.refresh_token ?? '';

      const rotateId = tag('rotate');
      const rotated = await token({ grant_type: 'refresh_token', refresh_token: first }, rotateId);
      expect(rotated.status).toBe(200);
      const second = rotated.body.refresh_token ?? '';
      expect(second).not.toBe(first);

      const reuseId = tag('reuse');
      const reused = await token({ grant_type: 'refresh_token', refresh_token: first }, reuseId);
      expect(reused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

      const revokedId = tag('revoked');
      const revoked = await token({ grant_type: 'refresh_token', refresh_token: second }, revokedId);
      expect(revoked).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

      // Three requests, three instances: what one instance did, the others knew.
      expect(new Set([...(await answeredBy(rotateId, 1)), ...(await answeredBy(reuseId, 1)), ...(await answeredBy(revokedId, 1))])).toEqual(new Set(instances()));
      const family = await db().select({ revokedAt: oauthRefreshTokens.revokedAt }).from(oauthRefreshTokens).where(eq(oauthRefreshTokens.userId, user.id));
      expect(family).toHaveLength(2);
      expect(family.every((row) => row.revokedAt !== null)).toBe(true);
    });
  });

  describe('logs and trace context (docs/operations.md)', () => {
    it("the instance that answered logs the request under nginx's request id (its X-Request-Id) and the caller's trace id", async () => {
      const testId = tag('trace');
      const traceId = randomBytes(16).toString('hex');
      const res = await fetch(`${gateway().base}/api/health`, { headers: { 'x-test-id': testId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } });
      await res.arrayBuffer();
      const [entry] = await logged(testId, 1);
      expect(entry?.requestId).toMatch(/^[0-9a-f]{32}$/);
      expect(res.headers.get('x-request-id')).toBe(entry?.requestId);
      const service = services.find((candidate) => new URL(candidate.base).host === entry?.upstreams.at(-1));
      const lines = () =>
        (service?.output() ?? '')
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as Record<string, unknown>);
      await vi.waitFor(() => expect(lines().find((line) => line.reqId === entry?.requestId)).toMatchObject({ trace_id: traceId, url: '/api/health', status: 200 }), { timeout: 20_000, interval: 50 });
    });
  });

  // Last: it stops one instance.
  describe('SIGTERM to one instance under load (server/http/lifecycle.ts, docs/operations.md)', () => {
    it('12 clients reading and writing through nginx while one instance stops: every request is answered, none is cut; every read 200; every write 201 and applied once (or, in the one window nginx OSS leaves, 502 and not applied); the stopping instance cut nothing', async () => {
      const victim = services[1];
      if (!victim) throw new Error('services missing');
      const victimAddress = new URL(victim.base).host;
      const product = await send('POST', '/api/v1/products', { token: admin.token, body: productInput(), testId: tag('setup') });
      expect(product.status).toBe(201);
      const read = `/api/v1/products/${String(product.body.id)}`;

      // Callers of their own (admins by their token), a fresh one every 20 requests: the limit of
      // LIMIT a minute is not what this shows.
      let nextSub = 1_000_000;
      const mintCaller = () => tokens.mint({ sub: String((nextSub += 1)), role: 'admin', name: 'Load' });

      interface Outcome {
        method: 'GET' | 'POST';
        status: number;
        name?: string;
      }
      const outcomes: Outcome[] = [];
      const cut: string[] = [];
      let exited = false;
      let loadRunning: () => void = () => {};
      const running = new Promise<void>((resolve) => (loadRunning = resolve));

      async function client(c: number): Promise<void> {
        let token = '';
        let afterExit = 0;
        for (let n = 0; afterExit < 6; n++) {
          if (exited) afterExit += 1;
          if (n % 20 === 0) token = await mintCaller();
          const name = n % 2 === 1 ? `load ${c}-${n} ${randomBytes(4).toString('hex')}` : undefined;
          try {
            const answer =
              name === undefined
                ? await send('GET', read, { token, testId: 'load' })
                : await send('POST', '/api/v1/products', { token, body: productInput({ name }), testId: 'load' });
            outcomes.push(name === undefined ? { method: 'GET', status: answer.status } : { method: 'POST', status: answer.status, name });
          } catch (error) {
            cut.push(`${name === undefined ? 'GET' : 'POST'}: ${String((error as Error).cause ?? error)}`);
          }
          // Warm: nginx has opened the connections the load needs, as in a running deploy.
          if (outcomes.length >= WARM) loadRunning();
        }
      }

      const clients = Array.from({ length: 12 }, (_, c) => client(c));
      await running;
      const signalledAt = Date.now();
      const exitCode = new Promise<number | null>((resolve) => victim.child.once('exit', (code) => resolve(code)));
      victim.child.kill('SIGTERM');
      expect(await exitCode, victim.output()).toBe(0);
      exited = true;
      await Promise.all(clients);

      expect(cut).toEqual([]);
      expect(outcomes.filter((o) => o.method === 'GET' && o.status !== 200)).toEqual([]);
      // A POST on a connection nginx opened just as the listener closed is reset after nginx sent
      // it; nginx may not send it again, and answers 502 (docs/operations.md, "Behind nginx").
      expect(outcomes.filter((o) => o.method === 'POST' && o.status !== 201 && o.status !== 502)).toEqual([]);
      // Each write once: a row for every 201, none for a 502, no row twice.
      const written = (status: number) => outcomes.flatMap((o) => (o.method === 'POST' && o.status === status && o.name !== undefined ? [o.name] : []));
      const rows = await db()
        .select({ name: products.name })
        .from(products)
        .where(inArray(products.name, [...written(201), ...written(502)]));
      expect(rows.map((row) => row.name).sort()).toEqual(written(201).sort());
      expect(victim.output()).not.toContain('the drain timed out');

      const load = await logged('load', outcomes.length);
      const loggedAfter = (entry: AccessLogEntry) => entry.msec * 1000 > signalledAt;
      // The stopping instance answered requests after the signal (the delay and the drain were under load)...
      expect(load.filter((entry) => loggedAfter(entry) && entry.upstreams.at(-1) === victimAddress && entry.upstreamStatuses.at(-1)?.startsWith('2')).length).toBeGreaterThan(0);
      // ...and nginx saw it fail (a refused connection: the drain; or a reset, below) and sent the
      // request elsewhere when it could (every time but for a POST it had sent).
      const upstreamErrors = gateway()
        .errorLog()
        .split('\n')
        .filter((line) => line.includes('upstream'));
      const failedThere = load.filter((entry) => entry.upstreams[0] === victimAddress && entry.upstreamStatuses[0] === '502');
      expect(failedThere.length, upstreamErrors.join('\n')).toBeGreaterThan(0);
      expect(failedThere.filter((entry) => entry.upstreams.length === 1 && entry.method !== 'POST')).toEqual([]);
      // nginx's errors: refused connections, the instance taken out for them, and resets of
      // connections in the accept queue. Never a connection closed with a request in flight
      // ("upstream prematurely closed connection"), never a timeout.
      const expected = /connect\(\) failed \(111: Connection refused\) while connecting to upstream|recv\(\) failed \(104: Connection reset by peer\) while reading response header from upstream|upstream server temporarily disabled while/;
      expect(upstreamErrors.filter((line) => !expected.test(line))).toEqual([]);
    }, 240_000);
  });
});
