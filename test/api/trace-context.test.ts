/**
 * Issue 23 item 4 (docs/api.md#tracing): a W3C `traceparent` is accepted and its trace id logged
 * beside the request id on every line of the request (a new one when it is absent or invalid,
 * never an error); the typed client can send one.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createOrderServiceClient } from '../../client-sdk/src/index.ts';
import { TokenService } from '../../server/auth/tokens.ts';
import { buildApp } from '../../server/app.ts';
import type { Database } from '../../server/db/client.ts';
import { newTraceId, parseTraceparent } from '../../server/http/trace-context.ts';
import { TEST_JWT } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';

interface LogLine {
  msg: string;
  reqId?: string;
  trace_id?: string;
  url?: string;
  status?: number;
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;
const HEX32 = /^[0-9a-f]{32}$/;

describe('parseTraceparent reads W3C Trace Context Level 1; anything invalid is undefined', () => {
  it('a valid version 00 header gives its trace id, parent id and flags', () => {
    expect(parseTraceparent(TRACEPARENT)).toEqual({ version: '00', traceId: TRACE_ID, parentId: PARENT_ID, flags: '01' });
    expect(parseTraceparent(`00-${TRACE_ID}-${PARENT_ID}-00`)?.flags).toBe('00');
  });

  it('a later version is read by its first four fields, with more after a dash (forward compatibility)', () => {
    expect(parseTraceparent(`01-${TRACE_ID}-${PARENT_ID}-01`)?.traceId).toBe(TRACE_ID);
    expect(parseTraceparent(`cc-${TRACE_ID}-${PARENT_ID}-01-what-comes-next`)?.traceId).toBe(TRACE_ID);
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['repeated (Node joins it)', `${TRACEPARENT}, ${TRACEPARENT}`],
    ['an array', [TRACEPARENT, TRACEPARENT]],
    ['version ff', `ff-${TRACE_ID}-${PARENT_ID}-01`],
    ['version 00 with more fields', `${TRACEPARENT}-extra`],
    ['a later version followed by no dash', `01-${TRACE_ID}-${PARENT_ID}-01x`],
    ['upper-case hex', TRACEPARENT.toUpperCase()],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${PARENT_ID}-01`],
    ['an all-zero parent id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['a short trace id', `00-${TRACE_ID.slice(1)}-${PARENT_ID}-01`],
    ['a long parent id', `00-${TRACE_ID}-${PARENT_ID}0-01`],
    ['one-digit flags', `00-${TRACE_ID}-${PARENT_ID}-1`],
    ['not hex', `00-${TRACE_ID.replace('4', 'g')}-${PARENT_ID}-01`],
    ['surrounding spaces inside', `00- ${TRACE_ID}-${PARENT_ID}-01`],
  ])('%s', (_name, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });

  it('a new trace id is 32 lower-case hex digits, a new one each time', () => {
    const ids = new Set(Array.from({ length: 100 }, () => newTraceId()));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(HEX32);
  });
});

let database: Database;
let app: FastifyInstance;
let url: string;
const lines: LogLine[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  app = await buildApp({ database, tokens: new TokenService(TEST_JWT), logger: { level: 'info', stream } });
  url = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await app?.close();
});

/** The lines logged for a request id, once its one-per-request line is written (polled, 10 s at most). */
async function linesOf(reqId: string): Promise<LogLine[]> {
  const deadline = Date.now() + 10_000;
  while (!lines.some((line) => line.reqId === reqId && line.msg === 'request')) {
    if (Date.now() > deadline) throw new Error(`no request line for ${reqId}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return lines.filter((line) => line.reqId === reqId);
}

/** The trace id on the request's line. */
async function traceOf(reqId: string): Promise<string | undefined> {
  return (await linesOf(reqId)).find((line) => line.msg === 'request')?.trace_id;
}

describe('the trace id is logged beside the request id on the request\'s line', () => {
  it('a valid traceparent: its trace id; the answer is unchanged (no traceparent or traceresponse sent back)', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/health', headers: { traceparent: TRACEPARENT, 'x-request-id': 'tp-valid' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers.traceparent).toBeUndefined();
    expect(res.headers.traceresponse).toBeUndefined();
    expect(await traceOf('tp-valid')).toBe(TRACE_ID);
  });

  it('no traceparent: a new trace id, another for each request', async () => {
    await app.inject({ method: 'GET', url: '/api/health', headers: { 'x-request-id': 'tp-none-1' } });
    await app.inject({ method: 'GET', url: '/api/health', headers: { 'x-request-id': 'tp-none-2' } });
    const [first, second] = [await traceOf('tp-none-1'), await traceOf('tp-none-2')];
    expect(first).toMatch(HEX32);
    expect(second).toMatch(HEX32);
    expect(first).not.toBe(second);
  });

  it.each([
    ['upper-case', TRACEPARENT.toUpperCase()],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${PARENT_ID}-01`],
    ['garbage', 'not a traceparent'],
  ])('an invalid traceparent (%s) is ignored, never refused: a new trace id, the request answered as usual', async (name, traceparent) => {
    const reqId = `tp-invalid-${name.replaceAll(' ', '-')}`;
    const res = await app.inject({ method: 'GET', url: '/api/v1/products', headers: { traceparent, 'x-request-id': reqId } });
    expect(res.statusCode).toBe(200);
    const traceId = await traceOf(reqId);
    expect(traceId).toMatch(HEX32);
    expect(traceId).not.toBe(TRACE_ID);
    expect(traceId).not.toBe('0'.repeat(32));
  });

  it('a failed /trpc call\'s error line carries it too (every line of the request does)', async () => {
    vi.spyOn(database.db, 'select').mockImplementation(() => {
      throw Object.assign(new Error('broken on purpose'), { code: 'XX000' });
    });
    const input = encodeURIComponent(JSON.stringify({ id: 1 }));
    const res = await app.inject({ method: 'GET', url: `/trpc/products.get?input=${input}`, headers: { traceparent: TRACEPARENT, 'x-request-id': 'tp-trpc-500' } });
    vi.restoreAllMocks();
    expect(res.statusCode).toBe(500);
    const logged = await linesOf('tp-trpc-500');
    expect(logged.map((line) => line.msg).sort()).toEqual(['request', 'trpc call failed']);
    for (const line of logged) expect(line.trace_id, line.msg).toBe(TRACE_ID);
  });
});

describe('the typed client sends a traceparent: the client\'s function per request, or a call\'s own', () => {
  /** The trace ids logged for `/trpc` requests since `from`. */
  const trpcTraces = (from: number) => lines.slice(from).filter((line) => line.msg === 'request' && line.url?.startsWith('/trpc/')).map((line) => line.trace_id);

  /** Waits (10 s at most) until `count` /trpc requests since `from` are logged. */
  async function trpcRequests(from: number, count: number): Promise<(string | undefined)[]> {
    const deadline = Date.now() + 10_000;
    while (trpcTraces(from).length < count) {
      if (Date.now() > deadline) throw new Error(`${trpcTraces(from).length} /trpc requests logged, ${count} expected`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    return trpcTraces(from);
  }

  it('the `traceparent` option is asked before each request; batched calls share it', async () => {
    const asked: string[] = [];
    const client = createOrderServiceClient({
      url,
      traceparent: () => {
        const traceparent = `00-${newTraceId()}-${PARENT_ID}-01`;
        asked.push(traceparent);
        return traceparent;
      },
    });
    const from = lines.length;
    // Two calls made together: one batch, one request, one traceparent.
    await Promise.all([client.products.list.query({}), client.products.list.query({ limit: 1 })]);
    await client.products.list.query({});
    const traced = await trpcRequests(from, 2);
    expect(asked).toHaveLength(2);
    expect(traced).toEqual(asked.map((traceparent) => traceparent.slice(3, 35)));
  });

  it('a call\'s own `context.traceparent` wins, and that call travels alone', async () => {
    const own = `00-${TRACE_ID}-${PARENT_ID}-01`;
    const client = createOrderServiceClient({ url, traceparent: () => `00-${'a'.repeat(32)}-${PARENT_ID}-01` });
    const from = lines.length;
    await Promise.all([client.products.list.query({}, { context: { traceparent: own } }), client.products.list.query({})]);
    const traced = await trpcRequests(from, 2);
    expect(traced.sort()).toEqual([TRACE_ID, 'a'.repeat(32)].sort());
  });

  it('without the option nothing is sent: the service starts a trace of its own', async () => {
    const from = lines.length;
    await createOrderServiceClient({ url }).products.list.query({});
    const [traced] = await trpcRequests(from, 1);
    expect(traced).toMatch(HEX32);
  });
});
