import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

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
  let down: TestApp;
  beforeAll(async () => {
    down = await createTestApp();
    await down.database.close();
  });
  afterAll(async () => {
    // app.close() closes the database again; both drivers tolerate a second close.
    await down?.close();
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
});

describe('during a graceful shutdown health answers 503 (CONTRACT section 10)', () => {
  // Runs last: it puts the shared app into shutdown.
  it('after startShutdown the database still answers, but health says unavailable', async () => {
    expect((await t.request({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
    t.app.startShutdown();
    const res = await t.request({ method: 'GET', url: '/api/health' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ status: 'unavailable' });
    expect(await t.database.ping()).toBe(true);
  });
});
