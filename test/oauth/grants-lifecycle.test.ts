/**
 * What ends a user's grants (issue 10 item 3): a new password revokes the user's refresh tokens
 * (and unused codes) in the transaction that changes it; deleting the user removes them. And the
 * background purge of expired codes, refresh tokens and forgotten sign-in failures.
 */
import { eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { buildApp } from '../../server/app.ts';
import { oauthAuthorizationCodes, oauthRefreshTokens, signInFailures } from '../../server/db/schema.ts';
import { purgeExpiredGrants } from '../../server/oauth/purge.ts';
import { hashSecret } from '../../server/auth/secrets.ts';
import { defaultOAuthSettings } from '../../server/oauth/settings.ts';
import { ensureAdmin } from '../../server/modules/users/users.service.ts';
import { createUserRow, TEST_JWT, TEST_PASSWORD, type TestUser } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { codeFlowStart, insertClient, postToken, signInWithForm, signInWithPassword, type TestClient, useOAuthServer } from '../helpers/oauth.ts';

let app: TestClient;

const server = useOAuthServer();
beforeAll(async () => {
  app = await insertClient(server.db);
});

const signIn = async (user: TestUser): Promise<string> => (await signInWithPassword(server.base, app.client.client_id, user)).refresh_token;

const refresh = (token: string) => postToken(server.base, { grant_type: 'refresh_token', client_id: app.client.client_id, refresh_token: token });

const putUser = (user: TestUser, body: Record<string, unknown>, token = user.token) =>
  server.request({ method: 'PUT', url: `/api/v1/users/${user.id}`, token, payload: { email: user.email, name: user.name, ...body } });

describe('a new password ends the user\'s grants', () => {
  it('changing your own password revokes every refresh token of yours (every client) and unused codes', async () => {
    const ada = await server.createUser('customer');
    const other = await insertClient(server.db);
    const tokens = [await signIn(ada), await signIn(ada)];
    const otherClient = await postToken(server.base, { grant_type: 'password', client_id: other.client.client_id, username: ada.email, password: TEST_PASSWORD });
    const otherToken = ((await otherClient.json()) as { refresh_token: string }).refresh_token;
    const start = await codeFlowStart(app.client);
    const callback = await signInWithForm(server.base, start.query, { email: ada.email, password: TEST_PASSWORD });
    const bob = await server.createUser('customer');
    const bobs = await signIn(bob);

    expect((await putUser(ada, { password: 'a-brand-new-password', current_password: TEST_PASSWORD })).statusCode).toBe(200);

    for (const token of tokens) expect(await (await refresh(token)).json()).toMatchObject({ error: 'invalid_grant', error_description: 'The refresh token has been revoked.' });
    const viaOther = await postToken(server.base, { grant_type: 'refresh_token', client_id: other.client.client_id, refresh_token: otherToken });
    expect(viaOther.status).toBe(400);
    const code = callback.searchParams.get('code') ?? '';
    expect(await server.db.select().from(oauthAuthorizationCodes).where(eq(oauthAuthorizationCodes.codeHash, hashSecret(code)))).toEqual([]);
    // Someone else's sign-in is untouched; the new password signs in again.
    expect((await refresh(bobs)).status).toBe(200);
    const again = await postToken(server.base, { grant_type: 'password', client_id: app.client.client_id, username: ada.email, password: 'a-brand-new-password' });
    expect(again.status).toBe(200);
  });

  it('an admin resetting someone\'s password revokes theirs too', async () => {
    const grace = await server.createUser('customer');
    const token = await signIn(grace);
    expect((await putUser(grace, { password: 'reset-by-the-admin' }, server.admin.token)).statusCode).toBe(200);
    expect((await refresh(token)).status).toBe(400);
  });

  it('a new ADMIN_PASSWORD at start revokes that admin\'s grants; the same password keeps them', async () => {
    const root = await server.createUser('admin');
    const kept = await signIn(root);
    await ensureAdmin({ db: server.db, email: root.email, password: TEST_PASSWORD });
    const renewed = await refresh(kept);
    expect(renewed.status).toBe(200);
    const { refresh_token: current } = (await renewed.json()) as { refresh_token: string };
    await ensureAdmin({ db: server.db, email: root.email, password: 'the-new-admin-password' });
    expect((await refresh(current)).status).toBe(400);
  });

  it('a change without a new password (the name) keeps them', async () => {
    const linus = await server.createUser('customer');
    const token = await signIn(linus);
    expect((await putUser(linus, { name: 'Linus T.' })).statusCode).toBe(200);
    const refreshed = await refresh(token);
    expect(refreshed.status).toBe(200);
    // The next access token carries the new name.
    const { access_token } = (await refreshed.json()) as { access_token: string };
    const { decodeJwt } = await import('jose');
    expect(decodeJwt(access_token).name).toBe('Linus T.');
  });

  it('a refused password change (wrong current password) revokes nothing', async () => {
    const ken = await server.createUser('customer');
    const token = await signIn(ken);
    expect((await putUser(ken, { password: 'another-new-password', current_password: 'wrong-password' })).statusCode).toBe(422);
    expect((await refresh(token)).status).toBe(200);
  });
});

describe('deleting a user removes their grants', () => {
  it('refresh tokens and codes go with the user (foreign keys cascade)', async () => {
    const dennis = await server.createUser('customer');
    const token = await signIn(dennis);
    const start = await codeFlowStart(app.client);
    await signInWithForm(server.base, start.query, { email: dennis.email, password: TEST_PASSWORD });
    expect((await server.request({ method: 'DELETE', url: `/api/v1/users/${dennis.id}`, token: server.admin.token })).statusCode).toBe(204);
    expect(await server.db.select().from(oauthRefreshTokens).where(eq(oauthRefreshTokens.userId, dennis.id))).toEqual([]);
    expect(await server.db.select().from(oauthAuthorizationCodes).where(eq(oauthAuthorizationCodes.userId, dennis.id))).toEqual([]);
    expect(await (await refresh(token)).json()).toMatchObject({ error: 'invalid_grant' });
  });
});

describe('the purge of expired grants', () => {
  it('deletes expired codes and refresh tokens and forgotten failures; keeps used codes while their tokens may live', async () => {
    const user = await createUserRow(server.db, server.tokens);
    const clientId = app.client.client_id;
    const code = (name: string, expiresAt: ReturnType<typeof sql>, usedAt: ReturnType<typeof sql> | null) => ({
      codeHash: `purge-${name}`,
      clientId,
      userId: user.id,
      redirectUri: 'http://127.0.0.1:9/callback',
      codeChallenge: 'x'.repeat(43),
      scope: 'orders:read',
      expiresAt,
      usedAt,
    });
    await server.db.insert(oauthAuthorizationCodes).values([
      code('unused-expired', sql`now() - interval '1 second'`, null),
      code('unused-live', sql`now() + interval '60 seconds'`, null),
      code('used-recently', sql`now() - interval '1 hour'`, sql`now() - interval '1 hour'`),
      code('used-long-ago', sql`now() - interval '31 days'`, sql`now() - interval '31 days'`),
    ]);
    const token = (name: string, expiresAt: ReturnType<typeof sql>) => ({ tokenHash: `purge-${name}`, familyId: 'purge', clientId, userId: user.id, scope: 'orders:read', expiresAt });
    await server.db.insert(oauthRefreshTokens).values([token('expired', sql`now() - interval '1 second'`), token('live', sql`now() + interval '1 day'`)]);
    await server.db.insert(signInFailures).values([
      { accountKey: 'purge-forgotten', failures: 3, lastFailureAt: sql`now() - interval '1 hour'` },
      { accountKey: 'purge-recent', failures: 3, lastFailureAt: sql`now()` },
    ]);

    expect(await purgeExpiredGrants(server.db, defaultOAuthSettings)).toBeGreaterThanOrEqual(4);

    const codes = (await server.db.select({ hash: oauthAuthorizationCodes.codeHash }).from(oauthAuthorizationCodes)).map((r) => r.hash).filter((h) => h.startsWith('purge-'));
    expect(codes.sort()).toEqual(['purge-unused-live', 'purge-used-recently']);
    const tokens = (await server.db.select({ hash: oauthRefreshTokens.tokenHash }).from(oauthRefreshTokens)).map((r) => r.hash).filter((h) => h.startsWith('purge-'));
    expect(tokens).toEqual(['purge-live']);
    const failures = (await server.db.select({ key: signInFailures.accountKey }).from(signInFailures)).map((r) => r.key).filter((k) => k.startsWith('purge-'));
    expect(failures).toEqual(['purge-recent']);
  });

  it('the app purges in the background, and stops the job when it closes', async () => {
    const database = await createTestDatabase();
    const purging = await buildApp({ database, tokens: new TokenService(TEST_JWT), oauth: { purgeIntervalMs: 20 } });
    try {
      await purging.ready();
      await database.db.insert(signInFailures).values({ accountKey: 'purge-job', failures: 1, lastFailureAt: sql`now() - interval '1 hour'` });
      await vi.waitFor(async () => expect(await database.db.select().from(signInFailures)).toEqual([]), { timeout: 5000, interval: 20 });
    } finally {
      // preClose stops the job before the database closes: nothing runs on a closed database.
      await purging.close();
    }
  });
});
