/**
 * Rate-limit counters live in the database when no Redis is configured (server/http/rate-limit-store.ts),
 * so every instance on one PostgreSQL database counts against one limit: the store on both
 * databases, then two real service processes on one PostgreSQL database (PGlite's data directory
 * admits one process, so an app on PGlite counts in memory).
 */
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { buildApp } from '../../server/app.ts';
import type { Database } from '../../server/db/client.ts';
import { rateLimitCounters } from '../../server/db/schema.ts';
import { DatabaseCounterStore, purgeExpiredCounters } from '../../server/http/rate-limit-store.ts';
import { TEST_JWT } from '../helpers/app.ts';
import { createTestDatabase, onPostgres } from '../helpers/db.ts';
import { createPostgresDatabase, serviceEnv, START_TIMEOUT_MS, startService, stopService, type Service } from '../helpers/service-process.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the database counter store', () => {
  let database: Database;
  let incr: (key: string, windowMs?: number) => Promise<{ current: number; ttl: number }>;

  beforeAll(async () => {
    database = await createTestDatabase();
    const store = new DatabaseCounterStore(database.db);
    incr = (key, windowMs = 60_000) =>
      new Promise((resolve, reject) => {
        store.incr(key, (error, result) => (error || !result ? reject(error ?? new Error('no result')) : resolve(result)), windowMs);
      });
  });
  afterAll(async () => {
    await database?.close();
  });

  it('counts each key on its own, with the time left in its window', async () => {
    expect((await incr('ip:a')).current).toBe(1);
    expect((await incr('ip:a')).current).toBe(2);
    expect((await incr('ip:b')).current).toBe(1);
    const third = await incr('ip:a');
    expect(third.current).toBe(3);
    expect(third.ttl).toBeGreaterThan(50_000);
    expect(third.ttl).toBeLessThanOrEqual(60_000);
  });

  it('a window that has ended starts again at 1, with a whole window', async () => {
    await incr('ip:short', 50);
    await incr('ip:short', 50);
    await sleep(120);
    const fresh = await incr('ip:short', 60_000);
    expect(fresh).toEqual({ current: 1, ttl: expect.any(Number) });
    expect(fresh.ttl).toBeGreaterThan(50_000);
  });

  it('concurrent counts of one key lose none: 40 at once are 1 to 40', async () => {
    const counts = await Promise.all(Array.from({ length: 40 }, () => incr('sub:concurrent')));
    expect(counts.map((c) => c.current).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  });

  it('past its bound of counts in flight a count fails at once (fail open), and counts again once they settle', async () => {
    const store = new DatabaseCounterStore(database.db, 2);
    const count = () =>
      new Promise<Error | number>((resolve) => {
        store.incr('ip:bounded', (error, result) => resolve(error ?? result?.current ?? -1), 60_000);
      });
    const [one, two, three] = [count(), count(), count()];
    expect(store.pending).toBe(2);
    expect(await three).toBeInstanceOf(Error);
    expect([await one, await two].sort()).toEqual([1, 2]);
    expect(store.pending).toBe(0);
    expect(await count()).toBe(3);
  });

  it('the store answers an error, not a guess, when the plugin names no window', async () => {
    const store = new DatabaseCounterStore(database.db);
    const error = await new Promise((resolve) => store.incr('ip:none', (e) => resolve(e)));
    expect(error).toBeInstanceOf(Error);
  });

  it('the purge deletes the counters whose window has ended, and only those', async () => {
    await incr('ip:ended', 10);
    await incr('ip:running', 60_000);
    await sleep(50);
    expect(await purgeExpiredCounters(database.db)).toBeGreaterThanOrEqual(1);
    const keys = (await database.db.select({ key: rateLimitCounters.key }).from(rateLimitCounters)).map((r) => r.key);
    expect(keys).not.toContain('ip:ended');
    expect(keys).toContain('ip:running');
    expect(keys).toContain('ip:a');
  });

  // PostgreSQL only: on PGlite an open transaction holds the one connection.
  it.skipIf(!onPostgres)('the purge skips an ended counter a count holds, without waiting, and deletes it in a later round', async () => {
    await incr('ip:held', 10);
    await sleep(50);
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`select 1 from rate_limit_counters where key = 'ip:held' for update`);
      await purgeExpiredCounters(database.db);
      const held = await database.db.select({ key: rateLimitCounters.key }).from(rateLimitCounters).where(sql`key = 'ip:held'`);
      expect(held).toHaveLength(1);
    });
    expect(await purgeExpiredCounters(database.db)).toBeGreaterThanOrEqual(1);
    const after = await database.db.select({ key: rateLimitCounters.key }).from(rateLimitCounters).where(sql`key = 'ip:held'`);
    expect(after).toHaveLength(0);
  });

  it('the table is UNLOGGED: no WAL write per counted request', async () => {
    const rows = await database.db.execute(sql`select relpersistence from pg_class where relname = 'rate_limit_counters'`);
    const list = Array.isArray(rows) ? rows : (rows as unknown as { rows: unknown[] }).rows;
    expect(list).toEqual([{ relpersistence: 'u' }]);
  });
});

// PostgreSQL only: on PGlite, whose data directory admits one process, the counts stay in memory.
describe.skipIf(!onPostgres)('when the counters cannot be written, requests pass uncounted (fail open), and counting resumes', () => {
  let database: Database;
  let app: FastifyInstance;
  beforeAll(async () => {
    database = await createTestDatabase();
    app = await buildApp({ database, tokens: new TokenService(TEST_JWT), rateLimit: { max: 5, timeWindow: '1 minute' } });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a failing count answers 200 with nothing counted; once it works again, requests count', async () => {
    expect((await app.inject({ method: 'GET', url: '/api/v1/products' })).headers['ratelimit-remaining']).toBe('4');
    await database.db.execute(sql`alter table rate_limit_counters rename to rate_limit_counters_away`);
    try {
      const res = await app.inject({ method: 'GET', url: '/api/v1/products' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('5');
      expect(res.headers['ratelimit-remaining']).toBe('5');
    } finally {
      await database.db.execute(sql`alter table rate_limit_counters_away rename to rate_limit_counters`);
    }
    const again = await app.inject({ method: 'GET', url: '/api/v1/products' });
    expect(again.statusCode).toBe(200);
    expect(again.headers['ratelimit-remaining']).toBe('3');
  });
});

const LIMIT = 10;
const REQUESTS = 16;

describe.skipIf(!onPostgres)('two service processes on one database share one limit (CONTRACT section 9)', () => {
  const services: Service[] = [];
  let drop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const created = await createPostgresDatabase();
    drop = created.drop;
    const env = serviceEnv({ url: created.url }, { RATE_LIMIT_MAX: String(LIMIT) });
    for (let i = 0; i < 2; i++) services.push(await startService(env));
    // Each process's counters pool connects on its first count: done here, so that no count below
    // waits for a connection past the fail-open bound. These two count against the limit as well.
    for (const [i, service] of services.entries()) {
      const res = await fetch(`${service.base}/api/health`);
      expect(res.headers.get('ratelimit-remaining')).toBe(String(LIMIT - i - 1));
    }
  }, 2 * START_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    await Promise.all(services.map(stopService));
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
