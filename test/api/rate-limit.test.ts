import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { TokenService } from '../../server/auth/tokens.ts';
import { buildApp } from '../../server/app.ts';
import { TEST_JWT } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';

const LIMIT = 3;
let app: FastifyInstance;
const tokens = new TokenService(TEST_JWT);

beforeAll(async () => {
  app = await buildApp({ database: await createTestDatabase(), tokens, rateLimit: { max: LIMIT, timeWindow: '1 minute' } });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
});

const bearer = async (sub: string) => ({ authorization: `Bearer ${await tokens.mint({ sub, role: 'customer' })}` });

describe('every response carries RateLimit headers (CONTRACT section 9)', () => {
  it('a success answers RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/products', headers: await bearer('501') });
    expect(res.statusCode).toBe(200);
    expect(res.headers['ratelimit-limit']).toBe(String(LIMIT));
    expect(res.headers['ratelimit-remaining']).toBe(String(LIMIT - 1));
    expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
  });

  it('an error answered by a route carries them too', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/products/999999', headers: await bearer('502') });
    expect(res.statusCode).toBe(404);
    expect(res.headers['ratelimit-limit']).toBe(String(LIMIT));
  });
});

describe('an exceeded limit answers 429 with Retry-After and a problem', () => {
  it('the request past the limit is 429 rate-limited, with Retry-After in seconds', async () => {
    const headers = await bearer('503');
    for (let i = 0; i < LIMIT; i++) expect((await app.inject({ method: 'GET', url: '/api/v1/products', headers })).statusCode).toBe(200);
    const res = await app.inject({ method: 'GET', url: '/api/v1/products', headers });
    expect(res.statusCode).toBe(429);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ type: '/problems/rate-limited', status: 429 });
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.headers['ratelimit-remaining']).toBe('0');
  });

  it('limits count per caller: another token still has its whole allowance', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/products', headers: await bearer('504') });
    expect(res.statusCode).toBe(200);
    expect(res.headers['ratelimit-remaining']).toBe(String(LIMIT - 1));
  });

  it('anonymous callers are counted by client address', async () => {
    const from = (ip: string) => app.inject({ method: 'GET', url: '/api/v1/products', remoteAddress: ip });
    for (let i = 0; i < LIMIT; i++) expect((await from('10.1.1.1')).statusCode).toBe(200);
    expect((await from('10.1.1.1')).statusCode).toBe(429);
    expect((await from('10.2.2.2')).statusCode).toBe(200);
  });
});
