/**
 * docs/api.md#idempotency: `Idempotency-Key` on every creating POST (a POST answering 201 or 202)
 * and on the actions that declare they take it (rotate-secret), through REST, /trpc and
 * createCaller. The matrix runs over the operations the route table says honour a key, each with its case from its module's file in test/operations/, so an operation
 * added later is covered (or this file names it as missing).
 */
import { hash } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { buildApp } from '../../server/app.ts';
import type { Caller } from '../../server/auth/tokens.ts';
import type { Db } from '../../server/db/client.ts';
import { loadConfig } from '../../server/config.ts';
import { openDatabase } from '../../server/db/client.ts';
import { idempotencyKeys } from '../../server/db/schema.ts';
import { restRoutes } from '../../server/http/rest-routes.ts';
import { canonicalJson } from '../../server/lib/etag.ts';
import { appRouter } from '../../server/router.ts';
import { createContextInner, defaultIdempotencySettings } from '../../server/trpc/context.ts';
import { fingerprintOf, honoursIdempotencyKey, isCreatingOperation, purgeExpiredKeys } from '../../server/trpc/idempotency.ts';
import { createCallerFactory } from '../../server/trpc/trpc.ts';
import { createTestApp, createUserRow, TEST_JWT, type TestUser } from '../helpers/app.ts';
import { copyTemplateDatabase, createTestDatabase, onPostgres } from '../helpers/db.ts';
import { loadOperations, type PostCall } from '../helpers/operations.ts';
import { operationsContext, type Actor } from '../helpers/operations-context.ts';
import { expectProblem } from '../helpers/problems.ts';
import { productInput } from '../helpers/products.ts';
import { userInput } from '../helpers/users.ts';
import { untilLockAwaited } from '../helpers/waits.ts';

const creating = restRoutes(appRouter).filter((route) => honoursIdempotencyKey({ openapi: { method: route.method }, rest: route.rest }));

// One app, loaded before the tests are collected: each creating operation's case is built around it.
const t = await createTestApp();
afterAll(async () => t.close());
const ctx = operationsContext(t);
const { api } = ctx;
const { idempotency: operations } = await loadOperations(ctx);

let keySequence = 0;
const newKey = () => `key-${++keySequence}-${Math.random().toString(36).slice(2)}`;

function post(call: PostCall, actor: Actor, key?: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: call.url,
    payload: call.body,
    ...(actor.remoteAddress ? { remoteAddress: actor.remoteAddress } : {}),
    headers: { ...(actor.token ? { authorization: `Bearer ${actor.token}` } : {}), ...(key === undefined ? {} : { 'idempotency-key': key }) },
  });
}

/** What the answer created: its `id` (an OAuth client's is `client_id`). */
const idOf = (res: LightMyRequestResponse): number | string | undefined => {
  const body = res.json<{ id?: number; client_id?: string }>();
  return body.id ?? body.client_id;
};

describe('which operations honour Idempotency-Key', () => {
  it('every POST answering 201 or 202 is a creating operation, and each, like every action that takes a key, has a case in this matrix', () => {
    const keyed = creating.map((r) => r.procedurePath);
    const creatingPaths = restRoutes(appRouter).filter((route) => isCreatingOperation({ openapi: { method: route.method }, rest: route.rest })).map((r) => r.procedurePath);
    expect(keyed).toEqual(expect.arrayContaining(creatingPaths));
    expect(creating.map((r) => r.procedurePath).sort()).toEqual(expect.arrayContaining(['orders.create', 'products.create', 'users.create', 'webhooks.rotateSecret']));
    expect(creating.filter((r) => !(r.procedurePath in operations)).map((r) => r.procedurePath)).toEqual([]);
  });

  it('every case of test/operations/ names a creating operation (no stale case left behind)', () => {
    const paths = new Set(creating.map((r) => r.procedurePath));
    expect(Object.keys(operations).filter((path) => !paths.has(path))).toEqual([]);
  });
});

describe.each(creating.map((route) => [route.procedurePath, route] as const))('%s with Idempotency-Key (docs/api.md#idempotency)', (path, route) => {
  const operation = operations[path];
  if (!operation) return;
  const successStatus = route.rest.status ?? 200;

  it(`the first request runs (${successStatus}); the same key and request replays it: 200, same body, Location and ETag, Idempotent-Replayed: true`, async () => {
    const [actor] = await operation.actors();
    const { call } = await operation.scenario(actor);
    const key = newKey();
    const first = await post(call, actor, key);
    expect(first.statusCode, first.body).toBe(successStatus);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post(call, actor, key);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const shownOnce = route.rest.notReplayed ?? [];
    if (shownOnce.length === 0) {
      expect(again.body).toBe(first.body);
      expect(again.headers.etag).toBe(first.headers.etag);
    } else {
      // A secret is shown once: the replay is the first answer without it (docs/api.md#idempotency).
      const withoutShownOnce = Object.fromEntries(Object.entries(first.json<Record<string, unknown>>()).filter(([field]) => !shownOnce.includes(field)));
      expect(again.json()).toEqual(withoutShownOnce);
    }
    expect(idOf(again)).toBe(idOf(first));
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['cache-control']).toBe('no-store');
  });

  it('the same key with another request is 422 idempotency-key-mismatch, and creates nothing', async () => {
    const [actor] = await operation.actors();
    const { call, other } = await operation.scenario(actor);
    const key = newKey();
    expect((await post(call, actor, key)).statusCode).toBe(successStatus);
    expectProblem(await post(other, actor, key), 422, 'idempotency-key-mismatch');
    // The other request was not run: without the key it still can be.
    expect((await post(other, actor)).statusCode).toBe(successStatus);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['with a space', 'a key'],
    ['with a control character', 'key\u0001x'],
    ['with a non-ASCII character', 'clé'],
  ])('a key %s is 400 malformed-request naming the header', async (_name, key) => {
    const [actor] = await operation.actors();
    const { call } = await operation.scenario(actor);
    const res = await post(call, actor, key);
    if (res.statusCode === 400 && res.json<{ type: string }>().type === '/problems/malformed-request' && res.json<{ errors?: unknown }>().errors === undefined) {
      // Node itself refuses a header value with a control character before any route runs.
      return;
    }
    expectProblem(res, 400, 'malformed-request', { fields: ['Idempotency-Key'] });
  });

  it('255 visible ASCII characters are a valid key', async () => {
    const [actor] = await operation.actors();
    const { call } = await operation.scenario(actor);
    const key = `~${newKey()}`.padEnd(255, '!');
    expect((await post(call, actor, key)).statusCode).toBe(successStatus);
    expect((await post(call, actor, key)).statusCode).toBe(200);
  });

  it('without a key every request is a new operation (never a replay)', async () => {
    const [actor] = await operation.actors();
    const { call } = await operation.scenario(actor);
    const first = await post(call, actor);
    expect(first.statusCode, first.body).toBe(successStatus);
    const second = await post(call, actor);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    // A second creation, or a refusal of it (a second payment of one order): never the first's answer.
    // (A retry of one delivery runs again and answers that delivery: not-replayed is the proof there.)
    if (operation.actsOnExisting) expect(second.statusCode).toBe(successStatus);
    else if (second.statusCode === successStatus) expect(idOf(second)).not.toBe(idOf(first));
    else expect(second.statusCode).toBeGreaterThanOrEqual(400);
  });

  it("equal keys of two callers do not collide: each runs its own operation", async () => {
    const [alice, bob] = await operation.actors();
    const key = newKey();
    const a = await post((await operation.scenario(alice)).call, alice, key);
    const b = await post((await operation.scenario(bob)).call, bob, key);
    expect(a.statusCode, a.body).toBe(successStatus);
    expect(b.statusCode, b.body).toBe(successStatus);
    expect(idOf(b)).not.toBe(idOf(a));
  });

  it('a failed first attempt leaves the key free: a corrected request with it runs', async () => {
    const [actor] = await operation.actors();
    const { call, failing } = await operation.scenario(actor);
    const key = newKey();
    const failed = await post(failing, actor, key);
    expect(failed.statusCode, failed.body).toBeGreaterThanOrEqual(400);
    expect(failed.statusCode).toBeLessThan(500);
    const res = await post(call, actor, key);
    expect(res.statusCode, res.body).toBe(successStatus);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  });

  it('an expired key is free again: the request runs as a new operation', async () => {
    const [actor] = await operation.actors();
    const first = await operation.scenario(actor);
    const key = newKey();
    expect((await post(first.call, actor, key)).statusCode).toBe(successStatus);
    await t.db.execute(sql`update ${idempotencyKeys} set expires_at = now() - interval '1 second' where key = ${key}`);
    // Another request even: the expired key no longer binds it.
    const res = await post(first.other, actor, key);
    expect(res.statusCode, res.body).toBe(successStatus);
    expect((await post(first.other, actor, key)).statusCode).toBe(200);
  });
});

describe('the key is kept for IDEMPOTENCY_TTL_HOURS, then purged', () => {
  it('a new key expires 24 hours after its first use by default', async () => {
    const key = newKey();
    const res = await post({ url: api('/products'), body: productInput() }, { token: t.admin.token }, key);
    expect(res.statusCode).toBe(201);
    const [row] = await t.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, key));
    expect(row).toBeDefined();
    expect(((row?.expiresAt.getTime() ?? 0) - (row?.createdAt.getTime() ?? 0)) / 3_600_000).toBeCloseTo(24, 3);
  });

  it('IDEMPOTENCY_TTL_HOURS is 24 unless set, 24 to 48 accepted, anything else refused naming it', () => {
    const env = { DATABASE_URL: 'memory://', DATA_DIR: '.unused' };
    expect(loadConfig(env).idempotencyTtlHours).toBe(24);
    expect(loadConfig({ ...env, IDEMPOTENCY_TTL_HOURS: '48' }).idempotencyTtlHours).toBe(48);
    for (const bad of ['23', '49', '24.5', 'day']) {
      expect(() => loadConfig({ ...env, IDEMPOTENCY_TTL_HOURS: bad }), bad).toThrow(/IDEMPOTENCY_TTL_HOURS/);
    }
  });

  it('the kept fingerprint is an HMAC: a registration key never stores a plain hash of the password', async () => {
    const key = newKey();
    const body = userInput();
    const res = await t.app.inject({ method: 'POST', url: api('/users'), payload: body, headers: { 'idempotency-key': key } });
    expect(res.statusCode, res.body).toBe(201);
    const [row] = await t.db.select({ fingerprint: idempotencyKeys.fingerprint }).from(idempotencyKeys).where(eq(idempotencyKeys.key, key));
    expect(row?.fingerprint).toBe(fingerprintOf(defaultIdempotencySettings, body));
    expect(row?.fingerprint).not.toBe(hash('sha256', canonicalJson(body), 'base64url'));
    expect(fingerprintOf({ fingerprintKey: 'another-deployment' }, body)).not.toBe(row?.fingerprint);
  });

  it('a key kept 48 hours when the setting says so', async () => {
    const caller = (await t.tokens.authenticate(`Bearer ${t.admin.token}`)) as Caller;
    const key = newKey();
    const ctx = createContextInner({ db: t.db, caller, idempotencyKey: key, idempotency: { ...defaultIdempotencySettings, ttlHours: 48 } });
    await createCallerFactory(appRouter)(ctx).products.create(productInput());
    const [row] = await t.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, key));
    expect(((row?.expiresAt.getTime() ?? 0) - (row?.createdAt.getTime() ?? 0)) / 3_600_000).toBeCloseTo(48, 3);
  });

  it('purgeExpiredKeys deletes expired keys only, in batches', async () => {
    const live = newKey();
    expect((await post({ url: api('/products'), body: productInput() }, { token: t.admin.token }, live)).statusCode).toBe(201);
    const expired = Array.from({ length: 1205 }, (_, i) => ({
      scope: 'user:purge-test',
      key: `expired-${i}`,
      operation: 'products.create',
      fingerprint: 'x',
      responseStatus: 201,
      responseBody: '{}',
      expiresAt: new Date(Date.now() - 60_000),
    }));
    await t.db.insert(idempotencyKeys).values(expired);
    expect(await purgeExpiredKeys(t.db)).toBeGreaterThanOrEqual(1205);
    const left = await t.db.select({ key: idempotencyKeys.key }).from(idempotencyKeys);
    expect(left.map((r) => r.key)).toContain(live);
    expect(left.some((r) => r.key.startsWith('expired-'))).toBe(false);
  });
});

describe('the purge job', () => {
  // A database of its own (started inside the test: up to a minute on a loaded machine).
  it('the app purges expired keys in the background, and stops the job when it closes', { timeout: 180_000 }, async () => {
    const database = await createTestDatabase();
    const app = await buildApp({ database, tokens: new TokenService(TEST_JWT), idempotency: { purgeIntervalMs: 20 } });
    try {
      await app.ready();
      await database.db.insert(idempotencyKeys).values({
        scope: 'user:purge-job',
        key: 'expired',
        operation: 'products.create',
        fingerprint: 'x',
        responseStatus: 201,
        responseBody: '{}',
        expiresAt: new Date(Date.now() - 1000),
      });
      // A 20 ms job: done in well under a second on a quiet machine; the bound is for a loaded one.
      await vi.waitFor(async () => expect(await database.db.select().from(idempotencyKeys)).toEqual([]), { timeout: 60_000, interval: 20 });
    } finally {
      // onClose stops the job before the database closes: nothing runs on a closed database.
      await app.close();
    }
  });
});

describe('Idempotency-Key through /trpc', () => {
  const trpcCreate = (body: unknown, key: string | undefined, token = t.admin.token) =>
    t.app.inject({
      method: 'POST',
      url: '/trpc/products.create',
      payload: body as Record<string, unknown>,
      headers: { authorization: `Bearer ${token}`, ...(key === undefined ? {} : { 'idempotency-key': key }) },
    });

  it('the same key replays the first result (same id) with Idempotent-Replayed: true; another input is 422', async () => {
    const body = productInput();
    const key = newKey();
    const first = await trpcCreate(body, key);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await trpcCreate(body, key);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    type Data = { result: { data: { id: number } } };
    expect(again.json<Data>().result.data).toEqual(first.json<Data>().result.data);
    const mismatch = await trpcCreate(productInput(), key);
    expect(mismatch.statusCode).toBe(422);
    expect(mismatch.json<{ error: { data: { problem: { type: string } } } }>().error.data.problem.type).toBe('/problems/idempotency-key-mismatch');
  });

  it('a key used over REST replays over /trpc: one operation, whichever door', async () => {
    const body = productInput();
    const key = newKey();
    const rest = await post({ url: api('/products'), body }, { token: t.admin.token }, key);
    expect(rest.statusCode).toBe(201);
    const trpc = await trpcCreate(body, key);
    expect(trpc.headers['idempotent-replayed']).toBe('true');
    expect(trpc.json<{ result: { data: { id: number } } }>().result.data.id).toBe(idOf(rest));
  });

  it('a keyed call without any input is refused as invalid input (422), not a 500 (regression)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/trpc/products.create',
      headers: { authorization: `Bearer ${t.admin.token}`, 'idempotency-key': newKey(), 'content-type': 'application/json' },
      payload: '',
    });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json<{ error: { data: { problem: { type: string } } } }>().error.data.problem.type).toBe('/problems/validation-error');
  });

  it('a key on a batch of several calls is refused with 400 and runs nothing (one key, one operation)', async () => {
    const [first, second] = [productInput(), productInput()];
    const res = await t.app.inject({
      method: 'POST',
      url: '/trpc/products.create,products.create?batch=1',
      payload: { 0: first, 1: second },
      headers: { authorization: `Bearer ${t.admin.token}`, 'idempotency-key': newKey() },
    });
    expect(res.statusCode, res.body).toBe(400);
    const list = await t.request({ method: 'GET', url: `${api('/products')}?limit=100&sort=-id`, token: t.admin.token });
    const skus = list.json<{ data: { sku: string }[] }>().data.map((p) => p.sku);
    expect(skus).not.toContain(first.sku);
    expect(skus).not.toContain(second.sku);
  });

  it('an invalid key is 400 malformed-request', async () => {
    const res = await trpcCreate(productInput(), 'a b');
    expect(res.statusCode).toBe(400);
    expect(res.json<{ error: { data: { problem: { type: string } } } }>().error.data.problem.type).toBe('/problems/malformed-request');
  });
});

describe('Idempotency-Key through createCaller (createContextInner({ idempotencyKey }))', () => {
  it('replays with ctx.response.replayed set, and the operation ran once', async () => {
    const caller = (await t.tokens.authenticate(`Bearer ${t.admin.token}`)) as Caller;
    const createCaller = createCallerFactory(appRouter);
    const body = productInput();
    const key = newKey();
    const firstCtx = createContextInner({ db: t.db, caller, idempotencyKey: key });
    const first = await createCaller(firstCtx).products.create(body);
    expect(firstCtx.response.replayed).toBeUndefined();
    const againCtx = createContextInner({ db: t.db, caller, idempotencyKey: key });
    const again = await createCaller(againCtx).products.create(body);
    expect(again).toEqual(first);
    expect(againCtx.response.replayed).toBe(true);
    expect(againCtx.response.headers['idempotent-replayed']).toBe('true');
  });
});

// A held key row needs a second connection: PostgreSQL only (PGlite runs one transaction at a time).
describe.skipIf(!onPostgres)('a request arriving while the first with its key runs waits for it (PostgreSQL)', () => {
  // An app of its own, waiting at most 1.5 s for a held key instead of 10 s.
  let waiting: { app: FastifyInstance; db: Db; tokens: TokenService };

  beforeAll(async () => {
    const database = await createTestDatabase();
    const tokens = new TokenService(TEST_JWT);
    const app = await buildApp({ database, tokens, rateLimit: { max: 1_000_000, timeWindow: '1 minute' }, idempotency: { waitTimeoutMs: 1500 } });
    await app.ready();
    waiting = { app, db: database.db, tokens };
  });
  afterAll(async () => waiting.app.close());

  /** Who lets the holding transaction go, and how. */
  const decision = () => {
    let release: (how: 'commit' | 'rollback') => void = () => {};
    const decided = new Promise<'commit' | 'rollback'>((resolve) => {
      release = resolve;
    });
    return { decided, release };
  };

  const heldKey = async (adminUser: TestUser, body: Record<string, unknown>, key: string, release: Promise<'commit' | 'rollback'>, db: Db = waiting.db) => {
    const fingerprint = fingerprintOf(defaultIdempotencySettings, body);
    let inserted: () => void = () => {};
    const holding = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    const done = db
      .transaction(async (tx) => {
        await tx.insert(idempotencyKeys).values({
          scope: `user:${adminUser.id}`,
          key,
          operation: 'products.create',
          fingerprint,
          responseStatus: 201,
          responseBody: JSON.stringify({ id: 424242, held: true }),
          expiresAt: new Date(Date.now() + 3_600_000),
        });
        inserted();
        if ((await release) === 'rollback') throw new Error('rolled back on purpose');
      })
      .catch(() => {});
    await holding;
    // Wrapped: an async function returning the promise itself would wait for it.
    return { done };
  };

  const postAs = (user: TestUser, body: Record<string, unknown>, key: string) =>
    waiting.app.inject({ method: 'POST', url: api('/products'), payload: body, headers: { authorization: `Bearer ${user.token}`, 'idempotency-key': key } });

  it('the first commits while the second waits: the second replays the first result', async () => {
    const user = await createUserRow(waiting.db, waiting.tokens, 'admin');
    const body = productInput();
    const key = newKey();
    const { decided, release } = decision();
    const { done: held } = await heldKey(user, body, key, decided);
    const second = postAs(user, body, key);
    await untilLockAwaited(waiting.db, 'the second request waiting for the held key');
    release('commit');
    const res = await second;
    await held;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['idempotent-replayed']).toBe('true');
    expect(res.json()).toEqual({ id: 424242, held: true });
  });

  it('the first rolls back while the second waits: the second runs itself (201)', async () => {
    const user = await createUserRow(waiting.db, waiting.tokens, 'admin');
    const body = productInput();
    const key = newKey();
    const { decided, release } = decision();
    const { done: held } = await heldKey(user, body, key, decided);
    const second = postAs(user, body, key);
    await untilLockAwaited(waiting.db, 'the second request waiting for the held key');
    release('rollback');
    const res = await second;
    await held;
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a waiting request gives its transaction slot back between tries: other writes still get through', async () => {
    // A pool of 3 connections: 2 transaction slots (server/db/unit-of-work.ts), one for the held key,
    // one that the retry below waits in.
    const copy = await copyTemplateDatabase();
    const database = await openDatabase({ url: copy.url, dataDir: '', poolSize: 3 });
    const tokens = new TokenService(TEST_JWT);
    const small = await buildApp({ database, tokens, rateLimit: { max: 1_000_000, timeWindow: '1 minute' }, idempotency: { waitTimeoutMs: 3000 } });
    try {
      await small.ready();
      const user = await createUserRow(database.db, tokens, 'admin');
      const create = (body: Record<string, unknown>, key: string) =>
        small.inject({ method: 'POST', url: api('/products'), payload: body, headers: { authorization: `Bearer ${user.token}`, 'idempotency-key': key } });
      const body = productInput();
      const key = newKey();
      const { decided, release } = decision();
      const { done: held } = await heldKey(user, body, key, decided, database.db);
      const retry = create(body, key);
      // The retry is in its wait: it has held a slot, and gives it back between slices.
      await untilLockAwaited(database.db, 'the retry waiting for the held key');
      const started = performance.now();
      const other = await create(productInput(), newKey());
      const waited = performance.now() - started;
      expect(other.statusCode, other.body).toBe(201);
      // Holding its slot for the whole wait, the retry would keep this write out for 3 s.
      expect(waited).toBeLessThan(1500);
      release('commit');
      await held;
      const res = await retry;
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['idempotent-replayed']).toBe('true');
    } finally {
      await small.close();
      await copy.drop();
    }
  });

  it('a wait longer than the bound is 409 idempotency-key-in-use with Retry-After: 1', async () => {
    const user = await createUserRow(waiting.db, waiting.tokens, 'admin');
    const body = productInput();
    const key = newKey();
    const { decided, release } = decision();
    const { done: held } = await heldKey(user, body, key, decided);
    const started = performance.now();
    const res = await postAs(user, body, key);
    release('rollback');
    await held;
    expectProblem(res, 409, 'idempotency-key-in-use');
    expect(res.headers['retry-after']).toBe('1');
    expect(performance.now() - started).toBeGreaterThanOrEqual(1400);
  });
});
