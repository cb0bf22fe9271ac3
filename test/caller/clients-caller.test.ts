/**
 * The clients procedures called directly, with no HTTP (server/testing.ts, `createCaller`). Same
 * rules as over REST (docs/signing-in.md#oauth-clients); errors arrive as a TRPCError whose `cause`
 * is the DomainError that names the problem.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testCallerIdentity, createTestHarness, type TestHarness, type TestIdentity } from '../../server/testing.ts';
import { createCaller } from '../../server/router.ts';
import { createContextInner } from '../../server/trpc/context.ts';
import { clientRow, confidentialClientInput, insertRefreshToken, publicClientInput, refreshTokenExists, withoutSecret } from '../helpers/clients.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { expectDomainError } from '../helpers/problems.ts';
import { hashSecret } from '../../server/auth/secrets.ts';

let harness: TestHarness;
beforeAll(async () => {
  // The per-file database of the project (in-memory PGlite, or a PostgreSQL copy).
  harness = await createTestHarness({ database: await createTestDatabase() });
});
afterAll(async () => {
  await harness?.close();
});

const admin: TestIdentity = { role: 'admin', userId: 1, name: 'Admin' };
const customer: TestIdentity = { role: 'customer', userId: 2, name: 'Customer' };
const as = (identity: TestIdentity | null) => harness.caller(identity);

describe('clients.create registers a client (admin)', () => {
  it('a public client: the representation, no secret, nothing but null in secret_hash', async () => {
    const body = publicClientInput();
    const client = await as(admin).clients.create(body);
    expect(client).toMatchObject(body);
    expect(client.client_secret).toBeUndefined();
    expect((await clientRow(harness.db, client.client_id))?.secretHash).toBeNull();
  });

  it('a confidential client: its secret once, its hash in the table', async () => {
    const client = await as(admin).clients.create(confidentialClientInput());
    expect(client.client_secret).toEqual(expect.any(String));
    expect((await clientRow(harness.db, client.client_id))?.secretHash).toBe(hashSecret(client.client_secret ?? ''));
    expect(await as(admin).clients.get({ client_id: client.client_id })).not.toHaveProperty('client_secret');
  });

  it('bad input is UNPROCESSABLE_CONTENT / validation-error naming the field', async () => {
    const error = await expectDomainError(
      as(admin).clients.create(publicClientInput({ grant_types: ['client_credentials'], redirect_uris: [] })),
      'UNPROCESSABLE_CONTENT',
      'validation-error',
    );
    expect(error.errors?.map((e) => e.field)).toEqual(['grant_types']);
  });

  it('with an idempotency key, the replay is the client without its secret', async () => {
    const caller = createCaller(createContextInner({ db: harness.db, caller: testCallerIdentity(admin), idempotencyKey: 'caller-clients-1' }));
    const body = confidentialClientInput();
    const first = await caller.clients.create(body);
    expect(first.client_secret).toEqual(expect.any(String));
    const replayed = await caller.clients.create(body);
    expect(replayed).toEqual(withoutSecret(first));
  });
});

describe('who may call the clients procedures', () => {
  it('anonymous callers are UNAUTHORIZED', async () => {
    await expectDomainError(as(null).clients.list({}), 'UNAUTHORIZED', 'unauthorized');
  });

  it('customers are FORBIDDEN', async () => {
    await expectDomainError(as(customer).clients.create(publicClientInput()), 'FORBIDDEN', 'forbidden');
    await expectDomainError(as(customer).clients.list({}), 'FORBIDDEN', 'forbidden');
  });

  it('service clients are FORBIDDEN, whatever their scopes', async () => {
    const service: TestIdentity = { role: 'service', name: 'partner', scopes: ['clients:manage', 'orders:read'] };
    const res = as(service).clients.list({});
    await expect(res).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});

describe('clients.list, clients.get, clients.delete', () => {
  it('list pages newest first; get answers one; delete removes it with its refresh tokens', async () => {
    const a = await as(admin).clients.create(publicClientInput());
    const b = await as(admin).clients.create(publicClientInput());
    const page = await as(admin).clients.list({ limit: 2 });
    expect(page.data).toHaveLength(2);
    expect(page.has_more).toBe(true);
    const all = (await as(admin).clients.list({ limit: 100 })).data;
    expect(all.map((c) => c.client_id)).toEqual(expect.arrayContaining([a.client_id, b.client_id]));
    const created = all.map((c) => c.created_at);
    expect(created).toEqual([...created].sort().reverse());
    expect(await as(admin).clients.get({ client_id: a.client_id })).toMatchObject({ client_id: a.client_id, name: a.name });

    const { user } = await harness.createUser();
    const token = await insertRefreshToken(harness.db, a.client_id, user.id);
    await as(admin).clients.delete({ client_id: a.client_id });
    expect(await refreshTokenExists(harness.db, token)).toBe(false);
    await expectDomainError(as(admin).clients.get({ client_id: a.client_id }), 'NOT_FOUND', 'not-found');
    await expectDomainError(as(admin).clients.delete({ client_id: a.client_id }), 'NOT_FOUND', 'not-found');
  });
});
