import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { TokenService } from '../../server/auth/tokens.ts';
import { buildApp } from '../../server/app.ts';
import { TEST_JWT, useTestApp } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { expectProblem } from '../helpers/problems.ts';

const SHOP = 'https://shop.example.com';
let app: FastifyInstance;
const plain = useTestApp();

beforeAll(async () => {
  app = await buildApp({ database: await createTestDatabase(), tokens: new TokenService(TEST_JWT), corsOrigins: [SHOP] });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
});

describe('CORS lets configured browser origins call the API', () => {
  it('a preflight from an allowed origin answers 204 with the allowed methods and headers', async () => {
    const res = await app.inject({
      method: 'OPTIONS',
      url: '/api/v1/products',
      headers: { origin: SHOP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(SHOP);
    expect(String(res.headers['access-control-allow-methods'])).toContain('PATCH');
    expect(String(res.headers['access-control-allow-headers']).toLowerCase()).toContain('authorization');
  });

  it('a preflight of the tRPC door is answered too', async () => {
    const res = await app.inject({
      method: 'OPTIONS',
      url: '/trpc/products.list',
      headers: { origin: SHOP, 'access-control-request-method': 'GET' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(SHOP);
  });

  it('a response to an allowed origin exposes ETag, Location and the request id', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/products', headers: { origin: SHOP } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(SHOP);
    const exposed = String(res.headers['access-control-expose-headers']).toLowerCase();
    for (const name of ['etag', 'location', 'link', 'x-request-id']) expect(exposed).toContain(name);
  });

  it('another origin gets no CORS headers', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/products', headers: { origin: 'https://evil.example.com' } });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('without CORS_ORIGINS no origin gets CORS headers, and OPTIONS still answers Allow', async () => {
    const res = await plain.request({ method: 'GET', url: '/api/v1/products', headers: { origin: SHOP } });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const options = await plain.request({ method: 'OPTIONS', url: '/api/v1/products' });
    expect(options.statusCode).toBe(204);
    expect(String(options.headers.allow)).toContain('POST');
  });
});

/**
 * Regression (issue 36 item 14): with CORS on, @fastify/cors answered every OPTIONS that was no
 * preflight 400 `text/plain` "Invalid Preflight Request"; without CORS it is 204 with `Allow`
 * (docs/api.md#http-refusals). A preflight carries both Origin and Access-Control-Request-Method.
 */
describe('with CORS on, an OPTIONS that is no preflight is answered as without CORS (204 with Allow)', () => {
  const NOT_PREFLIGHTS: [string, Record<string, string>][] = [
    ['no Origin nor Access-Control-Request-Method', {}],
    ['an Origin without Access-Control-Request-Method', { origin: SHOP }],
    ['Access-Control-Request-Method without an Origin', { 'access-control-request-method': 'POST' }],
    // Empty values are no values: @fastify/cors answered these 400 `text/plain` too.
    ['an empty Origin with Access-Control-Request-Method', { origin: '', 'access-control-request-method': 'POST' }],
    ['an Origin with an empty Access-Control-Request-Method', { origin: SHOP, 'access-control-request-method': '' }],
  ];

  it.each(NOT_PREFLIGHTS)('%s: 204 with the same Allow as without CORS', async (_name, headers) => {
    // /trpc too: the tRPC adapter's catch-all answered a plain OPTIONS 415 `text/plain`, with CORS and without.
    for (const url of ['/api/v1/products', '/api/v1/orders/1', '/api/health', '/oauth/token', '/trpc/products.list', '/trpc/orders.create']) {
      const res = await app.inject({ method: 'OPTIONS', url, headers });
      const without = await plain.request({ method: 'OPTIONS', url, headers });
      expect(without.statusCode, url).toBe(204);
      expect(res.statusCode, `${url}: ${res.body}`).toBe(204);
      expect(res.headers.allow, url).toBe(without.headers.allow);
      expect(res.headers['access-control-allow-methods'], url).toBeUndefined();
    }
  });

  it('/trpc allows GET (queries) and POST (mutations, batches)', async () => {
    const res = await app.inject({ method: 'OPTIONS', url: '/trpc/orders.get', headers: { origin: SHOP } });
    expect(res.statusCode).toBe(204);
    expect(res.headers.allow).toBe('GET, POST, OPTIONS');
  });

  it('an allowed Origin on it still gets its CORS headers, so a page can read the Allow', async () => {
    const res = await app.inject({ method: 'OPTIONS', url: '/api/v1/products', headers: { origin: SHOP } });
    expect(res.headers['access-control-allow-origin']).toBe(SHOP);
    expect(String(res.headers['access-control-expose-headers']).toLowerCase()).toContain('allow');
  });

  it.each(NOT_PREFLIGHTS)('%s on an unknown path: 404 problem+json, as without CORS', async (_name, headers) => {
    expectProblem(await app.inject({ method: 'OPTIONS', url: '/api/v1/nothing-here', headers }), 404, 'not-found');
  });
});
