/**
 * The authorization server as the service runs it (`server/main.ts`, its own process): the
 * configuration reaches it (OAUTH_RATE_LIMIT_MAX, PUBLIC_URL), the issuer is derived from the
 * listening address, and with REDIS_URL two instances share one /oauth limit. Nothing here
 * depends on the database, so it runs once (the pglite project).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/ports.ts';
import { serviceEnv, START_TIMEOUT_MS, startService, stopService, type Service } from '../helpers/service-process.ts';

const onceOnly = process.env.TEST_DB !== 'postgres';
const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;
if (onceOnly && !hasRedisServer) {
  console.warn('oauth/processes.test.ts: redis-server is not installed, so the shared /oauth limit is not tested (scripts/ensure-test-tools.sh installs it).');
}

const LIMIT = 4;

const tokenRequest = (base: string) =>
  fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'nobody' }),
  });

describe.skipIf(!onceOnly)('the issuer of a service process', () => {
  const services: Service[] = [];
  afterAll(async () => {
    await Promise.all(services.map(stopService));
  });

  it('is derived from the listening address without PUBLIC_URL, and is PUBLIC_URL when set', async () => {
    const derived = await startService(serviceEnv({ url: 'memory://' }));
    services.push(derived);
    const metadata = (await (await fetch(`${derived.base}/.well-known/oauth-authorization-server`)).json()) as Record<string, string>;
    expect(metadata.issuer).toBe(derived.base);
    expect(metadata.token_endpoint).toBe(`${derived.base}/oauth/token`);

    const configured = await startService(serviceEnv({ url: 'memory://' }, { PUBLIC_URL: 'https://shop.example.com/' }));
    services.push(configured);
    const published = (await (await fetch(`${configured.base}/.well-known/oauth-authorization-server`)).json()) as Record<string, string>;
    expect(published.issuer).toBe('https://shop.example.com');
    expect(published.authorization_endpoint).toBe('https://shop.example.com/oauth/authorize');
  }, 3 * START_TIMEOUT_MS);
});

describe.skipIf(!onceOnly || !hasRedisServer)('two instances on one Redis share the /oauth limit (OAUTH_RATE_LIMIT_MAX)', () => {
  let redis: ChildProcess | undefined;
  const services: Service[] = [];

  beforeAll(async () => {
    const redisPort = await freePort();
    redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 30_000);
      redis?.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    const env = serviceEnv({ url: 'memory://' }, { REDIS_URL: `redis://127.0.0.1:${redisPort}`, OAUTH_RATE_LIMIT_MAX: String(LIMIT) });
    // One after the other: each compiles the service at start.
    for (let i = 0; i < 2; i++) services.push(await startService(env));
  }, 2 * START_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await Promise.all(services.map(stopService));
    if (redis && redis.exitCode === null) {
      const exited = once(redis, 'exit');
      redis.kill('SIGTERM');
      await exited;
    }
  });

  it('requests to either process count against one limit; past it, 429 in OAuth form on both', async () => {
    const seen: { status: number; remaining: string | null }[] = [];
    for (let i = 0; i < LIMIT + 2; i++) {
      const service = services[i % 2];
      if (!service) throw new Error('service missing');
      const response = await tokenRequest(service.base);
      seen.push({ status: response.status, remaining: response.headers.get('ratelimit-remaining') });
      const body = (await response.json()) as Record<string, unknown>;
      if (response.status === 429) {
        expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(body).toMatchObject({ error: 'temporarily_unavailable', type: '/problems/rate-limited' });
      }
    }
    expect(seen).toEqual([
      ...Array.from({ length: LIMIT }, (_, i) => ({ status: 400, remaining: String(LIMIT - 1 - i) })),
      { status: 429, remaining: '0' },
      { status: 429, remaining: '0' },
    ]);
  });
});
