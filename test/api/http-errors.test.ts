import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.ts';
import { alter } from '../helpers/bodies.ts';
import { expectProblem } from '../helpers/problems.ts';
import { productInput } from '../helpers/products.ts';
import { userInput } from '../helpers/users.ts';

type Request = InjectOptions & { token?: string };

const t = useTestApp();

const PROBLEM_JSON = /^application\/problem\+json/;

function allowOf(res: LightMyRequestResponse): string[] {
  return String(res.headers.allow ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
}

/** Every key at every depth of a JSON value. */
function keysDeep(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysDeep);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, inner]) => [key, ...keysDeep(inner)]);
  }
  return [];
}

const SQL_TEXT = /\b(select\s.+\sfrom|insert\s+into|update\s+\S+\s+set|delete\s+from|violates\s+\w+\s+constraint|duplicate key value|relation\s+"|syntax error at|pglite|postgres)\b/i;

describe('unknown paths answer 404 not-found', () => {
  it.each(['/api/v1/nope', '/nope', '/api/v1/products/1/nope'])('GET %s answers 404 problem', async (url) => {
    const res = await t.request({ method: 'GET', url });
    const body = expectProblem(res, 404, 'not-found');
    expect(body.instance).toBe(url);
  });
});

describe('a method the path does not support answers 405 with Allow listing the methods (a GET route also allows HEAD)', () => {
  it.each([
    ['PATCH', '/api/v1/products', ['GET', 'HEAD', 'POST']],
    ['DELETE', '/api/v1/products', ['GET', 'HEAD', 'POST']],
    ['PATCH', '/api/products', ['GET', 'HEAD', 'POST']],
    ['POST', '/api/v1/products/1', ['GET', 'HEAD', 'PUT', 'DELETE']],
    ['PATCH', '/api/v1/users', ['GET', 'HEAD', 'POST']],
    ['DELETE', '/api/health', ['GET', 'HEAD']],
    ['POST', '/api/health', ['GET', 'HEAD']],
  ] as const)('%s %s answers 405, Allow includes %j', async (method, url, methods) => {
    const res = await t.request({ method, url, token: t.admin.token });
    expectProblem(res, 405, 'method-not-allowed');
    const allow = allowOf(res);
    expect(allow).toEqual(expect.arrayContaining([...methods]));
    expect(allow).not.toContain(method);
  });
});

describe('a body that is not valid JSON answers 400 malformed-request', () => {
  it.each(['{"sku": ', '{sku: 1}', "{'a':1}", 'nope'])('POST /api/v1/products with %j answers 400', async (payload) => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/products',
      payload,
      headers: { 'content-type': 'application/json' },
      token: t.admin.token,
    });
    expectProblem(res, 400, 'malformed-request');
  });
});

describe('a body with a type the operation does not accept answers 415 unsupported-media-type', () => {
  it.each([
    ['text/plain', 'sku=1'],
    ['application/xml', '<product><sku>1</sku></product>'],
    ['application/x-www-form-urlencoded', 'sku=1&name=x'],
  ])('POST with Content-Type %s answers 415', async (contentType, payload) => {
    const res = await t.request({ method: 'POST', url: '/api/v1/products', payload, headers: { 'content-type': contentType }, token: t.admin.token });
    expectProblem(res, 415, 'unsupported-media-type');
  });

  it('POST with no Content-Type and no body answers 415 with Accept-Post', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/products', token: t.admin.token });
    expectProblem(res, 415, 'unsupported-media-type');
    expect(String(res.headers['accept-post'])).toContain('application/json');
  });

  it('PUT with Content-Type text/plain answers 415', async () => {
    const res = await t.request({ method: 'PUT', url: '/api/v1/users/1', payload: 'x', headers: { 'content-type': 'text/plain' }, token: t.admin.token });
    expectProblem(res, 415, 'unsupported-media-type');
  });
});

describe('an Accept header that excludes JSON answers 406 not-acceptable', () => {
  it.each(['text/html', 'text/plain', 'application/xml', 'application/json;q=0'])('GET /api/v1/products with Accept %s answers 406', async (accept) => {
    const res = await t.request({ method: 'GET', url: '/api/v1/products', headers: { accept } });
    expectProblem(res, 406, 'not-acceptable');
  });

  it.each(['application/json', '*/*', 'application/*', 'application/problem+json', 'text/html, application/json;q=0.5'])(
    'GET /api/v1/products with Accept %s answers 200',
    async (accept) => {
      const res = await t.request({ method: 'GET', url: '/api/v1/products', headers: { accept } });
      expect(res.statusCode).toBe(200);
    },
  );
});

describe('a body over 1 MiB answers 413 payload-too-large', () => {
  it('POST /api/v1/products with a 1 MiB + 1 byte body answers 413', async () => {
    const payload = JSON.stringify(productInput({ description: 'x'.repeat(1024 * 1024) }));
    expect(payload.length).toBeGreaterThan(1024 * 1024);
    const res = await t.request({ method: 'POST', url: '/api/v1/products', payload, headers: { 'content-type': 'application/json' }, token: t.admin.token });
    expectProblem(res, 413, 'payload-too-large');
  });
});

describe('a path parameter of the wrong type answers 400 naming the parameter', () => {
  it.each(['/api/v1/products/abc', '/api/v1/products/1.5', '/api/v1/users/abc'])('GET %s answers 400 with errors [{field: "id"}]', async (url) => {
    const res = await t.request({ method: 'GET', url, token: t.admin.token });
    const body = expectProblem(res, 400, 'malformed-request');
    expect(body.errors).toEqual([{ field: 'id', message: expect.any(String) }]);
  });

  it('an integer id that no resource can have answers 404', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/products/99999999999' });
    expectProblem(res, 404, 'not-found');
  });
});

describe('a URL that cannot be decoded answers 400 malformed-request as a problem', () => {
  it.each(['/api/v1/products/%zz', '/api/v1/products/%', '/api/v1/users/%E0%A4%A'])('GET %s answers a 400 problem', async (url) => {
    const res = await t.request({ method: 'GET', url });
    expectProblem(res, 400, 'malformed-request');
  });

  it('a path parameter longer than the router accepts answers a 4xx problem, not the framework\'s own JSON', async () => {
    const res = await t.request({ method: 'GET', url: `/api/v1/products/${'1'.repeat(150)}` });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
    expect(res.json()).toMatchObject({ type: expect.stringMatching(/^\/problems\//), status: res.statusCode });
  });

  it('a query value with a malformed percent-encoding does not fail the request with a 5xx', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/products?category=%zz' });
    expect(res.statusCode).toBeLessThan(500);
  });
});

describe('a query parameter of the wrong type answers 400; an integer out of range answers 422', () => {
  it.each(['limit=x', 'limit=1.5', 'page=abc'])('GET /api/v1/products?%s answers 400 naming the parameter', async (query) => {
    const res = await t.request({ method: 'GET', url: `/api/v1/products?${query}` });
    const body = expectProblem(res, 400, 'malformed-request');
    const field = query.split('=')[0];
    expect(body.errors).toEqual([{ field, message: expect.any(String) }]);
  });

  it.each(['limit=500', 'limit=0', 'page=0'])('GET /api/v1/products?%s answers 422 naming the parameter', async (query) => {
    const res = await t.request({ method: 'GET', url: `/api/v1/products?${query}` });
    const body = expectProblem(res, 422, 'validation-error');
    const field = query.split('=')[0];
    expect(body.errors).toEqual([{ field, message: expect.any(String) }]);
  });

  it('an unknown query parameter answers 400 unknown-parameter naming it (docs/api.md#unknown-parameters)', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/products?colour=red' });
    const body = expectProblem(res, 400, 'unknown-parameter');
    expect(body.errors).toEqual([{ field: 'colour', message: expect.any(String) }]);
  });
});

describe('a well-formed body whose values fail validation answers 422 with one errors entry per field', () => {
  it('four bad product fields give four entries, one per field', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/products',
      payload: productInput({ sku: '', name: '', category: '', price: -1 }),
      token: t.admin.token,
    });
    const body = expectProblem(res, 422, 'validation-error');
    const errors = body.errors as { field: string; message: string }[];
    expect(errors.map((e) => e.field).sort()).toEqual(['category', 'name', 'price', 'sku']);
    for (const error of errors) expect(error.message).toEqual(expect.any(String));
  });

  it('an unknown body field is refused with 422 naming it', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/products', payload: alter(productInput(), { colour: 'red' }), token: t.admin.token });
    const body = expectProblem(res, 422, 'validation-error');
    expect(body.errors).toEqual([{ field: 'colour', message: expect.any(String) }]);
  });

  it('a body that is JSON but not an object answers 422', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/products', payload: '[1,2]', headers: { 'content-type': 'application/json' }, token: t.admin.token });
    expectProblem(res, 422, 'validation-error');
  });

  it('a bad user email and short password give one entry each', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/users', payload: userInput({ email: 'not-an-email', password: 'short' }) });
    const body = expectProblem(res, 422, 'validation-error');
    const fields = (body.errors as { field: string }[]).map((e) => e.field).sort();
    expect(fields).toEqual(['email', 'password']);
  });
});

describe('every error is a problem: application/problem+json, instance = path, request_id = X-Request-Id, no stack, no SQL', () => {
  let duplicateSku: string;
  beforeAll(async () => {
    const created = await t.request({ method: 'POST', url: '/api/v1/products', payload: productInput(), token: t.admin.token });
    expect(created.statusCode).toBe(201);
    duplicateSku = created.json<{ sku: string }>().sku;
  });

  const cases: [string, () => Request, number][] = [
    ['unknown path', () => ({ method: 'GET', url: '/api/v1/nope?x=1' }), 404],
    ['unknown product', () => ({ method: 'GET', url: '/api/v1/products/999999' }), 404],
    ['wrong method', () => ({ method: 'PATCH', url: '/api/v1/products' }), 405],
    ['malformed JSON', () => ({ method: 'POST', url: '/api/v1/products', payload: '{', headers: { 'content-type': 'application/json' }, token: t.admin.token }), 400],
    ['bad path parameter', () => ({ method: 'GET', url: '/api/v1/products/abc' }), 400],
    ['bad query parameter', () => ({ method: 'GET', url: '/api/v1/products?limit=x' }), 400],
    ['no token', () => ({ method: 'POST', url: '/api/v1/products', payload: productInput() }), 401],
    ['invalid token', () => ({ method: 'GET', url: '/api/v1/users', headers: { authorization: 'Bearer a.b.c' } }), 401],
    ['validation failure', () => ({ method: 'POST', url: '/api/v1/products', payload: productInput({ price: -1 }), token: t.admin.token }), 422],
    ['duplicate sku (unique violation in the database)', () => ({ method: 'POST', url: '/api/v1/products', payload: productInput({ sku: duplicateSku }), token: t.admin.token }), 409],
    ['unsupported media type', () => ({ method: 'POST', url: '/api/v1/products', payload: 'x', headers: { 'content-type': 'text/plain' }, token: t.admin.token }), 415],
    ['not acceptable', () => ({ method: 'GET', url: '/api/v1/products', headers: { accept: 'text/html' } }), 406],
  ];

  it.each(cases)('%s: problem+json with instance, request_id = X-Request-Id header, no stack, no SQL', async (_name, build, status) => {
    const request = build();
    const res = await t.request(request);
    expect(res.statusCode, res.body).toBe(status);
    expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
    const body = res.json<Record<string, unknown>>();
    expect(body).toMatchObject({ type: expect.stringMatching(/^\/problems\/[a-z-]+$/), title: expect.any(String), status, detail: expect.any(String) });
    expect(body.instance).toBe(String(request.url).split('?')[0]);
    const requestId = res.headers['x-request-id'];
    expect(typeof requestId).toBe('string');
    expect(body.request_id).toBe(requestId);
    expect(keysDeep(body)).not.toContain('stack');
    expect(res.body).not.toMatch(SQL_TEXT);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('an incoming X-Request-Id is echoed in the header and the problem', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/products/999999', headers: { 'x-request-id': 'abc-123' } });
    expect(res.statusCode).toBe(404);
    expect(res.headers['x-request-id']).toBe('abc-123');
    expect(res.json()).toMatchObject({ request_id: 'abc-123' });
  });

  it('the problem type of each answer names its own status', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/products/999999' });
    expectProblem(res, 404, 'not-found');
  });
});

describe('GET /problems/<slug> explains each problem type', () => {
  it.each(['validation-error', 'not-found', 'malformed-request', 'unsupported-media-type'])('GET /problems/%s answers an HTML page', async (slug) => {
    const res = await t.request({ method: 'GET', url: `/problems/${slug}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/<html/i);
  });

  it('GET /problems/unknown answers 404 not-found', async () => {
    const res = await t.request({ method: 'GET', url: '/problems/unknown' });
    expectProblem(res, 404, 'not-found');
  });
});

describe('the tRPC endpoint carries the same problem in its error data', () => {
  interface TrpcError {
    error: { message: string; data: { httpStatus: number; problem: Record<string, unknown> } };
  }

  it('products.get of an unknown id answers 404 with data.problem type /problems/not-found', async () => {
    const input = encodeURIComponent(JSON.stringify({ id: 999999 }));
    const res = await t.request({ method: 'GET', url: `/trpc/products.get?input=${input}` });
    expect(res.statusCode).toBe(404);
    const body = res.json<TrpcError>();
    expect(body.error.data.problem).toMatchObject({ type: '/problems/not-found', status: 404, title: expect.any(String), detail: expect.any(String) });
    expect(body.error.data.httpStatus).toBe(404);
    expect(keysDeep(body)).not.toContain('stack');
  });

  it('products.create without a token answers 401 with data.problem status 401', async () => {
    const res = await t.request({ method: 'POST', url: '/trpc/products.create', payload: productInput() });
    expect(res.statusCode).toBe(401);
    const body = res.json<TrpcError>();
    expect(body.error.data.problem).toMatchObject({ type: '/problems/unauthorized', status: 401 });
  });

  it('products.create with invalid values answers 422 with the same errors array as REST', async () => {
    const payload = productInput({ sku: '', price: -1 });
    const res = await t.request({ method: 'POST', url: '/trpc/products.create', payload, token: t.admin.token });
    expect(res.statusCode).toBe(422);
    const problem = res.json<TrpcError>().error.data.problem;
    expect(problem).toMatchObject({ type: '/problems/validation-error', status: 422 });
    const rest = await t.request({ method: 'POST', url: '/api/v1/products', payload, token: t.admin.token });
    expect(problem.errors).toEqual(rest.json<{ errors: unknown }>().errors);
  });

  it('an unknown procedure answers 404', async () => {
    const res = await t.request({ method: 'GET', url: '/trpc/products.nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json<TrpcError>().error.data.problem).toMatchObject({ type: '/problems/not-found' });
  });
});
