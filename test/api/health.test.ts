import { beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, useTestApp } from '../helpers/app.ts';

const t = useTestApp();

describe('GET /api/health answers 200 {"status":"ok","checks":{"database":"ok"}} while the database answers', () => {
  it('answers 200 with status ok and the database check ok', async () => {
    const res = await t.request({ method: 'GET', url: '/api/health' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ status: 'ok', checks: { database: 'ok' } });
  });

  it('is never cached: Cache-Control no-store', async () => {
    const res = await t.request({ method: 'GET', url: '/api/health' });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('needs no token', async () => {
    const res = await t.request({ method: 'GET', url: '/api/health' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['www-authenticate']).toBeUndefined();
  });

  it('is unversioned: /api/v1/health is not a resource (404)', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/health' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});

describe('HEAD /api/health works', () => {
  it('answers 200 with no body', async () => {
    const res = await t.request({ method: 'HEAD', url: '/api/health' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
  });
});

describe('other methods on /api/health answer 405 with Allow GET, HEAD', () => {
  it.each(['POST', 'PUT', 'PATCH', 'DELETE'] as const)('%s answers 405 method-not-allowed with Allow listing GET and HEAD', async (method) => {
    const res = await t.request({ method, url: '/api/health' });
    expect(res.statusCode).toBe(405);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ type: '/problems/method-not-allowed', status: 405, instance: '/api/health' });
    const allow = String(res.headers.allow)
      .split(',')
      .map((m) => m.trim());
    expect(allow).toEqual(expect.arrayContaining(['GET', 'HEAD']));
    expect(allow).not.toContain(method);
  });
});

describe('GET /api/health answers 503 with "status":"unavailable" when the database does not answer', () => {
  // Its afterAll's app.close() closes the database again; both drivers tolerate a second close.
  const down = useTestApp();
  beforeAll(async () => {
    await down.database.close();
  });

  it('answers 503, status unavailable, database check unavailable, no-store', async () => {
    const res = await down.request({ method: 'GET', url: '/api/health' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toMatchObject({ status: 'unavailable', checks: { database: 'unavailable' } });
  });

  it('HEAD answers 503 as well', async () => {
    const res = await down.request({ method: 'HEAD', url: '/api/health' });
    expect(res.statusCode).toBe(503);
  });

  it('GET /api/health/ready answers 503 too, although the start is done', async () => {
    down.app.lifecycle.serving();
    const res = await down.request({ method: 'GET', url: '/api/health/ready' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ status: 'unavailable', checks: { database: 'unavailable' } });
  });
});

describe('GET /api/health/ready: 503 while the service starts, drains or has no database; 200 otherwise (docs/api.md#health-and-readiness)', () => {
  const ready = (app: TestApp, method: 'GET' | 'HEAD' = 'GET') => app.request({ method, url: '/api/health/ready' });

  // Runs first: the shared app has not been told its start is done.
  it('answers 503 with the health body until the start is done (listening, bootstrap), then 200 ok; no-store either way', async () => {
    const starting = await ready(t);
    expect(starting.statusCode).toBe(503);
    expect(starting.headers['cache-control']).toBe('no-store');
    expect(starting.json()).toEqual({ status: 'unavailable', checks: { database: 'ok' } });
    t.app.lifecycle.serving();
    const serving = await ready(t);
    expect(serving.statusCode).toBe(200);
    expect(serving.headers['cache-control']).toBe('no-store');
    expect(serving.json()).toEqual({ status: 'ok', checks: { database: 'ok' } });
  });

  it('HEAD answers the same status with no body; it needs no token', async () => {
    const res = await ready(t, 'HEAD');
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
    expect(res.headers['www-authenticate']).toBeUndefined();
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE'] as const)('%s answers 405 method-not-allowed with Allow GET, HEAD', async (method) => {
    const res = await t.request({ method, url: '/api/health/ready' });
    expect(res.statusCode).toBe(405);
    expect(res.json()).toMatchObject({ type: '/problems/method-not-allowed', status: 405, instance: '/api/health/ready' });
    expect(String(res.headers.allow).split(',').map((m) => m.trim())).toEqual(expect.arrayContaining(['GET', 'HEAD']));
  });
});

describe('from SIGTERM on readiness and health answer 503 at once, while requests are still served (docs/api.md#graceful-stop)', () => {
  // Runs last: it puts the shared app into its drain.
  it('once draining, readiness and health say unavailable, the database still answers, and the API still serves', async () => {
    expect((await t.request({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
    t.app.lifecycle.startDraining();
    const readiness = await t.request({ method: 'GET', url: '/api/health/ready' });
    expect(readiness.statusCode).toBe(503);
    expect(readiness.json()).toEqual({ status: 'unavailable', checks: { database: 'ok' } });
    const health = await t.request({ method: 'GET', url: '/api/health' });
    expect(health.statusCode).toBe(503);
    expect(health.json()).toMatchObject({ status: 'unavailable' });
    expect(await t.database.ping()).toBe(true);
    expect((await t.request({ method: 'GET', url: '/api/v1/products' })).statusCode).toBe(200);
  });
});
