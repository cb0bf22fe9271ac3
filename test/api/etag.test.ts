/**
 * Issue 8, item 3 (docs/api.md#preconditions): the ETag a read sends is the tag a conditional write
 * checks (server/lib/etag.ts): the tag of the body's bytes, and in the service the tag of its
 * representation through the read's output schema, so the order a service builds its fields in
 * cannot make them disagree.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Db } from '../../server/db/client.ts';
import { handleError } from '../../server/http/problem-reply.ts';
import { registerRestRoutes } from '../../server/http/rest-adapter.ts';
import { bytesTag, entityTag, representationTag } from '../../server/lib/etag.ts';
import { Order } from '../../server/modules/orders/orders.schemas.ts';
import { assertIfMatch } from '../../server/lib/preconditions.ts';
import { publicProcedure, router } from '../../server/trpc/trpc.ts';
import { useTestApp } from '../helpers/app.ts';
import { createOrderScene, draftOrder, ORDERS, putOrder, readOrder } from '../helpers/orders.ts';
import { expectProblem } from '../helpers/problems.ts';

/** The same value with every object's keys in reverse order, at every depth. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([key, member]) => [key, reversedKeys(member)]));
}

// One app (and its migrated database) for the order and list tests of this file.
const t = useTestApp();

describe('an order read with its ETag can be written back with it as If-Match', () => {
  it('the ETag is the tag of the body; the one a service checks is the same, whatever order it builds the keys in', async () => {
    const draft = await draftOrder(t, await createOrderScene(t));
    const { order, etag } = await readOrder(t, draft.id);
    expect(etag).toBe(entityTag(order));
    expect(representationTag(Order, reversedKeys(order))).toBe(etag);
    // The bytes, not the values: the same members in another order are another body.
    expect(entityTag(reversedKeys(order))).not.toBe(etag);
  });

  it('PUT with the ETag as If-Match succeeds; a stale one is 412 naming the tag a GET sends', async () => {
    const scene = await createOrderScene(t);
    const draft = await draftOrder(t, scene);
    const before = await readOrder(t, draft.id);
    const put = await putOrder(t, draft.id, { items: [{ product_id: scene.mug.id, quantity: 3 }], address: '2 Elm St' }, scene.alice.token, {
      'if-match': before.etag,
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.headers.etag).not.toBe(before.etag);

    const stale = await putOrder(t, draft.id, { items: [{ product_id: scene.mug.id, quantity: 1 }] }, scene.alice.token, { 'if-match': before.etag });
    const problem = expectProblem(stale, 412, 'precondition-failed');
    const after = await readOrder(t, draft.id);
    expect(problem.current_etag).toBe(after.etag);
    expect(after.etag).toBe(put.headers.etag);
  });
});

describe("a list's ETag is the tag of the bytes sent", () => {
  it('is the hash of the body as received, stable while the page is, and new when a member changes', async () => {
    const scene = await createOrderScene(t);
    const draft = await draftOrder(t, scene);
    const list = () => t.request({ method: 'GET', url: `${ORDERS}?limit=5`, token: scene.alice.token });
    const first = await list();
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers.etag).toBe(bytesTag(first.body));
    expect((await list()).headers.etag).toBe(first.headers.etag);

    const put = await putOrder(t, draft.id, { items: [{ product_id: scene.mug.id, quantity: 2 }], address: '9 Changed Rd' }, scene.alice.token);
    expect(put.statusCode, put.body).toBe(200);
    const changed = await list();
    expect(changed.headers.etag).toBe(bytesTag(changed.body));
    expect(changed.headers.etag).not.toBe(first.headers.etag);
  });
});

describe('an output schema whose fields are ordered unlike the service representation', () => {
  // The service builds `{ b, id, a }`; the output schema (and so the body) says `{ id, a, b }`.
  const Thing = z.strictObject({ id: z.int(), a: z.string(), b: z.string() });
  let stored = { a: 'one', b: 'two' };
  const representation = () => ({ b: stored.b, id: 1, a: stored.a });
  const things = router({
    get: publicProcedure
      .meta({ openapi: { method: 'GET', path: '/things/{id}' }, rest: { kind: 'item' } })
      .input(z.strictObject({ id: z.int() }))
      .output(Thing)
      .query(() => representation()),
    replace: publicProcedure
      .meta({ openapi: { method: 'PUT', path: '/things/{id}' }, rest: { kind: 'item' } })
      .input(Thing)
      .output(Thing)
      .mutation(({ ctx, input }) => {
        assertIfMatch(ctx.preconditions, Thing, representation());
        stored = { a: input.a, b: input.b };
        return representation();
      }),
  });

  let app: FastifyInstance;
  beforeAll(async () => {
    app = Fastify();
    app.decorateRequest('caller', null);
    app.setErrorHandler((error, request, reply) => handleError(error, request, reply));
    // Procedures that never touch the database.
    registerRestRoutes(app, { router: things, db: {} as Db });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('still passes If-Match with the ETag the read sent', async () => {
    const read = await app.inject({ method: 'GET', url: '/api/v1/things/1' });
    expect(read.statusCode, read.body).toBe(200);
    expect(Object.keys(read.json<object>())).toEqual(['id', 'a', 'b']);
    const etag = String(read.headers.etag);

    const write = await app.inject({ method: 'PUT', url: '/api/v1/things/1', headers: { 'if-match': etag }, payload: { id: 1, a: 'uno', b: 'dos' } });
    expect(write.statusCode, write.body).toBe(200);
    const again = await app.inject({ method: 'PUT', url: '/api/v1/things/1', headers: { 'if-match': etag }, payload: { id: 1, a: 'x', b: 'y' } });
    expect(again.statusCode).toBe(412);
  });
});
