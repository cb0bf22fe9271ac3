/**
 * The users procedures called directly, with no HTTP (server/testing.ts): registration, roles,
 * who reads and lists whom, the last admin, and the current password (docs/api.md#resources and #authentication-and-authorization).
 * Failures arrive as a TRPCError whose `cause` is the DomainError naming the problem.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestHarness, TEST_PASSWORD, type TestCaller, type TestHarness, type TestHarnessOptions } from '../../server/testing.ts';
import { createTestDatabase, onPostgres } from '../helpers/db.ts';
import { expectDomainError } from '../helpers/problems.ts';
import { userInput } from '../helpers/users.ts';

// On the postgres project each harness runs on that server's per-file database copy.
const harnessOptions = async (): Promise<TestHarnessOptions> => (onPostgres ? { database: await createTestDatabase() } : {});

let harness: TestHarness;
let admin: TestCaller;
let anonymous: TestCaller;

beforeAll(async () => {
  harness = await createTestHarness(await harnessOptions());
  admin = (await harness.createUser({ role: 'admin' })).caller;
  anonymous = harness.caller(null);
});
afterAll(async () => {
  await harness?.close();
});

describe('users.create: anyone registers a customer; only an admin chooses another role', () => {
  it('an anonymous caller registers a customer, answered without any password', async () => {
    const input = userInput();
    const user = await anonymous.users.create(input);
    expect(user).toMatchObject({ email: input.email, name: input.name, role: 'customer' });
    expect(Object.keys(user).sort()).toEqual(['created_at', 'email', 'id', 'metadata', 'name', 'role', 'updated_at']);
  });

  it('role admin from an anonymous caller or a customer is FORBIDDEN', async () => {
    const { caller: customer } = await harness.createUser();
    await expectDomainError(anonymous.users.create(userInput({ role: 'admin' })), 'FORBIDDEN', 'forbidden');
    await expectDomainError(customer.users.create(userInput({ role: 'admin' })), 'FORBIDDEN', 'forbidden');
  });

  it('an admin creates an admin', async () => {
    expect((await admin.users.create(userInput({ role: 'admin' }))).role).toBe('admin');
  });

  it('an email already taken, in any case, is CONFLICT duplicate-resource naming email', async () => {
    const first = await anonymous.users.create(userInput());
    const error = await expectDomainError(anonymous.users.create(userInput({ email: first.email.toUpperCase() })), 'CONFLICT', 'duplicate-resource');
    expect(error.errors?.map((e) => e.field)).toEqual(['email']);
  });

  it('a short password is UNPROCESSABLE_CONTENT validation-error', async () => {
    await expectDomainError(anonymous.users.create(userInput({ password: 'short' })), 'UNPROCESSABLE_CONTENT', 'validation-error');
  });
});

describe('users.get: yourself, or anyone as admin; another user looks missing', () => {
  it('a customer reads themself; another customer is NOT_FOUND, like a missing id', async () => {
    const { user: ada, caller } = await harness.createUser();
    const { user: bob } = await harness.createUser();
    expect(await caller.users.get({ id: ada.id })).toEqual(ada);
    await expectDomainError(caller.users.get({ id: bob.id }), 'NOT_FOUND', 'not-found');
    await expectDomainError(caller.users.get({ id: 2_000_000_000 }), 'NOT_FOUND', 'not-found');
  });

  it('an admin reads anyone', async () => {
    const { user } = await harness.createUser();
    expect(await admin.users.get({ id: user.id })).toEqual(user);
  });

  it('an anonymous caller is UNAUTHORIZED', async () => {
    const { user } = await harness.createUser();
    await expectDomainError(anonymous.users.get({ id: user.id }), 'UNAUTHORIZED', 'unauthorized');
  });
});

describe('users.list: admins (and services with users:read) only', () => {
  it('an admin lists users in id order', async () => {
    const { user } = await harness.createUser();
    const page = await admin.users.list({ limit: 100 });
    expect(page.data.map((u) => u.id)).toContain(user.id);
    const ids = page.data.map((u) => u.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it('a customer is FORBIDDEN', async () => {
    const { caller } = await harness.createUser();
    await expectDomainError(caller.users.list({}), 'FORBIDDEN', 'forbidden');
  });

  it('a service with users:read may list', async () => {
    const page = await harness.caller({ role: 'service', scopes: ['users:read'] }).users.list({ limit: 1 });
    expect(page.data).toHaveLength(1);
  });
});

describe('changing your own email or password needs current_password; an admin changing another user does not', () => {
  it('without current_password your own password change is UNPROCESSABLE_CONTENT naming it', async () => {
    const { user, caller } = await harness.createUser();
    const error = await expectDomainError(caller.users.replace({ ...user, password: 'a-new-long-password' }), 'UNPROCESSABLE_CONTENT', 'validation-error');
    expect(error.errors?.map((e) => e.field)).toEqual(['current_password']);
  });

  it('a wrong current_password is refused the same way', async () => {
    const { user, caller } = await harness.createUser();
    const change = caller.users.replace({ ...user, password: 'a-new-long-password', current_password: 'not-the-password' });
    const error = await expectDomainError(change, 'UNPROCESSABLE_CONTENT', 'validation-error');
    expect(error.errors?.map((e) => e.field)).toEqual(['current_password']);
  });

  it('with the right current_password the change is made', async () => {
    const { user, caller } = await harness.createUser();
    const email = userInput().email;
    const changed = await caller.users.replace({ ...user, email, current_password: TEST_PASSWORD });
    expect(changed.email).toBe(email);
  });

  it('a name change needs no password', async () => {
    const { user, caller } = await harness.createUser();
    expect((await caller.users.replace({ ...user, name: 'Renamed' })).name).toBe('Renamed');
  });

  it('an admin sets another user\'s password without it', async () => {
    const { user } = await harness.createUser();
    expect(await admin.users.replace({ ...user, password: 'set-by-the-admin' })).toMatchObject({ id: user.id });
  });

  it('a customer may not make themself an admin', async () => {
    const { user, caller } = await harness.createUser();
    await expectDomainError(caller.users.replace({ ...user, role: 'admin' }), 'FORBIDDEN', 'forbidden');
  });
});

describe('the service keeps one admin: the last one can be neither deleted nor demoted', () => {
  // A database of its own, so that the admins of the other tests do not count.
  let alone: TestHarness;
  beforeAll(async () => {
    alone = await createTestHarness(await harnessOptions());
  });
  afterAll(async () => {
    await alone?.close();
  });

  it('the only admin deleting or demoting themself is CONFLICT; with a second admin both are allowed', async () => {
    const { user: first, caller } = await alone.createUser({ role: 'admin' });
    await expectDomainError(caller.users.delete({ id: first.id }), 'CONFLICT', 'conflict');
    await expectDomainError(caller.users.replace({ ...first, role: 'customer' }), 'CONFLICT', 'conflict');
    expect((await caller.users.get({ id: first.id })).role).toBe('admin');

    const { user: second } = await alone.createUser({ role: 'admin' });
    expect((await caller.users.replace({ ...second, role: 'customer' })).role).toBe('customer');
    await expectDomainError(caller.users.delete({ id: first.id }), 'CONFLICT', 'conflict');
    const { user: third } = await alone.createUser({ role: 'admin' });
    await caller.users.delete({ id: third.id });
    await expectDomainError(caller.users.get({ id: third.id }), 'NOT_FOUND', 'not-found');
  });
});

describe('users.patch: yourself or anyone as admin, the rules of PUT (docs/api.md#patch)', () => {
  it('merges your own metadata key by key; another customer is NOT_FOUND; your own email takes current_password', async () => {
    const { user, caller } = await harness.createUser();
    const first = await caller.users.patch({ id: user.id, format: 'merge-patch', document: { metadata: { crm_id: 'C-1', tier: 'gold' } } });
    const patched = await caller.users.patch({ id: user.id, format: 'json-patch', document: [{ op: 'remove', path: '/metadata/tier' }, { op: 'replace', path: '/name', value: 'Ada King' }] });
    expect(patched).toMatchObject({ name: 'Ada King', metadata: { crm_id: 'C-1' } });
    expect(Object.keys(patched.metadata)).toEqual(['crm_id']);
    expect(first.metadata).toEqual({ crm_id: 'C-1', tier: 'gold' });
    const { caller: other } = await harness.createUser();
    await expectDomainError(other.users.patch({ id: user.id, format: 'merge-patch', document: { metadata: {} } }), 'NOT_FOUND', 'not-found');
    const email = `caller-patch-${user.id}@example.com`;
    await expectDomainError(caller.users.patch({ id: user.id, format: 'merge-patch', document: { email } }), 'UNPROCESSABLE_CONTENT', 'validation-error');
    expect((await caller.users.patch({ id: user.id, format: 'merge-patch', document: { email, current_password: TEST_PASSWORD } })).email).toBe(email);
  });

  it('a stale If-Match is PRECONDITION_FAILED and changes nothing', async () => {
    const { user, caller } = await harness.createUser();
    await caller.users.patch({ id: user.id, format: 'merge-patch', document: { metadata: { a: '1' } } });
    const stale = harness.caller({ role: 'admin' }, { preconditions: { ifMatch: ['"stale"'] } }).users.patch({ id: user.id, format: 'merge-patch', document: { metadata: { a: '2' } } });
    await expectDomainError(stale, 'PRECONDITION_FAILED', 'precondition-failed');
    expect((await caller.users.get({ id: user.id })).metadata).toEqual({ a: '1' });
  });
});
