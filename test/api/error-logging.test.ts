/**
 * Issue 7, item 4 (CONTRACT section 6): a 500 says only that something failed; the server log
 * has the underlying error (message, stack) with the request id.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { buildApp } from '../../server/app.ts';
import type { Database } from '../../server/db/client.ts';
import { TEST_JWT } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { expectProblem } from '../helpers/problems.ts';

interface LogLine {
  msg: string;
  reqId?: string;
  err?: { message?: string; stack?: string; code?: string };
}

const SECRET_CAUSE = 'relation "secret_internal_table" is on fire';

let database: Database;
let app: FastifyInstance;
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
