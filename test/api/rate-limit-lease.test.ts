/**
 * Issue 23 item 1: with REDIS_URL, counting must not add a round trip to every request. The store
 * (server/http/rate-limit-store.ts) takes leases, ranges of a caller's shared count, and counts
 * from them in memory. Two stores on one redis-server stand for two instances. Nothing here uses
 * the database, so it runs once (the pglite project).
 */
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { buildApp } from '../../server/app.ts';
import { RedisLeaseStore } from '../../server/http/rate-limit-store.ts';
import { TEST_JWT } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { freePort } from '../helpers/ports.ts';
import { hasRedisServer, startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { until } from '../helpers/waits.ts';

const onceOnly = process.env.TEST_DB !== 'postgres';
const WINDOW_MS = 60_000;

type Count = { current: number; ttl: number };

function counter(store: RedisLeaseStore, max: number, windowMs = WINDOW_MS): (key: string) => Promise<Count> {
  return (key) =>
    new Promise((resolve, reject) => {
      store.incr(key, (error, result) => (error || !result ? reject(error ?? new Error('no result')) : resolve(result)), windowMs, max);
    });
}

describe.skipIf(!onceOnly || !hasRedisServer)('the Redis lease store: one shared limit without a round trip per request (issue 23)', () => {
  let server: RedisServer;
  let clients: Redis[];
  let admin: Redis;
  let prefix = 0;
  /** Two instances' stores on one Redis, each with a key prefix of this test's own. */
  let stores: [RedisLeaseStore, RedisLeaseStore];

  /** Scripts run since the test began (EVAL and EVALSHA): Redis's own count, one per round trip. */
  async function roundTrips(): Promise<number> {
    const stats = await admin.info('commandstats');
    return [...stats.matchAll(/cmdstat_eval(?:sha)?:calls=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
  }

  beforeAll(async () => {
    server = await startRedisServer();
    clients = [new Redis(server.url), new Redis(server.url)];
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    for (const client of [...(clients ?? []), admin]) client?.disconnect();
    await server?.stop();
  });
  beforeEach(async () => {
    prefix++;
    const [a, b] = clients;
    if (!a || !b) throw new Error('clients missing');
    stores = [new RedisLeaseStore(a, `t${prefix}:`), new RedisLeaseStore(b, `t${prefix}:`)];
    await admin.config('RESETSTAT');
  });

  it('a limit under 40 is counted exactly: two instances in turn count 1, 2, 3 ... one round trip a count', async () => {
    const counts = stores.map((store) => counter(store, 10));
    const seen: number[] = [];
    for (let i = 0; i < 12; i++) seen.push((await counts[i % 2]?.('ip:a'))?.current ?? -1);
    expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    // Past the limit (11 and 12 came back to each instance), neither asks Redis again.
    for (let i = 0; i < 6; i++) expect((await counts[i % 2]?.('ip:a'))?.current).toBeGreaterThan(10);
    expect(await roundTrips()).toBe(12);
  });

  it('a busy caller of a limit of 1000 costs a round trip per lease, and two instances together never let it past the limit', async () => {
    const counts = stores.map((store) => counter(store, 1000));
    let allowed = 0;
    for (let i = 0; i < 1200; i++) {
      const { current, ttl } = (await counts[i % 2]?.('sub:busy')) ?? { current: -1, ttl: -1 };
      if (current <= 1000) allowed++;
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(WINDOW_MS);
    }
    // What an instance holds unspent is lost to the caller: at most a lease (5% of the limit) each.
    expect(allowed).toBeLessThanOrEqual(1000);
    expect(allowed).toBeGreaterThanOrEqual(1000 - 2 * 50);
    const trips = await roundTrips();
    expect(trips).toBeLessThan(1200 / 10);
    // Past the limit no count asks Redis again until the window ends.
    for (let i = 0; i < 100; i++) expect((await counts[i % 2]?.('sub:busy'))?.current).toBeGreaterThan(1000);
    expect(await roundTrips()).toBe(trips);
  });

  it('concurrent counts of one caller wait for one lease rather than each asking: 40 at once are 1 to 40, each once', async () => {
    const count = counter(stores[0], 1000);
    const counts = await Promise.all(Array.from({ length: 40 }, () => count('sub:concurrent')));
    expect(counts.map((c) => c.current).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    // Leases of 1, 2, 4, 8, 16 and 32 hold 63.
    expect(await roundTrips()).toBeLessThanOrEqual(6);
  });

  it('the lease ends with the window: the first count after the key expired starts a new window at 1', async () => {
    const count = counter(stores[0], 1000, 300);
    expect((await count('ip:short')).current).toBe(1);
    expect((await count('ip:short')).current).toBe(2);
    // Polled, not slept: the window ends on Redis's clock, and a loaded machine may be slow.
    const fresh: Count | undefined = await until('a fresh window', async () => {
      const next = await count('ip:short');
      return next.current === 1 && next;
    }, { timeoutMs: 20_000 }).catch(() => undefined);
    expect(fresh?.ttl).toBeGreaterThan(0);
    expect(fresh?.ttl).toBeLessThanOrEqual(300);
  });

  it('an instance keeps a bounded number of leases: a forgotten one costs only what it held, the shared count goes on', async () => {
    const [client] = clients;
    if (!client) throw new Error('client missing');
    const store = new RedisLeaseStore(client, `t${prefix}:`, 2);
    const count = counter(store, 1000);
    expect((await count('ip:a')).current).toBe(1);
    // The second lease is 2 (counts 2 and 3): 3 is held.
    expect((await count('ip:a')).current).toBe(2);
    await count('ip:b');
    await count('ip:c');
    const before = await roundTrips();
    expect((await count('ip:a')).current).toBe(4);
    expect(await roundTrips()).toBe(before + 1);
  });

  it('a Redis that cannot be reached fails the count (the limiter then lets the request through), quickly', async () => {
    const dead = new Redis(`redis://127.0.0.1:${await freePort()}`, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: () => null });
    dead.on('error', () => {});
    try {
      const count = counter(new RedisLeaseStore(dead, 'dead:'), 1000);
      await expect(count('ip:a')).rejects.toThrow();
      await expect(count('ip:a')).rejects.toThrow();
    } finally {
      dead.disconnect();
    }
  });
});

describe.skipIf(!onceOnly || !hasRedisServer)('the service with REDIS_URL counts without a round trip per request (issue 23)', () => {
  let server: RedisServer;
  let admin: Redis;
  let app: FastifyInstance;

  beforeAll(async () => {
    server = await startRedisServer();
    admin = new Redis(server.url);
    app = await buildApp({ database: await createTestDatabase(), tokens: new TokenService(TEST_JWT), rateLimit: { max: 1000, timeWindow: '1 minute', redisUrl: server.url } });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    admin?.disconnect();
    await server?.stop();
  });

  it('200 requests of one caller of a limit of 1000 cost a few round trips to Redis, not 200, and the headers count down by one each', async () => {
    await admin.config('RESETSTAT');
    let last = 1000;
    for (let i = 0; i < 200; i++) {
      // An unknown path: counted like any request, and answered without the database.
      const res = await app.inject({ method: 'GET', url: '/no/such/thing', remoteAddress: '10.23.2.1' });
      expect(res.statusCode).toBe(404);
      expect(Number(res.headers['ratelimit-remaining'])).toBe(last - 1);
      last--;
    }
    const stats = await admin.info('commandstats');
    const trips = [...stats.matchAll(/cmdstat_eval(?:sha)?:calls=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
    expect(trips).toBeGreaterThan(0);
    expect(trips).toBeLessThan(200 / 10);
  });
});
