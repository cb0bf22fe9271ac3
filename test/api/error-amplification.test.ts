/**
 * Error amplification (issue 21, item 2): an error answer is small and cheap whatever the body.
 * 70,000 unknown fields once answered a 3.7 MB 422 listing every one (4.2 MB on /trpc) for most
 * of a second of CPU. Each `describe` is a rule; the sizes asserted are bytes, never time.
 */
import { count } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { users } from '../../server/db/schema.ts';
import { MAX_LISTED_ERRORS } from '../../server/errors/problems.ts';
import { MAX_JSON_MEMBERS } from '../../server/http/json-body.ts';
import { useTestApp } from '../helpers/app.ts';
import { ORDERS } from '../helpers/orders.ts';
import { expectProblem, type ProblemBody } from '../helpers/problems.ts';
import { USERS, userInput } from '../helpers/users.ts';

const t = useTestApp();

/** Far above any answer this file expects, far below what the unbounded answers were (MBs). */
const SMALL = 8 * 1024;

const userCount = async (): Promise<number> => (await t.db.select({ n: count() }).from(users))[0]?.n ?? 0;

/** A JSON object's text: the members of `valid`, then `n` unknown fields `k00000`, `k00001`... */
function withUnknownFields(valid: object, n: number, name = (i: number) => `k${String(i).padStart(5, '0')}`): string {
  const extra = Array.from({ length: n }, (_, i) => `${JSON.stringify(name(i))}:1`);
  const members = JSON.stringify(valid).slice(1, -1);
  return `{${[members, ...extra].filter(Boolean).join(',')}}`;
}

const json = { 'content-type': 'application/json' };
const postUsers = (payload: string) => t.request({ method: 'POST', url: USERS, headers: json, payload });
const trpcUsersCreate = (payload: string) => t.request({ method: 'POST', url: '/trpc/users.create', headers: json, payload });

/** The problem of a single (unbatched) `/trpc` call's error. */
function trpcProblem(res: LightMyRequestResponse): ProblemBody {
  const body = res.json<{ error?: { data?: { problem?: ProblemBody } } }>();
  const problem = body.error?.data?.problem;
  if (!problem) throw new Error(`no problem in ${res.body.slice(0, 300)}`);
  return problem;
}

describe('70,000 unknown fields answer a small problem and create nothing (the issue body)', () => {
  const body = withUnknownFields(userInput(), 70_000);

  it('REST: a small 422, no user created', async () => {
    expect(body.length).toBeGreaterThan(700_000);
    const before = await userCount();
    const res = await postUsers(body);
    expect(res.body.length).toBeLessThan(SMALL);
    const problem = expectProblem(res, 422, 'validation-error');
    expect(problem.errors?.length).toBeGreaterThan(0);
    expect(problem.errors?.length).toBeLessThanOrEqual(MAX_LISTED_ERRORS);
    expect(problem.errors_total).toBeGreaterThanOrEqual(problem.errors?.length ?? 0);
    expect(await userCount()).toBe(before);
  });

  it('/trpc: a small 422 error, no user created', async () => {
    const before = await userCount();
    const res = await trpcUsersCreate(body);
    expect(res.statusCode).toBe(422);
    expect(res.body.length).toBeLessThan(SMALL);
    const problem = res.headers['content-type']?.toString().startsWith('application/problem+json') ? res.json<ProblemBody>() : trpcProblem(res);
    expect(problem.errors?.length).toBeLessThanOrEqual(MAX_LISTED_ERRORS);
    expect(problem.errors_total).toBeGreaterThanOrEqual(1);
    expect(await userCount()).toBe(before);
  });
});

describe(`a problem lists at most ${MAX_LISTED_ERRORS} field errors; errors_total counts them all`, () => {
  const body = withUnknownFields(userInput(), 900);

  it('REST: 900 unknown fields list the first 20 (in body order), errors_total 900', async () => {
    const res = await postUsers(body);
    expect(res.body.length).toBeLessThan(SMALL);
    const problem = expectProblem(res, 422, 'validation-error');
    expect(problem.errors).toHaveLength(MAX_LISTED_ERRORS);
    expect(problem.errors?.[0]).toEqual({ field: 'k00000', message: 'Unknown field' });
    expect(problem.errors_total).toBe(900);
    // The detail names a few fields, not all of them.
    expect(problem.detail.length).toBeLessThan(200);
  });

  it('/trpc: the same problem in the error data, as small', async () => {
    const res = await trpcUsersCreate(body);
    expect(res.statusCode).toBe(422);
    expect(res.body.length).toBeLessThan(SMALL);
    const problem = trpcProblem(res);
    expect(problem.errors).toHaveLength(MAX_LISTED_ERRORS);
    expect(problem.errors_total).toBe(900);
  });

  it('a problem with few errors lists them all, and errors_total says how many', async () => {
    const res = await postUsers(withUnknownFields(userInput(), 2));
    const problem = expectProblem(res, 422, 'validation-error');
    expect(problem.errors).toEqual([
      { field: 'k00000', message: 'Unknown field' },
      { field: 'k00001', message: 'Unknown field' },
    ]);
    expect(problem.errors_total).toBe(2);
  });

  it('100 items of 900 unknown fields each: 20 listed, errors_total 90,000, nothing created', async () => {
    const customer = await t.createUser('customer');
    const item = withUnknownFields({ product_id: 1, quantity: 1 }, 900);
    const payload = `{"items":[${new Array<string>(100).fill(item).join(',')}]}`;
    const res = await t.request({ method: 'POST', url: ORDERS, token: customer.token, headers: json, payload });
    expect(res.body.length).toBeLessThan(SMALL);
    const problem = expectProblem(res, 422, 'validation-error');
    expect(problem.errors).toHaveLength(MAX_LISTED_ERRORS);
    expect(problem.errors?.[0]?.field).toBe('items.0.k00000');
    expect(problem.errors_total).toBe(90_000);
  });

  it('100 items with three bad values each: 20 listed, errors_total 300', async () => {
    const customer = await t.createUser('customer');
    const items = Array.from({ length: 100 }, () => ({ product_id: 0, quantity: 0, unit_price: 1 }));
    const res = await t.request({ method: 'POST', url: ORDERS, token: customer.token, payload: { items } });
    const problem = expectProblem(res, 422, 'validation-error');
    expect(problem.errors).toHaveLength(MAX_LISTED_ERRORS);
    expect(problem.errors_total).toBe(300);
  });
});

describe('a field name is the client text: a long one is shortened in the answer', () => {
  it('an unknown field named by 100,000 characters answers a small 422', async () => {
    const res = await postUsers(withUnknownFields(userInput(), 1, () => 'k'.repeat(100_000)));
    expect(res.body.length).toBeLessThan(SMALL);
    const problem = expectProblem(res, 422, 'validation-error');
    expect(problem.errors?.[0]?.field.startsWith('kkkk')).toBe(true);
    expect(problem.errors_total).toBe(1);
  });
});

describe('a /trpc batch shares one listing budget: the whole answer stays small', () => {
  it('100 calls of 900 unknown fields each answer one small error per call', async () => {
    const calls = 100;
    const input = withUnknownFields(userInput(), 900);
    const payload = `{${Array.from({ length: calls }, (_, i) => `"${i}":${input}`).join(',')}}`;
    const before = await userCount();
    const res = await t.request({ method: 'POST', url: `/trpc/${new Array<string>(calls).fill('users.create').join(',')}?batch=1`, headers: json, payload });
    const answers = res.json<{ error?: { data?: { problem?: ProblemBody } } }[]>();
    expect(answers).toHaveLength(calls);
    const problems = answers.map((a) => a.error?.data?.problem);
    expect(problems.every((p) => p?.errors_total === 900)).toBe(true);
    const listed = problems.reduce((sum, p) => sum + (p?.errors?.length ?? 0), 0);
    expect(listed).toBeLessThanOrEqual(Math.max(MAX_LISTED_ERRORS, calls));
    expect(res.body.length).toBeLessThan(calls * 1024);
    expect(await userCount()).toBe(before);
  });
});

describe(`a JSON body's objects and arrays hold at most ${MAX_JSON_MEMBERS} members (bounded work before validation)`, () => {
  it(`${MAX_JSON_MEMBERS} members are still parsed and validated as usual`, async () => {
    const res = await postUsers(withUnknownFields(userInput(), MAX_JSON_MEMBERS - 3));
    const problem = expectProblem(res, 422, 'validation-error');
    expect(problem.errors_total).toBe(MAX_JSON_MEMBERS - 3);
  });

  it('one more is refused with one 422 entry naming the body', async () => {
    const res = await postUsers(withUnknownFields(userInput(), MAX_JSON_MEMBERS - 2));
    const problem = expectProblem(res, 422, 'validation-error');
    expect(problem.errors).toEqual([{ field: '(body)', message: `must have at most ${MAX_JSON_MEMBERS} members` }]);
    expect(problem.errors_total).toBe(1);
  });

  it('a nested object or array names its path', async () => {
    const customer = await t.createUser('customer');
    const item = withUnknownFields({}, MAX_JSON_MEMBERS + 1);
    const res = await t.request({ method: 'POST', url: ORDERS, token: customer.token, headers: json, payload: `{"items":[{"product_id":1,"quantity":1},${item}]}` });
    expectProblem(res, 422, 'validation-error', { fields: ['items.1'] });
    const long = await t.request({ method: 'POST', url: ORDERS, token: customer.token, headers: json, payload: `{"items":[${new Array<string>(MAX_JSON_MEMBERS + 1).fill('{}').join(',')}]}` });
    expectProblem(long, 422, 'validation-error', { fields: ['items'] });
  });

  it('/trpc bodies are bounded alike', async () => {
    const before = await userCount();
    const res = await trpcUsersCreate(withUnknownFields(userInput(), MAX_JSON_MEMBERS + 1));
    expect(res.statusCode).toBe(422);
    expect(res.body.length).toBeLessThan(SMALL);
    expect(await userCount()).toBe(before);
  });
});
