/**
 * Where counts live (docs/api.md#rate-limits, since issue 23): in each process's memory without
 * Redis, so every instance counts on its own (N instances give a caller up to N x the limit, as
 * docs/api.md#rate-limits says); in Redis with REDIS_URL, one limit shared by every instance. The
 * second part runs two real service processes on one PostgreSQL database and one redis-server.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { buildApp } from '../../server/app.ts';
import { TEST_JWT } from '../helpers/app.ts';
import { createTestDatabase, onPostgres } from '../helpers/db.ts';
import { hasRedisServer, startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { createPostgresDatabase, serviceEnv, START_TIMEOUT_MS, startService, stopService, type Service } from '../helpers/service-process.ts';

const LIMIT = 10;
const REQUESTS = 16;

describe('without Redis each instance counts in its own memory: two instances give a caller the limit at each', () => {
  const apps: FastifyInstance[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const app = await buildApp({ database: await createTestDatabase(), tokens: new TokenService(TEST_JWT), rateLimit: { max: LIMIT, timeWindow: '1 minute' } });
      await app.ready();
      apps.push(app);
    }
    // Two PGlite databases start one after the other: past a minute on a loaded machine.
  }, 180_000);
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });

  it(`${LIMIT} requests from one address to each pass, each instance counting down from ${LIMIT}; the next to either is 429`, async () => {
    for (let i = 0; i < LIMIT; i++) {
      for (const app of apps) {
        const res = await app.inject({ method: 'GET', url: '/no/such/thing', remoteAddress: '10.23.3.1' });
        expect(res.statusCode).toBe(404);
        expect(res.headers['ratelimit-remaining']).toBe(String(LIMIT - 1 - i));
      }
    }
    for (const app of apps) expect((await app.inject({ method: 'GET', url: '/no/such/thing', remoteAddress: '10.23.3.1' })).statusCode).toBe(429);
  });
});

// PostgreSQL only: service processes on one database (PGlite's data directory admits one process).
describe.skipIf(!onPostgres || !hasRedisServer)('two service processes on one database and one Redis share one limit (docs/api.md#rate-limits)', () => {
  const services: Service[] = [];
  let redis: RedisServer | undefined;
  let drop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    redis = await startRedisServer();
    const created = await createPostgresDatabase();
    drop = created.drop;
    const env = serviceEnv({ url: created.url }, { RATE_LIMIT_MAX: String(LIMIT), REDIS_URL: redis.url });
    // One after the other: the machine may be small, and each compiles the service at start.
    for (let i = 0; i < 2; i++) services.push(await startService(env));
    // These two count against the limit as well.
    for (const [i, service] of services.entries()) {
      const res = await fetch(`${service.base}/api/health`);
      expect(res.headers.get('ratelimit-remaining')).toBe(String(LIMIT - i - 1));
    }
  }, 2 * START_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    await Promise.all(services.map(stopService));
    await redis?.stop();
    await drop?.();
  });

  it(`after one request to each, ${REQUESTS} concurrent requests from one address, half to each process: ${LIMIT - 2} pass, each with its own remaining count, the rest are 429`, async () => {
    const answers = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, i) => {
        const service = services[i % 2];
        if (!service) throw new Error('services missing');
        const res = await fetch(`${service.base}/api/v1/products`);
        await res.arrayBuffer();
        return { status: res.status, remaining: res.headers.get('ratelimit-remaining'), limit: res.headers.get('ratelimit-limit') };
      }),
    );
    const passed = answers.filter((a) => a.status === 200);
    expect(passed).toHaveLength(LIMIT - 2);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(REQUESTS - LIMIT + 2);
    expect(passed.map((a) => Number(a.remaining)).sort((a, b) => a - b)).toEqual(Array.from({ length: LIMIT - 2 }, (_, i) => i));
    expect(new Set(answers.map((a) => a.limit))).toEqual(new Set([String(LIMIT)]));
  }, 30_000);
});
