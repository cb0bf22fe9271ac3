/**
 * docs/api.md#rate-limits: with REDIS_URL set, several instances share one limit; a Redis that does not
 * answer makes the limiter fail open (requests pass, quickly) and health say `degraded`, never 5xx.
 * Two real service processes and a redis-server this file starts itself; nothing here depends on
 * the database, so it runs once (the pglite project), not again for PostgreSQL.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { buildApp } from '../../server/app.ts';
import { TEST_JWT } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { freePort } from '../helpers/ports.ts';

const onceOnly = process.env.TEST_DB !== 'postgres';
const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;
if (onceOnly && !hasRedisServer) {
  console.warn('rate-limit-redis.test.ts: redis-server is not installed, so the shared-limit tests are skipped (scripts/ensure-test-tools.sh installs it).');
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LIMIT = 10;
const START_TIMEOUT_MS = 90_000;

interface Running {
  child: ChildProcess;
  /** Everything the process wrote so far (its JSON log lines). */
  output: () => string;
}

/** Spawns a process and resolves once its output matches `ready` (with the match). */
async function start(command: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<Running & { match: RegExpExecArray }> {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} did not start:\n${output}`)), START_TIMEOUT_MS);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const found = ready.exec(output);
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited (${code}) before it was ready:\n${output}`));
    });
  });
  return { child, match, output: () => output };
}

async function stop(running: Running | undefined): Promise<void> {
  if (!running || running.child.exitCode !== null || running.child.signalCode !== null) return;
  const exited = once(running.child, 'exit');
  running.child.kill('SIGTERM');
  await exited;
}

describe.skipIf(!onceOnly || !hasRedisServer)('two instances on one Redis share one limit (docs/api.md#rate-limits)', () => {
  let redis: Running | undefined;
  const services: (Running & { base: string })[] = [];
  const tokens = new TokenService(TEST_JWT);

  beforeAll(async () => {
    const redisPort = await freePort();
    redis = await start('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], process.env, /Ready to accept connections/);
    const env = {
      ...process.env,
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_URL: 'memory://',
      JWT_SECRET: TEST_JWT.secret,
      JWT_ISSUER: TEST_JWT.issuer,
      JWT_AUDIENCE: TEST_JWT.audience,
      RATE_LIMIT_MAX: String(LIMIT),
      RATE_LIMIT_WINDOW: '1 minute',
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      LOG_LEVEL: 'info',
    };
    const tsx = `${ROOT}node_modules/.bin/tsx`;
    const listening = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/;
    // One after the other: the machine may be small, and each compiles the service at start.
    for (let i = 0; i < 2; i++) {
      const service = await start(tsx, ['server/main.ts'], env, listening);
      services.push({ ...service, base: String(service.match[1]) });
    }
  }, 2 * START_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    await Promise.all(services.map(stop));
    await stop(redis);
  });

  it('6 requests to each of two processes: RateLimit-Remaining falls across both, the 11th and 12th answer 429', async () => {
    const headers = { authorization: `Bearer ${await tokens.mint({ sub: '7', role: 'customer' })}` };
    const seen: { status: number; remaining: string | null }[] = [];
    for (let i = 0; i < 12; i++) {
      const service = services[i % 2];
      if (!service) throw new Error('service missing');
      const res = await fetch(`${service.base}/api/v1/products`, { headers });
      seen.push({ status: res.status, remaining: res.headers.get('ratelimit-remaining') });
      expect(res.headers.get('ratelimit-limit')).toBe(String(LIMIT));
      if (res.status === 429) {
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(await res.json()).toMatchObject({ type: '/problems/rate-limited', status: 429 });
      } else {
        await res.arrayBuffer();
      }
    }
    expect(seen).toEqual([
      ...Array.from({ length: LIMIT }, (_, i) => ({ status: 200, remaining: String(LIMIT - 1 - i) })),
      { status: 429, remaining: '0' },
      { status: 429, remaining: '0' },
    ]);
  });

  it('health reports the shared store: {"status":"ok","checks":{"database":"ok","rate_limit_store":"ok"}}', async () => {
    for (const service of services) {
      const res = await fetch(`${service.base}/api/health`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok', checks: { database: 'ok', rate_limit_store: 'ok' } });
    }
  });

  // Last: it stops the Redis server.
  it('when Redis dies, requests still answer at once (fail open), the outage is logged, and health says degraded with 200', async () => {
    await stop(redis);
    const [service] = services;
    if (!service) throw new Error('service missing');
    const started = performance.now();
    const res = await fetch(`${service.base}/api/v1/products`);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(performance.now() - started).toBeLessThan(1000);
    expect(res.headers.get('ratelimit-limit')).toBe(String(LIMIT));
    const health = await fetch(`${service.base}/api/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'degraded', checks: { database: 'ok', rate_limit_store: 'unavailable' } });
    expect(service.output()).toMatch(/rate-limit store unavailable/);
  });
});

describe.skipIf(!onceOnly)('a Redis that cannot be reached: the limiter fails open, health is degraded (docs/api.md#rate-limits)', () => {
  let app: FastifyInstance;
  // Built before the test, under the hook's longer timeout: PGlite takes seconds to start on a busy machine.
  beforeAll(async () => {
    // Nothing listens on a port just released.
    app = await buildApp({
      database: await createTestDatabase(),
      tokens: new TokenService(TEST_JWT),
      rateLimit: { max: 3, timeWindow: '1 minute', redisUrl: `redis://127.0.0.1:${await freePort()}` },
    });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('requests answer 200 at once with RateLimit-* headers; health answers 200 degraded, rate_limit_store unavailable', async () => {
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const res = await app.inject({ method: 'GET', url: '/api/v1/products' });
      expect(performance.now() - started).toBeLessThan(1000);
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('3');
      expect(res.headers['ratelimit-remaining']).toBe('3');
    }
    const health = await app.inject({ method: 'GET', url: '/api/health' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'degraded', checks: { database: 'ok', rate_limit_store: 'unavailable' } });
  });
});
