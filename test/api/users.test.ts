import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq, sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPassword } from '../../server/auth/password.ts';
import { bootstrapAdmin } from '../../server/bootstrap.ts';
import { loadConfig } from '../../server/config.ts';
import { users } from '../../server/db/schema.ts';
import { orders } from '../../server/modules/orders/orders.table.ts';
import { TEST_JWT, TEST_PASSWORD, type TestUser, useTestApp } from '../helpers/app.ts';
import { alter } from '../helpers/bodies.ts';
import { expectProblem } from '../helpers/problems.ts';
import { registerUser, userInput, type UserBody, type UserInputBody, type UserListBody, type UserReplaceBody } from '../helpers/users.ts';

let dataDir: string;
const t = useTestApp();
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'order-service-users-'));
});
afterAll(async () => {
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const PRIVATE_CACHE = 'private, max-age=0, must-revalidate';
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function errorFields(res: LightMyRequestResponse): string[] {
  const body = res.json() as { errors?: { field: string; message: string }[] };
  return (body.errors ?? []).map((e) => e.field);
}

async function userRow(id: number) {
  const [row] = await t.db.select().from(users).where(eq(users.id, id));
  return row;
}

async function rowsWithEmail(email: string) {
  return t.db
    .select()
    .from(users)
    .where(sql`lower(${users.email}) = lower(${email})`);
}

const register = (overrides: Partial<UserInputBody> = {}, token?: string): Promise<UserBody> => registerUser(t, overrides, token);

async function getUser(id: number, token: string): Promise<LightMyRequestResponse> {
  return t.request({ method: 'GET', url: `/api/v1/users/${id}`, token });
}

describe('POST /users without a token registers a customer', () => {
  it('answers 201 with a canonical Location and the user, role customer', async () => {
    const input = userInput();
    const res = await t.request({ method: 'POST', url: '/api/v1/users', payload: input });
    expect(res.statusCode).toBe(201);
    const user = res.json<UserBody>();
    expect(res.headers.location).toBe(`/api/v1/users/${user.id}`);
    expect(user).toMatchObject({ email: input.email, name: input.name, role: 'customer' });
    expect(Number.isInteger(user.id)).toBe(true);
    expect(user.created_at).toMatch(RFC3339_UTC);
    expect(user.updated_at).toMatch(RFC3339_UTC);
  });

  it('never returns the password or any hash of it', async () => {
    const input = userInput({ password: 'a-very-secret-password' });
    const res = await t.request({ method: 'POST', url: '/api/v1/users', payload: input });
    expect(res.statusCode).toBe(201);
    expect(Object.keys(res.json() as object).sort()).toEqual(['created_at', 'email', 'id', 'metadata', 'name', 'role', 'updated_at']);
    expect(res.body).not.toContain('a-very-secret-password');
    expect(res.body).not.toMatch(/password|hash|scrypt/i);
  });

  it('the new user is readable at its Location', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/users', payload: userInput() });
    const created = res.json<UserBody>();
    const read = await t.request({ method: 'GET', url: res.headers.location as string, token: t.admin.token });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(created);
  });

  it('an explicit role "customer" is accepted', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/users', payload: userInput({ role: 'customer' }) });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ role: 'customer' });
  });

  it('role "admin" without a token is refused with 403 and nothing is created', async () => {
    const input = userInput({ role: 'admin' });
    const res = await t.request({ method: 'POST', url: '/api/v1/users', payload: input });
    expectProblem(res, 403, 'forbidden');
    expect(await rowsWithEmail(input.email)).toHaveLength(0);
  });

  it('role "admin" from a customer is refused with 403', async () => {
    const customer = await t.createUser('customer');
    const input = userInput({ role: 'admin' });
    const res = await t.request({ method: 'POST', url: '/api/v1/users', payload: input, token: customer.token });
    expectProblem(res, 403, 'forbidden');
    expect(await rowsWithEmail(input.email)).toHaveLength(0);
  });

  it('the unversioned alias /api/users answers the same, with a canonical /api/v1 Location', async () => {
    const res = await t.request({ method: 'POST', url: '/api/users', payload: userInput() });
    expect(res.statusCode).toBe(201);
    expect(res.headers.location).toBe(`/api/v1/users/${res.json<UserBody>().id}`);
  });
});

describe('an admin may create a user of any role', () => {
  it('admin creates an admin: 201, role admin', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/users', payload: userInput({ role: 'admin' }), token: t.admin.token });
    expect(res.statusCode).toBe(201);
    const user = res.json<UserBody>();
    expect(user.role).toBe('admin');
    expect((await userRow(user.id))?.role).toBe('admin');
  });

  it('admin creates a customer', async () => {
    const user = await register({ role: 'customer' }, t.admin.token);
    expect(user.role).toBe('customer');
  });
});

describe('email is unique case-insensitively (409 duplicate-resource)', () => {
  it('Ada@Example.com after ada@example.com is 409 and creates nothing', async () => {
    await register({ email: 'ada@example.com' });
    const res = await t.request({ method: 'POST', url: '/api/v1/users', payload: userInput({ email: 'Ada@Example.com' }) });
    expectProblem(res, 409, 'duplicate-resource');
    expect(await rowsWithEmail('ada@example.com')).toHaveLength(1);
  });

  it('the exact same email twice is 409', async () => {
    const first = await register();
    const res = await t.request({ method: 'POST', url: '/api/v1/users', payload: userInput({ email: first.email }) });
    expectProblem(res, 409, 'duplicate-resource');
  });

  it('a PUT taking another user\'s email in another case is 409', async () => {
    const taken = await register({ email: 'grace.hopper@example.com' });
    const customer = await t.createUser('customer');
    const res = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${customer.id}`,
      payload: { email: 'GRACE.Hopper@example.com', name: customer.name, current_password: TEST_PASSWORD },
      token: customer.token,
    });
    expectProblem(res, 409, 'duplicate-resource');
    expect((await userRow(customer.id))?.email).toBe(customer.email);
    expect(await rowsWithEmail(taken.email)).toHaveLength(1);
  });
});

describe('user fields are validated (422 validation-error with an entry per field)', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['an email that is not an email', { email: 'not-an-email' }, 'email'],
    ['an empty name', { name: '' }, 'name'],
    ['a name of 201 characters', { name: 'n'.repeat(201) }, 'name'],
    ['a password of 7 characters', { password: 'p'.repeat(7) }, 'password'],
    ['a password of 257 characters', { password: 'p'.repeat(257) }, 'password'],
    ['an unknown role', { role: 'superuser' }, 'role'],
    ['an unknown field', { nickname: 'Ada' }, 'nickname'],
  ];

  it.each(cases)('%s is 422 naming the field, and nothing is created', async (_label, override, field) => {
    const input = alter(userInput(), override);
    const res = await t.request({ method: 'POST', url: '/api/v1/users', payload: input });
    expectProblem(res, 422, 'validation-error');
    expect(errorFields(res)).toContain(field);
    const email = typeof input.email === 'string' ? input.email : '';
    expect(await rowsWithEmail(email)).toHaveLength(0);
  });

  it('a missing password is 422 naming password', async () => {
    const input = alter(userInput(), { password: undefined });
    const res = await t.request({ method: 'POST', url: '/api/v1/users', payload: input });
    expectProblem(res, 422, 'validation-error');
    expect(errorFields(res)).toContain('password');
  });

  it('several bad fields are each listed', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/users', payload: { email: 'nope', name: '', password: 'short' } });
    expectProblem(res, 422, 'validation-error');
    expect(errorFields(res)).toEqual(expect.arrayContaining(['email', 'name', 'password']));
  });

  it('the bounds themselves are valid: name of 1 and 200 characters, password of 8 and 256', async () => {
    expect((await register({ name: 'n', password: 'p'.repeat(8) })).name).toBe('n');
    expect((await register({ name: 'n'.repeat(200), password: 'p'.repeat(256) })).name).toBe('n'.repeat(200));
  });
});

describe('email and name are validated as a careful registration form would (422 naming the field)', () => {
  /** A raw JSON body, so escapes such as \u001b and a lone \ud800 reach the server's JSON parser as sent. */
  const rawPost = (json: string) =>
    t.request({ method: 'POST', url: '/api/v1/users', payload: json, headers: { 'content-type': 'application/json' } });

  it.each([
    'x1@b-.com',
    'x1@-b.com',
    'a@localhost',
    'a@b.c',
    'a@b.c0m',
    '-a@example.com',
    'a-@example.com',
    'a..b@example.com',
    'a@exa_mple.com',
    `${'l'.repeat(65)}@example.com`,
    `a@${'d'.repeat(63)}.${'d'.repeat(63)}.${'d'.repeat(63)}.${'d'.repeat(63)}.com`,
  ])('email %s is refused (regression: x1@b-.com was accepted)', async (email) => {
    const res = await t.request({ method: 'POST', url: '/api/v1/users', payload: userInput({ email }) });
    expectProblem(res, 422, 'validation-error');
    expect(errorFields(res)).toEqual(['email']);
    expect(await rowsWithEmail(email)).toHaveLength(0);
  });

  it.each(['o.k+tag@sub.ex-ample.co.uk', "o'brien@example.io", `${'l'.repeat(64)}@example.com`])('email %s is accepted', async (email) => {
    expect((await register({ email })).email).toBe(email);
  });

  it.each([
    ['ESC', String.raw`Ada \u001b[31mLovelace`],
    ['a C1 control (CSI)', String.raw`Ada \u009b31m`],
    ['DEL', String.raw`Ada\u007f`],
    ['a line feed', String.raw`Ada\nLovelace`],
    ['a tab', String.raw`Ada\tLovelace`],
    ['a lone high surrogate', String.raw`Ada \ud800`],
    ['a lone low surrogate', String.raw`\udc00 Ada`],
  ])('a name with %s is refused (regression: controls accepted, lone surrogates replaced)', async (_label, escaped) => {
    const email = userInput().email;
    const res = await rawPost(`{"email":"${email}","name":"${escaped}","password":"a-long-enough-password"}`);
    expectProblem(res, 422, 'validation-error');
    expect(errorFields(res)).toEqual(['name']);
    expect(await rowsWithEmail(email)).toHaveLength(0);
  });

  it('a name with a character outside the BMP (a surrogate pair) is kept exactly', async () => {
    const email = userInput().email;
    const res = await rawPost(`{"email":"${email}","name":"Ada \\ud83d\\ude00","password":"a-long-enough-password"}`);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json<UserBody>().name).toBe('Ada \u{1F600}');
  });

  it('PUT refuses a control character in the name too', async () => {
    const user = await t.createUser('customer');
    const res = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${user.id}`,
      payload: `{"id":${user.id},"email":"${user.email}","name":"Evil\\u001b]0;title\\u0007"}`,
      headers: { 'content-type': 'application/json' },
      token: user.token,
    });
    expectProblem(res, 422, 'validation-error');
    expect(errorFields(res)).toEqual(['name']);
  });

  it('/trpc refuses them the same way', async () => {
    const email = userInput().email;
    const res = await t.request({
      method: 'POST',
      url: '/trpc/users.create',
      payload: `{"email":"${email}","name":"Ada \\ud800","password":"a-long-enough-password"}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(422);
    const body = res.json<{ error: { data: { problem: { errors: { field: string }[] } } } }>();
    expect(body.error.data.problem.errors.map((e) => e.field)).toEqual(['name']);
    expect(await rowsWithEmail(email)).toHaveLength(0);
  });
});

describe('the password is stored as a slow salted hash', () => {
  it('the stored value is an scrypt hash that does not contain the password', async () => {
    const password = 'plain-text-must-not-be-stored';
    const user = await register({ password });
    const row = await userRow(user.id);
    expect(row?.passwordHash.startsWith('scrypt$')).toBe(true);
    expect(row?.passwordHash).not.toContain(password);
    expect(await verifyPassword(password, row?.passwordHash ?? '')).toBe(true);
  });

  it('two users with the same password get different hashes', async () => {
    const password = 'shared-password-123';
    const a = await register({ password });
    const b = await register({ password });
    const [rowA, rowB] = [await userRow(a.id), await userRow(b.id)];
    expect(rowA?.passwordHash).toBeDefined();
    expect(rowA?.passwordHash).not.toBe(rowB?.passwordHash);
  });
});

describe('PUT /users/{id} replaces a user; without password the password is kept', () => {
  it('a PUT without password keeps the password hash unchanged', async () => {
    const customer = await t.createUser('customer');
    const before = await userRow(customer.id);
    const res = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${customer.id}`,
      payload: { email: customer.email, name: 'Renamed Customer' },
      token: customer.token,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: customer.id, name: 'Renamed Customer' });
    expect((await userRow(customer.id))?.passwordHash).toBe(before?.passwordHash);
  });

  it('a PUT with password changes the hash to one of the new password', async () => {
    const customer = await t.createUser('customer');
    const before = await userRow(customer.id);
    const res = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${customer.id}`,
      payload: { email: customer.email, name: customer.name, password: 'a-brand-new-password', current_password: TEST_PASSWORD },
      token: customer.token,
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain('a-brand-new-password');
    const after = await userRow(customer.id);
    expect(after?.passwordHash).not.toBe(before?.passwordHash);
    expect(await verifyPassword('a-brand-new-password', after?.passwordHash ?? '')).toBe(true);
  });

  it('GET-modify-PUT works: read-only fields in the body (id, timestamps) are ignored', async () => {
    const customer = await t.createUser('customer');
    const current = (await getUser(customer.id, customer.token)).json<UserBody>();
    const res = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${customer.id}`,
      payload: { ...current, id: customer.id + 1000, name: 'Edited', created_at: '2000-01-01T00:00:00.000Z', updated_at: '2000-01-01T00:00:00.000Z' },
      token: customer.token,
    });
    expect(res.statusCode).toBe(200);
    const updated = res.json<UserBody>();
    expect(updated).toMatchObject({ id: customer.id, name: 'Edited', created_at: current.created_at });
    expect(updated.updated_at).not.toBe('2000-01-01T00:00:00.000Z');
  });

  it('repeating the same PUT changes nothing', async () => {
    const customer = await t.createUser('customer');
    const put = () =>
      t.request({ method: 'PUT', url: `/api/v1/users/${customer.id}`, payload: { email: customer.email, name: 'Same Twice' }, token: customer.token });
    const first = await put();
    const second = await put();
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual(first.json());
    expect(second.headers.etag).toBe(first.headers.etag);
  });

  it('an unknown field in a PUT body is 422', async () => {
    const customer = await t.createUser('customer');
    const res = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${customer.id}`,
      payload: { email: customer.email, name: customer.name, nickname: 'x' },
      token: customer.token,
    });
    expectProblem(res, 422, 'validation-error');
    expect(errorFields(res)).toContain('nickname');
  });

  it('a PUT with a 7-character password is 422 and keeps the old hash', async () => {
    const customer = await t.createUser('customer');
    const before = await userRow(customer.id);
    const res = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${customer.id}`,
      payload: { email: customer.email, name: customer.name, password: 'short77' },
      token: customer.token,
    });
    expectProblem(res, 422, 'validation-error');
    expect(errorFields(res)).toContain('password');
    expect((await userRow(customer.id))?.passwordHash).toBe(before?.passwordHash);
  });

  it('a PUT with a stale If-Match is 412 precondition-failed and changes nothing', async () => {
    const customer = await t.createUser('customer');
    const read = await getUser(customer.id, customer.token);
    const etag = read.headers.etag as string;
    const change = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${customer.id}`,
      payload: { email: customer.email, name: 'First Writer' },
      headers: { 'if-match': etag },
      token: customer.token,
    });
    expect(change.statusCode).toBe(200);
    const stale = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${customer.id}`,
      payload: { email: customer.email, name: 'Second Writer' },
      headers: { 'if-match': etag },
      token: customer.token,
    });
    expectProblem(stale, 412, 'precondition-failed');
    expect((await userRow(customer.id))?.name).toBe('First Writer');
  });
});

describe('who may PUT a user: yourself, or anyone as admin; only an admin changes a role', () => {
  it('a customer may PUT themself', async () => {
    const customer = await t.createUser('customer');
    const res = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${customer.id}`,
      payload: { email: customer.email, name: 'Self Service', role: 'customer' },
      token: customer.token,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'Self Service', role: 'customer' });
  });

  it('a customer may not make themself an admin (403) and stays a customer', async () => {
    const customer = await t.createUser('customer');
    const res = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${customer.id}`,
      payload: { email: customer.email, name: customer.name, role: 'admin' },
      token: customer.token,
    });
    expectProblem(res, 403, 'forbidden');
    expect((await userRow(customer.id))?.role).toBe('customer');
  });

  it("a customer's PUT of another user is 404 and changes nothing", async () => {
    const customer = await t.createUser('customer');
    const other = await t.createUser('customer');
    const res = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${other.id}`,
      payload: { email: other.email, name: 'Hijacked' },
      token: customer.token,
    });
    expectProblem(res, 404, 'not-found');
    expect((await userRow(other.id))?.name).toBe(other.name);
  });

  it("an admin may change another user's role", async () => {
    const customer = await t.createUser('customer');
    const res = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${customer.id}`,
      payload: { email: customer.email, name: customer.name, role: 'admin' },
      token: t.admin.token,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ role: 'admin' });
  });

  it('a PUT of a user that does not exist is 404', async () => {
    const res = await t.request({
      method: 'PUT',
      url: '/api/v1/users/999999',
      payload: userInput(),
      token: t.admin.token,
    });
    expectProblem(res, 404, 'not-found');
  });

  it('a PUT without a token is 401', async () => {
    const customer = await t.createUser('customer');
    const res = await t.request({ method: 'PUT', url: `/api/v1/users/${customer.id}`, payload: { email: customer.email, name: 'x' } });
    expectProblem(res, 401, 'unauthorized');
  });
});

describe('customers read only their own user record; another user is 404 (no existence leak)', () => {
  let customer: TestUser;
  let other: TestUser;
  beforeAll(async () => {
    customer = await t.createUser('customer');
    other = await t.createUser('customer');
  });

  it('a customer reads themself: 200', async () => {
    const res = await getUser(customer.id, customer.token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: customer.id, email: customer.email, role: 'customer' });
    expect(res.body).not.toMatch(/password|hash/i);
  });

  it("another user's id is 404, just like an id that does not exist", async () => {
    const theirs = await getUser(other.id, customer.token);
    expectProblem(theirs, 404, 'not-found');
    const missing = await getUser(999999, customer.token);
    expectProblem(missing, 404, 'not-found');
    expect((theirs.json() as { title: string }).title).toBe((missing.json() as { title: string }).title);
  });

  it('an admin reads any user', async () => {
    const res = await getUser(other.id, t.admin.token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: other.id });
  });

  it('an id that does not exist is 404 for an admin too', async () => {
    expectProblem(await getUser(999999, t.admin.token), 404, 'not-found');
  });

  it('reading a user without a token is 401', async () => {
    expectProblem(await t.request({ method: 'GET', url: `/api/v1/users/${customer.id}` }), 401, 'unauthorized');
  });
});

describe('GET /users lists users for admins and services with users:read', () => {
  it('an admin gets the list envelope {data, page, limit, has_more, next_cursor, prev_cursor}', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/users', token: t.admin.token });
    expect(res.statusCode).toBe(200);
    const body = res.json<UserListBody>();
    expect(Object.keys(body).sort()).toEqual(['data', 'has_more', 'limit', 'next_cursor', 'page', 'prev_cursor']);
    expect(body).toMatchObject({ page: 1, limit: 20 });
    expect(typeof body.has_more).toBe('boolean');
    expect(body.data.some((u) => u.id === t.admin.id)).toBe(true);
    expect(res.body).not.toMatch(/password|hash/i);
  });

  it('pages with limit and a Link header to the next page', async () => {
    await register();
    await register();
    const first = await t.request({ method: 'GET', url: '/api/v1/users?limit=1', token: t.admin.token });
    expect(first.statusCode).toBe(200);
    const page1 = first.json<UserListBody>();
    expect(page1.data).toHaveLength(1);
    expect(page1).toMatchObject({ limit: 1, has_more: true });
    expect(first.headers.link).toMatch(/[?&]cursor=[^>]*>; rel="next"/);
    const second = await t.request({ method: 'GET', url: '/api/v1/users?limit=1&page=2', token: t.admin.token });
    const page2 = second.json<UserListBody>();
    expect(page2.data[0]?.id).not.toBe(page1.data[0]?.id);
    expect(second.headers.link).toMatch(/rel="prev"/);
  });

  it('a customer is 403', async () => {
    const customer = await t.createUser('customer');
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/users', token: customer.token }), 403, 'forbidden');
  });

  it('no token is 401', async () => {
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/users' }), 401, 'unauthorized');
  });

  it('a service token with scope users:read may list', async () => {
    const token = await t.serviceToken(['users:read']);
    const res = await t.request({ method: 'GET', url: '/api/v1/users', token });
    expect(res.statusCode).toBe(200);
    expect(Array.isArray((res.json() as { data: unknown }).data)).toBe(true);
  });

  it('a service token without users:read is 403', async () => {
    const token = await t.serviceToken(['orders:read']);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/users', token }), 403, 'insufficient-scope');
  });

  it('limit out of range is 422, a non-integer page is 400', async () => {
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/users?limit=101', token: t.admin.token }), 422, 'validation-error');
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/users?page=abc', token: t.admin.token }), 400, 'malformed-request');
  });
});

describe('DELETE /users/{id}: 204, repeated 404; a user with orders cannot be deleted (409)', () => {
  it('an admin deletes a user: 204, then GET and a repeated DELETE are 404', async () => {
    const user = await register();
    const res = await t.request({ method: 'DELETE', url: `/api/v1/users/${user.id}`, token: t.admin.token });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(await userRow(user.id)).toBeUndefined();
    expectProblem(await getUser(user.id, t.admin.token), 404, 'not-found');
    expectProblem(await t.request({ method: 'DELETE', url: `/api/v1/users/${user.id}`, token: t.admin.token }), 404, 'not-found');
  });

  it('a user with orders is 409 and stays', async () => {
    const customer = await t.createUser('customer');
    await t.db.insert(orders).values({ customerId: customer.id });
    const res = await t.request({ method: 'DELETE', url: `/api/v1/users/${customer.id}`, token: t.admin.token });
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect((res.json() as { type: string }).type).toMatch(/^\/problems\/[a-z-]+$/);
    expect(await userRow(customer.id)).toBeDefined();
  });

  it("a customer's DELETE of another user is 404 and deletes nothing", async () => {
    const customer = await t.createUser('customer');
    const other = await t.createUser('customer');
    const res = await t.request({ method: 'DELETE', url: `/api/v1/users/${other.id}`, token: customer.token });
    expectProblem(res, 404, 'not-found');
    expect(await userRow(other.id)).toBeDefined();
  });

  it('DELETE without a token is 401 and deletes nothing', async () => {
    const user = await register();
    expectProblem(await t.request({ method: 'DELETE', url: `/api/v1/users/${user.id}` }), 401, 'unauthorized');
    expect(await userRow(user.id)).toBeDefined();
  });

  it('DELETE with a stale If-Match is 412 and deletes nothing', async () => {
    const user = await register();
    const res = await t.request({
      method: 'DELETE',
      url: `/api/v1/users/${user.id}`,
      headers: { 'if-match': '"not-the-current-tag"' },
      token: t.admin.token,
    });
    expectProblem(res, 412, 'precondition-failed');
    expect(await userRow(user.id)).toBeDefined();
  });
});

describe('changing your own email or password takes current_password (an admin resetting another user does not)', () => {
  const putSelf = (user: TestUser, body: Partial<UserReplaceBody>, token = user.token) =>
    t.request({ method: 'PUT', url: `/api/v1/users/${user.id}`, payload: { email: user.email, name: user.name, ...body }, token });

  it('a password change without current_password is 422 naming it, and the hash is kept (regression: a token alone sufficed)', async () => {
    const customer = await t.createUser('customer');
    const before = await userRow(customer.id);
    const res = await putSelf(customer, { password: 'a-brand-new-password' });
    expectProblem(res, 422, 'validation-error');
    expect(res.json<{ errors: { field: string; message: string }[] }>().errors).toEqual([
      { field: 'current_password', message: 'is required to change your own email or password' },
    ]);
    expect((await userRow(customer.id))?.passwordHash).toBe(before?.passwordHash);
  });

  it('a wrong current_password is 422 "is incorrect", and the hash is kept', async () => {
    const customer = await t.createUser('customer');
    const before = await userRow(customer.id);
    const res = await putSelf(customer, { password: 'a-brand-new-password', current_password: 'not-the-password' });
    expectProblem(res, 422, 'validation-error');
    expect(res.json<{ errors: { field: string; message: string }[] }>().errors).toEqual([{ field: 'current_password', message: 'is incorrect' }]);
    expect((await userRow(customer.id))?.passwordHash).toBe(before?.passwordHash);
  });

  it('with the right current_password the password changes; current_password is never returned', async () => {
    const customer = await t.createUser('customer');
    const res = await putSelf(customer, { password: 'a-brand-new-password', current_password: TEST_PASSWORD });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).not.toMatch(/current_password|correct-horse/);
    expect(await verifyPassword('a-brand-new-password', (await userRow(customer.id))?.passwordHash ?? '')).toBe(true);
  });

  it('an email change without current_password is 422 and the email is kept; with it, 200', async () => {
    const customer = await t.createUser('customer');
    const email = userInput().email;
    expectProblem(await putSelf(customer, { email }), 422, 'validation-error');
    expect((await userRow(customer.id))?.email).toBe(customer.email);
    const res = await putSelf(customer, { email, current_password: TEST_PASSWORD });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<UserBody>().email).toBe(email);
  });

  it('a name-only change needs no current_password', async () => {
    const customer = await t.createUser('customer');
    expect((await putSelf(customer, { name: 'Just A Name' })).statusCode).toBe(200);
  });

  it("an admin resets another user's email and password without current_password", async () => {
    const customer = await t.createUser('customer');
    const email = userInput().email;
    const res = await putSelf(customer, { email, password: 'reset-by-the-admin' }, t.admin.token);
    expect(res.statusCode, res.body).toBe(200);
    expect(await verifyPassword('reset-by-the-admin', (await userRow(customer.id))?.passwordHash ?? '')).toBe(true);
  });

  it('an admin changing their own password needs it like anyone else', async () => {
    const admin = await t.createUser('admin');
    expectProblem(await putSelf(admin, { password: 'a-brand-new-password' }), 422, 'validation-error');
    expect((await putSelf(admin, { password: 'a-brand-new-password', current_password: TEST_PASSWORD })).statusCode).toBe(200);
  });

  it('/trpc refuses a password change without current_password the same way', async () => {
    const customer = await t.createUser('customer');
    const res = await t.request({
      method: 'POST',
      url: '/trpc/users.replace',
      payload: { id: customer.id, email: customer.email, name: customer.name, password: 'a-brand-new-password' },
      token: customer.token,
    });
    expect(res.statusCode).toBe(422);
    const body = res.json<{ error: { data: { problem: { errors: { field: string }[] } } } }>();
    expect(body.error.data.problem.errors.map((e) => e.field)).toEqual(['current_password']);
  });
});

describe('the service keeps at least one admin: deleting or demoting the last one is 409 conflict', () => {
  // A database of its own: the suite above promotes users to admin.
  const s = useTestApp();

  const adminIds = async () => (await s.db.select({ id: users.id }).from(users).where(eq(users.role, 'admin'))).map((row) => row.id).sort();
  const demote = (target: TestUser, token: string) =>
    s.request({ method: 'PUT', url: `/api/v1/users/${target.id}`, payload: { email: target.email, name: target.name, role: 'customer' }, token });
  const remove = (target: TestUser, token: string) => s.request({ method: 'DELETE', url: `/api/v1/users/${target.id}`, token });

  it('the only admin deleting themself is 409 and stays (regression: schemathesis deleted the only admin)', async () => {
    const res = await remove(s.admin, s.admin.token);
    expectProblem(res, 409, 'conflict');
    expect(res.json<{ detail: string }>().detail).toMatch(/last admin/);
    expect(await adminIds()).toEqual([s.admin.id]);
  });

  it('the only admin demoting themself to customer is 409 and stays an admin', async () => {
    const res = await demote(s.admin, s.admin.token);
    expectProblem(res, 409, 'conflict');
    expect(res.json<{ detail: string }>().detail).toMatch(/last admin/);
    expect(await adminIds()).toEqual([s.admin.id]);
  });

  it('the same on /trpc', async () => {
    const res = await s.request({ method: 'POST', url: '/trpc/users.delete', payload: { id: s.admin.id }, token: s.admin.token });
    expect(res.statusCode).toBe(409);
    expect(await adminIds()).toEqual([s.admin.id]);
  });

  it('with a second admin, either may be demoted or deleted, but never the last one left', async () => {
    const second = await s.createUser('admin');
    expect((await demote(second, s.admin.token)).statusCode).toBe(200);
    expect(await adminIds()).toEqual([s.admin.id]);
    const third = await s.createUser('admin');
    expect((await remove(s.admin, third.token)).statusCode).toBe(204);
    expect(await adminIds()).toEqual([third.id]);
    expectProblem(await remove(third, third.token), 409, 'conflict');
    // The remaining admin is the suite's admin from here on.
    s.admin = third;
  });

  it('two admins demoting each other at once: one succeeds, the other is 409, one admin remains', async () => {
    const other = await s.createUser('admin');
    const [first, second] = await Promise.all([demote(other, s.admin.token), demote(s.admin, other.token)]);
    expect([first.statusCode, second.statusCode].sort()).toEqual([200, 409]);
    expect(await adminIds()).toHaveLength(1);
  });
});

describe('user reads are private and revalidated: Cache-Control, ETag, conditional GET', () => {
  let customer: TestUser;
  beforeAll(async () => {
    customer = await t.createUser('customer');
  });

  it(`GET /users/{id} carries Cache-Control "${PRIVATE_CACHE}", a strong ETag and Last-Modified`, async () => {
    const res = await getUser(customer.id, customer.token);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe(PRIVATE_CACHE);
    expect(res.headers.etag).toMatch(/^"[^"]+"$/);
    expect(res.headers['last-modified']).toBeDefined();
  });

  it('the user list is private too and carries an ETag', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/users', token: t.admin.token });
    expect(res.headers['cache-control']).toBe(PRIVATE_CACHE);
    expect(res.headers.etag).toBeDefined();
  });

  it('If-None-Match with the current ETag is 304 with no body and the same ETag and Cache-Control', async () => {
    const first = await getUser(customer.id, customer.token);
    const etag = first.headers.etag as string;
    const res = await t.request({ method: 'GET', url: `/api/v1/users/${customer.id}`, headers: { 'if-none-match': etag }, token: customer.token });
    expect(res.statusCode).toBe(304);
    expect(res.body).toBe('');
    expect(res.headers.etag).toBe(etag);
    expect(res.headers['cache-control']).toBe(PRIVATE_CACHE);
  });

  it('If-None-Match on the list with its current ETag is 304', async () => {
    const first = await t.request({ method: 'GET', url: '/api/v1/users', token: t.admin.token });
    const res = await t.request({ method: 'GET', url: '/api/v1/users', headers: { 'if-none-match': first.headers.etag as string }, token: t.admin.token });
    expect(res.statusCode).toBe(304);
  });

  it('If-Modified-Since at Last-Modified is 304', async () => {
    const first = await getUser(customer.id, customer.token);
    const res = await t.request({
      method: 'GET',
      url: `/api/v1/users/${customer.id}`,
      headers: { 'if-modified-since': first.headers['last-modified'] as string },
      token: customer.token,
    });
    expect(res.statusCode).toBe(304);
  });

  it('the ETag changes when the user changes, and the old tag then gets a 200', async () => {
    const user = await t.createUser('customer');
    const before = await getUser(user.id, user.token);
    await t.request({ method: 'PUT', url: `/api/v1/users/${user.id}`, payload: { email: user.email, name: 'Changed Name' }, token: user.token });
    const after = await t.request({
      method: 'GET',
      url: `/api/v1/users/${user.id}`,
      headers: { 'if-none-match': before.headers.etag as string },
      token: user.token,
    });
    expect(after.statusCode).toBe(200);
    expect(after.headers.etag).not.toBe(before.headers.etag);
  });
});

describe('bootstrap: ADMIN_EMAIL and ADMIN_PASSWORD make sure that admin exists', () => {
  const configFor = (email: string, password: string) =>
    loadConfig({ ADMIN_EMAIL: email, ADMIN_PASSWORD: password, JWT_SECRET: TEST_JWT.secret, NODE_ENV: 'test', DATA_DIR: dataDir });

  it('creates the admin, who can sign in with ADMIN_PASSWORD', async () => {
    const config = configFor('boss@example.com', 'boss-password-1');
    const result = await bootstrapAdmin(t.db, config);
    expect(result.admin).toMatchObject({ email: 'boss@example.com', role: 'admin' });
    const rows = await rowsWithEmail('boss@example.com');
    expect(rows).toHaveLength(1);
    expect(rows[0]?.role).toBe('admin');
    expect(await verifyPassword('boss-password-1', rows[0]?.passwordHash ?? '')).toBe(true);
    expect(result.generatedPassword).toBeUndefined();
  });

  it('is idempotent: a second run creates nothing and changes nothing', async () => {
    const config = configFor('twice@example.com', 'twice-password-1');
    const first = await bootstrapAdmin(t.db, config);
    const [before] = await rowsWithEmail('twice@example.com');
    const second = await bootstrapAdmin(t.db, config);
    const after = await rowsWithEmail('twice@example.com');
    expect(after).toHaveLength(1);
    expect(second.admin?.id).toBe(first.admin?.id);
    expect(after[0]?.passwordHash).toBe(before?.passwordHash);
    expect(after[0]?.updatedAt.getTime()).toBe(before?.updatedAt.getTime());
  });

  it('turns an existing customer with that email (in any case) into that admin', async () => {
    const customer = await t.createUser('customer', 'Promote.Me@example.com');
    const config = configFor('promote.me@example.com', 'promoted-password-1');
    const result = await bootstrapAdmin(t.db, config);
    expect(result.admin).toMatchObject({ id: customer.id, role: 'admin' });
    const rows = await rowsWithEmail('promote.me@example.com');
    expect(rows).toHaveLength(1);
    expect(rows[0]?.role).toBe('admin');
    expect(await verifyPassword('promoted-password-1', rows[0]?.passwordHash ?? '')).toBe(true);
  });

  it('without ADMIN_EMAIL outside development, creates no admin', async () => {
    const config = loadConfig({ JWT_SECRET: TEST_JWT.secret, NODE_ENV: 'test', DATA_DIR: dataDir });
    const result = await bootstrapAdmin(t.db, config);
    expect(result.admin).toBeUndefined();
    expect(await rowsWithEmail('admin@example.com')).toHaveLength(0);
  });

  it('in development without them, creates admin@example.com (an address the API accepts) once with a generated password', async () => {
    const config = loadConfig({ NODE_ENV: 'development', DATABASE_URL: 'memory://', DATA_DIR: dataDir });
    const first = await bootstrapAdmin(t.db, config);
    expect(first.admin).toMatchObject({ email: 'admin@example.com', role: 'admin' });
    // An address the users API accepts: the admin can sign in with it and PUT itself back unchanged.
    const put = await t.request({ method: 'PUT', url: `/api/v1/users/${first.admin?.id}`, token: t.admin.token, payload: { email: first.admin?.email, name: first.admin?.name, role: 'admin' } });
    expect(put.statusCode, put.body).toBe(200);
    expect(first.generatedPassword).toEqual(expect.any(String));
    const [row] = await rowsWithEmail('admin@example.com');
    expect(await verifyPassword(first.generatedPassword ?? '', row?.passwordHash ?? '')).toBe(true);
    const second = await bootstrapAdmin(t.db, config);
    expect(second.admin?.id).toBe(first.admin?.id);
    expect(second.generatedPassword).toBeUndefined();
    expect(await rowsWithEmail('admin@example.com')).toHaveLength(1);
  });
});
