import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { TokenService } from '../../server/auth/tokens.ts';
import { buildApp } from '../../server/app.ts';
import { callsIn } from '../../server/http/rate-limit.ts';
import { TEST_JWT } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';

const LIMIT = 5;
const BODY_LIMIT = 4096;
let app: FastifyInstance;
const tokens = new TokenService(TEST_JWT);

beforeAll(async () => {
  app = await buildApp({ database: await createTestDatabase(), tokens, bodyLimit: BODY_LIMIT, rateLimit: { max: LIMIT, timeWindow: '1 minute' } });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
});

const bearer = async (sub: string) => ({ authorization: `Bearer ${await tokens.mint({ sub, role: 'customer' })}` });

describe('every response carries RateLimit headers (docs/api.md#rate-limits)', () => {
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

// Regression (issue 7 item 15): answers given before the limiter ran had no headers and were
// not counted. Each case comes from its own address, so its count starts at zero.
describe('answers given before any route runs carry the headers and count (issue 7 item 15)', () => {
  const cases: [string, number, InjectOptions][] = [
    ['404 for an unknown path', 404, { method: 'GET', url: '/no/such/thing' }],
    ['404 for an unknown API path', 404, { method: 'GET', url: '/api/v1/nothing-here' }],
    ['401 for a bad token', 401, { method: 'GET', url: '/api/v1/products', headers: { authorization: 'Bearer not.a.token' } }],
    ['401 for a bad token on /trpc', 401, { method: 'GET', url: '/trpc/products.list', headers: { authorization: 'Bearer not.a.token' } }],
    ['406 for an Accept the API cannot answer', 406, { method: 'GET', url: '/api/v1/products', headers: { accept: 'text/html' } }],
    ['400 for a malformed JSON body', 400, { method: 'POST', url: '/api/v1/orders', headers: { 'content-type': 'application/json' }, payload: '{"items": [' }],
    ['413 for a body over the limit', 413, { method: 'POST', url: '/api/v1/orders', headers: { 'content-type': 'application/json' }, payload: `{"x":"${'a'.repeat(BODY_LIMIT)}"}` }],
    ['405 for a method the path lacks', 405, { method: 'DELETE', url: '/api/health' }],
    ['400 for a malformed URL (refused by the router)', 400, { method: 'GET', url: '/api/v1/products/%E0%A4%A' }],
    ['the problem type pages', 200, { method: 'GET', url: '/problems/not-found' }],
    ['the API docs page', 200, { method: 'GET', url: '/api/docs' }],
  ];

  it.each(cases.map(([name, status, request], i) => [name, status, request, `10.9.${i}.1`] as const))(
    '%s (%i): RateLimit-* on the answer, and the next one counts on',
    async (_name, status, request, remoteAddress) => {
      for (const expected of [LIMIT - 1, LIMIT - 2]) {
        const res = await app.inject({ ...request, remoteAddress });
        expect(res.statusCode).toBe(status);
        expect(res.headers['ratelimit-limit']).toBe(String(LIMIT));
        expect(res.headers['ratelimit-remaining']).toBe(String(expected));
        expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
      }
    },
  );

  it('a bad token is counted by client address, and past the limit answers 429, not 401', async () => {
    const from = { remoteAddress: '10.8.0.1', headers: { authorization: 'Bearer not.a.token' } };
    for (let i = 0; i < LIMIT; i++) expect((await app.inject({ method: 'GET', url: '/api/v1/products', ...from })).statusCode).toBe(401);
    const res = await app.inject({ method: 'GET', url: '/api/v1/products', ...from });
    expect(res.statusCode).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    // The same address without the bad token shares the bucket: it is the same client.
    expect((await app.inject({ method: 'GET', url: '/api/v1/products', remoteAddress: '10.8.0.1' })).statusCode).toBe(429);
  });

  it('an unknown path past the limit answers 429 as well', async () => {
    const from = { remoteAddress: '10.8.0.2' };
    for (let i = 0; i < LIMIT; i++) expect((await app.inject({ method: 'GET', url: '/guess/' + i, ...from })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/guess/next', ...from })).statusCode).toBe(429);
  });
});

describe('a /trpc batch counts each call it carries (issue 7 item 15)', () => {
  const batch = (n: number) => {
    const calls = Array.from({ length: n }, (_, i) => i);
    const input = Object.fromEntries(calls.map((i) => [i, {}]));
    return `/trpc/${calls.map(() => 'products.list').join(',')}?batch=1&input=${encodeURIComponent(JSON.stringify(input))}`;
  };

  it('the calls of a batch are the comma-separated procedure names of its path', () => {
    expect(callsIn('/trpc/a,b,c?batch=1&input=%7B%7D')).toBe(3);
    expect(callsIn('/trpc/a%2Cb?batch=1')).toBe(2);
    expect(callsIn('/trpc/products.list')).toBe(1);
    expect(callsIn('/trpc/a,b')).toBe(1);
    expect(callsIn('/api/v1/products?batch=1')).toBe(1);
  });

  it('a batch of 3 calls leaves 3 fewer', async () => {
    const headers = await bearer('601');
    const res = await app.inject({ method: 'GET', url: batch(3), headers });
    expect(res.statusCode).toBe(200);
    expect(res.headers['ratelimit-remaining']).toBe(String(LIMIT - 3));
  });

  it('a batch that does not fit in what remains answers 429, whole', async () => {
    const headers = await bearer('602');
    expect((await app.inject({ method: 'GET', url: batch(LIMIT - 1), headers })).headers['ratelimit-remaining']).toBe('1');
    const res = await app.inject({ method: 'GET', url: batch(2), headers });
    expect(res.statusCode).toBe(429);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['ratelimit-remaining']).toBe('0');
  });

  it('a batch larger than the whole limit is refused at once', async () => {
    const res = await app.inject({ method: 'GET', url: batch(LIMIT * 20), headers: await bearer('603') });
    expect(res.statusCode).toBe(429);
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
