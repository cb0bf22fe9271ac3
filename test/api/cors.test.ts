import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { TokenService } from '../../server/auth/tokens.ts';
import { buildApp } from '../../server/app.ts';
import { createTestApp, TEST_JWT, type TestApp } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';

const SHOP = 'https://shop.example.com';
let app: FastifyInstance;
let plain: TestApp;

beforeAll(async () => {
  app = await buildApp({ database: await createTestDatabase(), tokens: new TokenService(TEST_JWT), corsOrigins: [SHOP] });
  await app.ready();
  plain = await createTestApp();
});
afterAll(async () => {
  await app?.close();
  await plain?.close();
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
