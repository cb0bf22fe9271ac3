/**
 * Issue 7, item 4 (docs/api.md#errors): a 500 says only that something failed; the server log
 * has the underlying error (message, stack) with the request id.
 */
import { once } from 'node:events';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { buildApp } from '../../server/app.ts';
import type { Database } from '../../server/db/client.ts';
import { TEST_JWT } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { expectProblem } from '../helpers/problems.ts';
import { portOf, RawConnection } from '../helpers/raw-http.ts';

interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  status?: number;
  err?: { message?: string; stack?: string; code?: string };
  cause?: { type: string; message: string; code?: string }[];
}

/** pino's levels. */
const INFO = 30;
const WARN = 40;
const ERROR = 50;

const SECRET_CAUSE = 'relation "secret_internal_table" is on fire';

let database: Database;
let app: FastifyInstance;
const lines: LogLine[] = [];

/** A log destination whose JSON lines land in `lines`. */
const logTo = (into: LogLine[]) =>
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) into.push(JSON.parse(line) as LogLine);
      done();
    },
  });

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildApp({ database, tokens: new TokenService(TEST_JWT), logger: { level: 'info', stream: logTo(lines) } });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
});

/** Makes the next reads of the database fail the way a bug would: an error no mapping knows. */
function breakReads(): void {
  vi.spyOn(database.db, 'select').mockImplementation(() => {
    throw Object.assign(new Error(SECRET_CAUSE), { code: 'XX000' });
  });
}

describe('a 500 is logged with its cause and the request id; the body tells nothing', () => {
  it('REST: the log line has the original message, code and stack with the reqId', async () => {
    breakReads();
    const res = await app.inject({ method: 'GET', url: '/api/v1/products/1', headers: { 'x-request-id': 'trace-rest-500' } });
    vi.restoreAllMocks();

    const problem = expectProblem(res, 500, 'internal-error');
    expect(problem.request_id).toBe('trace-rest-500');
    expect(res.body).not.toContain('secret_internal_table');
    expect(res.body).not.toMatch(/XX000|\bat /);

    const logged = lines.find((line) => line.msg === 'request failed' && line.reqId === 'trace-rest-500');
    expect(logged?.err?.message).toBe(SECRET_CAUSE);
    expect(logged?.err?.code).toBe('XX000');
    expect(logged?.err?.stack).toContain(SECRET_CAUSE);
    expect(logged?.err?.stack).toMatch(/\n\s+at /);
  });

  it('/trpc: the log line has the original message and stack with the reqId', async () => {
    breakReads();
    const input = encodeURIComponent(JSON.stringify({ id: 1 }));
    const res = await app.inject({ method: 'GET', url: `/trpc/products.get?input=${input}`, headers: { 'x-request-id': 'trace-trpc-500' } });
    vi.restoreAllMocks();

    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain('secret_internal_table');
    const logged = lines.find((line) => line.msg === 'trpc call failed' && line.reqId === 'trace-trpc-500');
    expect(logged?.err?.message).toBe(SECRET_CAUSE);
    expect(logged?.err?.stack).toContain(SECRET_CAUSE);
  });

  it('a closed database answers 503 service-unavailable with Retry-After, not 500', async () => {
    const closed = await createTestDatabase();
    const down = await buildApp({ database: closed, tokens: new TokenService(TEST_JWT) });
    await down.ready();
    await closed.close();
    try {
      const res = await down.inject({ method: 'GET', url: '/api/v1/products' });
      expectProblem(res, 503, 'service-unavailable');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await down.close();
    }
  });
});

describe('a refused keyed /trpc batch is a client error: BAD_REQUEST, 400, logged at info without a stack (issue 21, item 7)', () => {
  it('every call of the batch answers BAD_REQUEST with its problem in data; no error-level line, no stack', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/trpc/orders.create,orders.create?batch=1',
      payload: { 0: { items: [] }, 1: { items: [] } },
      headers: { 'idempotency-key': 'batch-refused-1', 'x-request-id': 'trace-trpc-keyed-batch' },
    });

    expect(res.statusCode, res.body).toBe(400);
    const answers = res.json<{ error: { data: { code: string; httpStatus: number; problem: { type: string; status: number } } } }[]>();
    expect(answers).toHaveLength(2);
    for (const { error } of answers) {
      expect(error.data.code).toBe('BAD_REQUEST');
      expect(error.data.httpStatus).toBe(400);
      expect(error.data.problem).toMatchObject({ type: '/problems/malformed-request', status: 400 });
    }
    expect(res.body).not.toMatch(/\bat /);

    const mine = lines.filter((line) => line.reqId === 'trace-trpc-keyed-batch') as (LogLine & { level: number })[];
    expect(mine.length).toBeGreaterThan(0);
    // pino's levels: 30 info, 40 warn, 50 error.
    expect(mine.filter((line) => line.level >= 50)).toEqual([]);
    expect(mine.filter((line) => line.err?.stack !== undefined)).toEqual([]);
    expect(mine.find((line) => line.msg === 'request')).toMatchObject({ level: 30, status: 400 });
  });
});

describe('expected failures are logged below error and without a stack; only our bugs (500) are errors (issue 21 item 9)', () => {
  const linesOf = (from: LogLine[], reqId: string) => from.filter((line) => line.reqId === reqId);

  it('a request refused with 503 while the service shuts down is logged at info, with no stack and nothing at error', async () => {
    const closingLines: LogLine[] = [];
    const closingDatabase = await createTestDatabase();
    const tokens = new TokenService(TEST_JWT);
    const closing = await buildApp({ database: closingDatabase, tokens, logger: { level: 'info', stream: logTo(closingLines) } });
    await closing.listen({ port: 0, host: '127.0.0.1' });
    const admin = await tokens.mint({ sub: '1', role: 'admin', name: 'Admin' });
    const connection = new RawConnection(portOf(closing));
    await connection.connected;
    // A request in flight (half its body sent) keeps the connection while the app closes...
    const body = JSON.stringify({ sku: 'LOG-1', name: 'Log', price: 100, stock: 1 });
    const received = once(closing.server, 'request');
    connection.write(
      `POST /api/v1/products HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${admin}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await received;
    const closed = closing.close();
    await vi.waitFor(() => expect(closing.server.listening).toBe(false), { timeout: 20_000, interval: 20 });
    // ...and the next request on it arrives during the shutdown.
    connection.write(`${body.slice(5)}GET /api/v1/products HTTP/1.1\r\nHost: x\r\nX-Request-Id: trace-shutdown-503\r\n\r\n`);
    await vi.waitFor(() => expect(connection.responses()).toHaveLength(2), { timeout: 20_000, interval: 20 });
    connection.destroy();
    await closed;

    expect(connection.responses()[1]?.status).toBe(503);
    const logged = linesOf(closingLines, 'trace-shutdown-503');
    expect(logged.find((line) => line.msg === 'request')).toMatchObject({ level: INFO, status: 503 });
    expect(logged.filter((line) => line.level >= ERROR)).toEqual([]);
    expect(logged.filter((line) => line.err?.stack !== undefined)).toEqual([]);
  });

  it('a database that does not answer (503) is logged at warn with what failed, but no stack', async () => {
    const downLines: LogLine[] = [];
    const closed = await createTestDatabase();
    const down = await buildApp({ database: closed, tokens: new TokenService(TEST_JWT), logger: { level: 'info', stream: logTo(downLines) } });
    await down.ready();
    await closed.close();
    try {
      const rest = await down.inject({ method: 'GET', url: '/api/v1/products', headers: { 'x-request-id': 'trace-db-503' } });
      expectProblem(rest, 503, 'service-unavailable');
      const input = encodeURIComponent(JSON.stringify({ id: 1 }));
      const trpc = await down.inject({ method: 'GET', url: `/trpc/products.get?input=${input}`, headers: { 'x-request-id': 'trace-db-503-trpc' } });
      expect(trpc.statusCode).toBe(503);
    } finally {
      await down.close();
    }
    for (const reqId of ['trace-db-503', 'trace-db-503-trpc']) {
      const logged = linesOf(downLines, reqId);
      expect(logged.filter((line) => line.level >= ERROR)).toEqual([]);
      expect(logged.filter((line) => line.err?.stack !== undefined)).toEqual([]);
      // What failed, as the driver said it (PGlite: closed; postgres.js: the connection ended).
      const warned = logged.find((line) => line.level === WARN);
      expect(warned?.cause?.[0]?.message).toEqual(expect.any(String));
    }
  });

  it('a refusal (4xx) is logged by its request line at info only', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/products/999999999', headers: { 'x-request-id': 'trace-404' } });
    expectProblem(res, 404, 'not-found');
    const logged = linesOf(lines, 'trace-404');
    expect(logged.map((line) => [line.level, line.msg])).toEqual([[INFO, 'request']]);
  });
});
