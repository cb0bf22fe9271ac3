/**
 * Regressions from the outside probe (issue 7): each `describe` names what broke. The socket
 * tests speak raw HTTP, because what they pin happens before Fastify sees a request.
 */
import { once } from 'node:events';
import { connect } from 'node:net';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { MAX_TRPC_BATCH } from '../../server/app.ts';
import { MAX_JSON_DEPTH } from '../../server/http/json-body.ts';
import { PATCH_LIMITS } from '../../server/modules/orders/orders.patch.ts';
import { createTestApp, type TestApp, useTestApp } from '../helpers/app.ts';
import { createOrder, JSON_PATCH, MERGE_PATCH, ORDERS, patchOrder, readOrder, type OrderBody } from '../helpers/orders.ts';
import { createProduct, productInput } from '../helpers/products.ts';
import { expectProblem } from '../helpers/problems.ts';
import { settlesWithin } from '../helpers/waits.ts';

const t = useTestApp();

const json = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });

/** An admin's order of one item, with the body and ETag it was read with. */
async function newOrder(): Promise<{ id: number; etag: string; body: string; order: OrderBody }> {
  const product = await createProduct(t, { stock: 1000 });
  const { id } = await createOrder(t, { customer_id: t.admin.id, items: [{ product_id: product.id, quantity: 1 }], address: '1 Main St' }, t.admin.token);
  const { res, order, etag } = await readOrder(t, id);
  return { id, etag, body: res.body, order };
}

/** PATCH with a body sent exactly as written (documents too deep to build as values). */
const patchRaw = (id: number, headers: Record<string, string>, payload: string) =>
  t.request({ method: 'PATCH', url: `${ORDERS}/${id}`, token: t.admin.token, headers, payload });

const nested = (depth: number, leaf: string) => '['.repeat(depth) + leaf + ']'.repeat(depth);
const nestedObject = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe('a JSON Patch cannot make the service do unbounded work (copy doubling)', () => {
  it('repeated copy of /items is refused with 422 at once and changes nothing', async () => {
    const order = await newOrder();
    const bomb = Array.from({ length: 40 }, () => ({ op: 'copy', from: '/items', path: '/items/-' }));
    const started = performance.now();
    const res = await patchOrder(t, order.id, bomb, t.admin.token, JSON_PATCH);
    expect(performance.now() - started).toBeLessThan(1000);
    expectProblem(res, 422, 'validation-error');
    expect((await readOrder(t, order.id)).res.body).toBe(order.body);
  });

  it('copying a large string again and again is stopped by the size bound', async () => {
    const order = await newOrder();
    const ops = [
      { op: 'replace', path: '/address', value: 'x'.repeat(60_000) },
      ...Array.from({ length: 20 }, (_, i) => ({ op: 'copy', from: '/address', path: `/k${i}` })),
    ];
    const res = await patchOrder(t, order.id, ops, t.admin.token, JSON_PATCH);
    expectProblem(res, 422, 'validation-error');
  });

  it(`more than ${PATCH_LIMITS.operations} operations are refused with 422`, async () => {
    const order = await newOrder();
    const ops = Array.from({ length: PATCH_LIMITS.operations + 1 }, () => ({ op: 'test', path: '/status', value: 'draft' }));
    const res = await patchOrder(t, order.id, ops, t.admin.token, JSON_PATCH);
    expectProblem(res, 422, 'validation-error', { fields: ['(body)'] });
  });

  it(`a patch that leaves more than ${PATCH_LIMITS.items} items is refused with 422 naming items`, async () => {
    const order = await newOrder();
    const item = order.order.items[0];
    const ops = Array.from({ length: PATCH_LIMITS.items }, () => ({ op: 'add', path: '/items/-', value: item }));
    const res = await patchOrder(t, order.id, ops, t.admin.token, JSON_PATCH);
    expectProblem(res, 422, 'validation-error', { fields: ['items'] });
  });
});

describe('deep nesting is refused when the body is parsed (400), never a stack overflow', () => {
  it('a merge patch nested 7,000 levels answers 400', async () => {
    const order = await newOrder();
    const res = await patchRaw(order.id, MERGE_PATCH, `{"address":${nestedObject(7000)}}`);
    expectProblem(res, 400, 'malformed-request');
  });

  it('a JSON Patch value nested 10,000 levels answers 400', async () => {
    const order = await newOrder();
    const res = await patchRaw(order.id, JSON_PATCH, `[{"op":"add","path":"/x","value":${nested(10_000, '1')}}]`);
    expectProblem(res, 400, 'malformed-request');
  });

  it('every JSON body is bounded: POST /products and /trpc too', async () => {
    const rest = await t.request({ method: 'POST', url: '/api/v1/products', headers: json(t.admin.token), payload: `{"name":${nested(5000, '1')}}` });
    expectProblem(rest, 400, 'malformed-request');
    const trpc = await t.request({ method: 'POST', url: '/trpc/products.create', headers: json(t.admin.token), payload: `{"name":${nested(5000, '1')}}` });
    expect(trpc.statusCode).toBe(400);
  });

  it(`${MAX_JSON_DEPTH} levels are still accepted as JSON (then validated as usual)`, async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/products',
      headers: json(t.admin.token),
      payload: `{"name":${nested(MAX_JSON_DEPTH - 1, '1')}}`,
    });
    expectProblem(res, 422, 'validation-error');
  });
});

describe('the typed client batches: the server takes a batch of up to 100 calls', () => {
  it(`a /trpc batch of ${MAX_TRPC_BATCH} product reads answers every call`, async () => {
    const product = await t.request({ method: 'POST', url: '/api/v1/products', token: t.admin.token, payload: productInput() });
    const id = product.json<{ id: number }>().id;
    const names = Array.from({ length: MAX_TRPC_BATCH }, () => 'products.get').join(',');
    const input = Object.fromEntries(Array.from({ length: MAX_TRPC_BATCH }, (_, i) => [i, { id }]));
    const res = await t.request({ method: 'GET', url: `/trpc/${names}?batch=1&input=${encodeURIComponent(JSON.stringify(input))}` });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const results = res.json<{ result?: { data: { id: number } } }[]>();
    expect(results).toHaveLength(MAX_TRPC_BATCH);
    expect(results.every((r) => r.result?.data.id === id)).toBe(true);
  });

  it('a larger batch is refused with a 4xx, not answered in part', async () => {
    const count = MAX_TRPC_BATCH + 1;
    const names = Array.from({ length: count }, () => 'products.get').join(',');
    const input = Object.fromEntries(Array.from({ length: count }, (_, i) => [i, { id: 1 }]));
    const res = await t.request({ method: 'GET', url: `/trpc/${names}?batch=1&input=${encodeURIComponent(JSON.stringify(input))}` });
    expect(res.statusCode).toBe(400);
  });
});

describe('/trpc errors carry the headers their problem carries, as REST does', () => {
  it('a write without a token answers 401 with WWW-Authenticate and Cache-Control: no-store', async () => {
    const res = await t.request({ method: 'POST', url: '/trpc/products.create', headers: { 'content-type': 'application/json' }, payload: productInput() });
    expect(res.statusCode).toBe(401);
    expect(String(res.headers['www-authenticate'])).toMatch(/^Bearer /);
    expect(res.headers['cache-control']).toBe('no-store');
  });
});

describe('unknown methods on known paths answer 405 with Allow (RFC 9110 15.5.6)', () => {
  for (const method of ['TRACE', 'PROPFIND', 'QUERY', 'MKCOL'] as const) {
    it(`${method} /api/v1/orders answers 405 + Allow`, async () => {
      const res = await t.app.inject({ method, url: '/api/v1/orders' });
      const problem = expectProblem(res, 405, 'method-not-allowed');
      expect(problem.detail).toContain(method);
      expect(String(res.headers.allow)).toContain('GET');
      expect(String(res.headers.allow)).toContain('POST');
    });
  }

  it('TRACE /api/health answers 405 with Allow: GET, HEAD, OPTIONS', async () => {
    const res = await t.app.inject({ method: 'TRACE', url: '/api/health' });
    expectProblem(res, 405, 'method-not-allowed');
    expect(res.headers.allow).toBe('GET, HEAD, OPTIONS');
  });

  it('TRACE on a path that does not exist answers 404', async () => {
    expectProblem(await t.app.inject({ method: 'TRACE', url: '/api/v1/nothing-here' }), 404, 'not-found');
  });
});

describe('numbers too large to name anything', () => {
  it('a path id of 16+ digits answers 404, not 400', async () => {
    for (const id of ['1234567890123456', '99999999999999999999', '9'.repeat(90)]) {
      expectProblem(await t.request({ method: 'GET', url: `/api/v1/orders/${id}`, token: t.admin.token }), 404, 'not-found');
      expectProblem(await t.request({ method: 'GET', url: `/api/v1/products/${id}` }), 404, 'not-found');
    }
  });

  it('page=99999999999999999999 is well-formed but out of range: 422 naming page', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/orders?page=99999999999999999999', token: t.admin.token });
    expectProblem(res, 422, 'validation-error', { fields: ['page'] });
  });

  it('a non-integer page stays 400', async () => {
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/orders?page=1.5', token: t.admin.token }), 400, 'malformed-request', { fields: ['page'] });
  });
});

describe('an action without a body accepts an empty one', () => {
  it('POST /orders/{id}/confirm with Content-Type: application/json and no body answers 200', async () => {
    const order = await newOrder();
    const res = await t.request({ method: 'POST', url: `/api/v1/orders/${order.id}/confirm`, headers: json(t.admin.token), payload: '' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<{ status: string }>().status).toBe('confirmed');
  });

  it('an operation that takes a body still refuses an empty one with 400', async () => {
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/products', headers: json(t.admin.token), payload: '' }), 400, 'malformed-request');
  });
});

describe('security headers on every answer (OWASP REST security)', () => {
  it('JSON, problems and 404s carry nosniff and a CSP that forbids framing', async () => {
    for (const res of [
      await t.request({ method: 'GET', url: '/api/v1/products' }),
      await t.request({ method: 'GET', url: '/api/v1/orders' }),
      await t.request({ method: 'GET', url: '/no/such/path' }),
      await t.request({ method: 'GET', url: '/problems/not-found' }),
    ]) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(String(res.headers['content-security-policy'])).toContain("frame-ancestors 'none'");
    }
  });

  it('the docs page has its own policy: our origin only, no framing', async () => {
    const res = await t.request({ method: 'GET', url: '/api/docs' });
    expect(res.statusCode).toBe(200);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });
});

/** Writes raw bytes to the listening service and reads until it closes the connection. */
function rawExchange(port: number, chunks: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => (received += data));
    socket.on('end', () => resolve(received));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy());
    for (const chunk of chunks) socket.write(chunk);
  });
}

function parseRaw(raw: string): { status: number; headers: string; body: string } {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body };
}

describe("Node's own refusals are problems too (before Fastify runs)", () => {
  let port: number;
  const listening = useTestApp();
  beforeAll(async () => {
    await listening.app.listen({ port: 0, host: '127.0.0.1' });
    const address = listening.app.server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });

  it('a 20 KB header answers 431 problem+json', async () => {
    const raw = await rawExchange(port, [`GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`]);
    const res = parseRaw(raw);
    expect(res.status).toBe(431);
    expect(res.headers).toContain('content-type: application/problem+json');
    expect(JSON.parse(res.body)).toMatchObject({ type: '/problems/request-header-fields-too-large', status: 431 });
  });

  it('a request line that is not HTTP answers 400 problem+json', async () => {
    const res = parseRaw(await rawExchange(port, ['THIS IS NOT HTTP\r\n\r\n']));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ type: '/problems/malformed-request', status: 400 });
  });
});

describe('during shutdown, requests on kept-alive sockets get a 503 problem', () => {
  // Built in a hook, not in the test's own 60 s (a database can take a minute to start on a loaded
  // machine); the test closes it.
  let closingApp: TestApp;
  beforeAll(async () => {
    closingApp = await createTestApp();
    await closingApp.app.listen({ port: 0, host: '127.0.0.1' });
  });

  it('a pipelined request that arrives while the app closes answers 503 problem+json with Retry-After', async () => {
    const address = closingApp.app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const body = JSON.stringify(productInput());
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => (received += data));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
    // The first request is in flight (its body half sent) when the app starts closing.
    const arrived = once(closingApp.app.server, 'request');
    socket.write(
      `POST /api/v1/products HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${closingApp.admin.token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
    );
    await arrived;
    const closing = closingApp.close();
    // The listener is closed: the app is closing, the kept-alive socket still open.
    await vi.waitFor(() => expect(closingApp.app.server.listening).toBe(false), { timeout: 20_000, interval: 20 });
    socket.write(`${body.slice(10)}GET /api/v1/products HTTP/1.1\r\nHost: x\r\n\r\n`);
    await settlesWithin(closed, 5000);
    socket.destroy();
    await closing;
    const responses = received.split(/(?=HTTP\/1\.1 )/);
    expect(responses[0]).toMatch(/^HTTP\/1\.1 201/);
    const second = parseRaw(responses[1] ?? '');
    expect(second.status).toBe(503);
    expect(second.headers).toContain('content-type: application/problem+json');
    expect(second.headers).toContain('retry-after:');
    expect(JSON.parse(second.body)).toMatchObject({ type: '/problems/service-unavailable', status: 503 });
  });
});
