/**
 * Issue 8, item 1: one request-to-context function for both doors. A procedure sees the same
 * context through REST and /trpc (request id, If-Match, a logger bound to the request), and
 * what a middleware puts in the response bag reaches the client through either door.
 */
import { Writable } from 'node:stream';
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../server/db/client.ts';
import { DomainError } from '../../server/errors/problems.ts';
import { handleError } from '../../server/http/problem-reply.ts';
import { registerRestRoutes } from '../../server/http/rest-adapter.ts';
import { registerTrpcEndpoint } from '../../server/http/trpc-endpoint.ts';
import { createContextInner } from '../../server/trpc/context.ts';
import { publicProcedure, router } from '../../server/trpc/trpc.ts';

interface Seen {
  request_id: string;
  if_match: string[] | null;
}

/** A middleware that shapes the answer the way idempotency replays will: a header in the bag. */
const bagged = publicProcedure.use(({ ctx, next }) => {
  ctx.response.headers['x-probe'] = 'from-the-bag';
  return next();
});

const probe = router({
  context: bagged.meta({ openapi: { method: 'GET', path: '/probe' } }).query(({ ctx }): Seen => {
    ctx.log.info({ probe: true }, 'probe ran');
    return { request_id: ctx.requestId, if_match: ctx.preconditions.ifMatch ?? null };
  }),
  fail: bagged.meta({ openapi: { method: 'GET', path: '/probe/fail' } }).query(() => {
    throw new DomainError('conflict', 'The probe always conflicts.');
  }),
});

interface LogLine {
  msg: string;
  reqId?: string;
  probe?: boolean;
}

let app: FastifyInstance;
const lines: LogLine[] = [];

beforeAll(async () => {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  app = Fastify({ logger: { level: 'info', stream }, genReqId: (request) => String(request.headers['x-request-id']) });
  app.decorateRequest('caller', null);
  app.setErrorHandler((error, request, reply) => handleError(error, request, reply));
  // The probe never touches the database.
  const db = {} as Db;
  registerRestRoutes(app, { router: probe, db });
  await registerTrpcEndpoint(app, { router: probe, db, maxBatchSize: 10 });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
});

const rest = (path: string, requestId: string): Promise<LightMyRequestResponse> =>
  app.inject({ method: 'GET', url: `/api/v1${path}`, headers: { 'x-request-id': requestId, 'if-match': '"v1", "v2"' } });
const trpc = (name: string, requestId: string): Promise<LightMyRequestResponse> =>
  app.inject({ method: 'GET', url: `/trpc/${name}`, headers: { 'x-request-id': requestId, 'if-match': '"v1", "v2"' } });

describe('both doors build the context with one createContext', () => {
  it('REST and /trpc hand the procedure the same request id and If-Match', async () => {
    const viaRest = await rest('/probe', 'ctx-rest');
    const viaTrpc = await trpc('context', 'ctx-trpc');
    expect(viaRest.statusCode, viaRest.body).toBe(200);
    expect(viaTrpc.statusCode, viaTrpc.body).toBe(200);
    expect(viaRest.json<Seen>()).toEqual({ request_id: 'ctx-rest', if_match: ['"v1"', '"v2"'] });
    expect(viaTrpc.json<{ result: { data: Seen } }>().result.data).toEqual({ request_id: 'ctx-trpc', if_match: ['"v1"', '"v2"'] });
  });

  it('ctx.log writes lines bound to the request id, through either door', async () => {
    await rest('/probe', 'log-rest');
    await trpc('context', 'log-trpc');
    for (const reqId of ['log-rest', 'log-trpc']) {
      expect(lines.find((line) => line.msg === 'probe ran' && line.reqId === reqId)?.probe).toBe(true);
    }
  });

  it('createContextInner, without a request, has a silent logger and an empty bag', () => {
    const ctx = createContextInner({ db: {} as Db });
    expect(() => ctx.log.info('nothing to see')).not.toThrow();
    expect(ctx.response.headers).toEqual({});
  });
});

describe('what a middleware puts in the response bag reaches the client through either door', () => {
  it('on success', async () => {
    expect((await rest('/probe', 'bag-rest')).headers['x-probe']).toBe('from-the-bag');
    expect((await trpc('context', 'bag-trpc')).headers['x-probe']).toBe('from-the-bag');
  });

  it('on a problem, which stays uncacheable', async () => {
    for (const res of [await rest('/probe/fail', 'bag-rest-409'), await trpc('fail', 'bag-trpc-409')]) {
      expect(res.statusCode, res.body).toBe(409);
      expect(res.headers['x-probe']).toBe('from-the-bag');
      expect(res.headers['cache-control']).toBe('no-store');
    }
  });
});
