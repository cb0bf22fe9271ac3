/**
 * The same service over a real listening socket and the platform's `fetch`: what `inject`
 * cannot show (the HTTP wire, connection reuse) works too.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.ts';
import { productInput } from '../helpers/products.ts';

let base: string;
let connections = 0;

const t = useTestApp();
beforeAll(async () => {
  t.app.server.on('connection', () => {
    connections += 1;
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});

const adminHeaders = () => ({ authorization: `Bearer ${t.admin.token}`, 'content-type': 'application/json', accept: 'application/json' });

async function createProduct(): Promise<{ location: string; product: { id: number; sku: string } }> {
  const res = await fetch(`${base}/api/v1/products`, { method: 'POST', headers: adminHeaders(), body: JSON.stringify(productInput()) });
  expect(res.status).toBe(201);
  const product = (await res.json()) as { id: number; sku: string };
  return { location: res.headers.get('location') ?? '', product };
}

describe('the service listens on a real socket', () => {
  it('listens on 127.0.0.1 with an ephemeral port', () => {
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('GET /api/health answers 200 ok over HTTP', async () => {
    const res = await fetch(`${base}/api/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', checks: { database: 'ok' } });
  });
});

describe('POST creates (201 + Location), GET reads it, If-None-Match answers 304 (docs/api.md#writes and #reads-lists-and-caching)', () => {
  it('POST /api/v1/products as admin answers 201 with the canonical Location', async () => {
    const { location, product } = await createProduct();
    expect(location).toBe(`/api/v1/products/${product.id}`);
  });

  it('GET of the Location answers 200 with the product, an ETag and Cache-Control public, max-age=60', async () => {
    const { location, product } = await createProduct();
    const res = await fetch(base + location);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('etag')).toMatch(/^"/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=60');
    expect(await res.json()).toMatchObject({ id: product.id, sku: product.sku });
  });

  it('GET with If-None-Match of the current ETag answers 304 with no body and the same ETag', async () => {
    const { location } = await createProduct();
    const first = await fetch(base + location);
    await first.arrayBuffer();
    const etag = first.headers.get('etag') ?? '';
    const again = await fetch(base + location, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
    expect(await again.text()).toBe('');
  });
});

describe('errors are problems on the wire too (docs/api.md#errors)', () => {
  it('an invalid product answers 422 application/problem+json naming the field', async () => {
    const res = await fetch(`${base}/api/v1/products`, { method: 'POST', headers: adminHeaders(), body: JSON.stringify(productInput({ price: -1 })) });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const body = (await res.json()) as { type: string; instance: string; request_id: string; errors: { field: string }[] };
    expect(body.type).toBe('/problems/validation-error');
    expect(body.instance).toBe('/api/v1/products');
    expect(body.errors.map((e) => e.field)).toEqual(['price']);
    expect(body.request_id).toBe(res.headers.get('x-request-id'));
  });

  it('an unknown path answers a 404 problem', async () => {
    const res = await fetch(`${base}/api/v1/nope`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    await res.arrayBuffer();
  });
});

describe('connections are kept alive between requests', () => {
  it('sequential requests after the first reuse its connection: no new connection is opened', async () => {
    const { location } = await createProduct();
    const warmUp = await fetch(base + location);
    await warmUp.arrayBuffer();
    const before = connections;
    for (let i = 0; i < 5; i += 1) {
      const res = await fetch(base + location);
      expect(res.status).toBe(200);
      expect(res.headers.get('connection')).toMatch(/keep-alive/i);
      await res.arrayBuffer();
    }
    expect(connections - before).toBe(0);
  });
});
