/**
 * A sign-in (or a refresh or code grant) racing a password change, a user's deletion or its
 * client's deletion (found in review): what the sign-in earns (a refresh token, a code) is issued
 * in a transaction that re-reads the user (FOR SHARE, with the hash the password was checked
 * against) and the client (FOR KEY SHARE, first), so it is refused, or revoked by the change, and
 * never a 500 from a foreign key or a deadlock.
 *
 * The races are made real on PostgreSQL: the test holds the sign-in failure rows locked, so a
 * sign-in that has read the user's hash waits (at its backoff bookkeeping) while the change
 * completes. PGlite runs one transaction at a time, so there the same outcome is checked on the
 * issuing function itself.
 */
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { hashPassword } from '../../server/auth/password.ts';
import { oauthAuthorizationCodes, oauthClients, oauthRefreshTokens, signInFailures, users } from '../../server/db/schema.ts';
import { issueForSignIn } from '../../server/oauth/issue.ts';
import { TEST_PASSWORD, type TestUser } from '../helpers/app.ts';
import { onPostgres } from '../helpers/db.ts';
import {
  changeOwnPassword,
  codeFlowStart,
  getForm,
  insertClient,
  NEW_PASSWORD,
  postForm,
  postToken,
  REDIRECT_URI,
  signInWithForm,
  type TestClient,
  useOAuthServer,
} from '../helpers/oauth.ts';
import { untilLockAwaited } from '../helpers/waits.ts';

const server = useOAuthServer();

const passwordGrant = (client: TestClient, user: TestUser, password = TEST_PASSWORD) =>
  postToken(server.base, { grant_type: 'password', client_id: client.client.client_id, username: user.email, password });

/**
 * Starts `signIn` while the sign-in failure rows are locked, runs `meanwhile` to completion, then
 * lets the sign-in go on. A failed attempt first makes sure the user's rows exist to be locked.
 */
async function race<T>(user: TestUser, client: TestClient, signIn: () => Promise<T>, meanwhile: () => Promise<void>): Promise<T> {
  expect((await passwordGrant(client, user, 'wrong-password')).status).toBe(400);
  let pending: Promise<T> | undefined;
  await server.db.transaction(async (tx) => {
    await tx.execute(sql`select 1 from ${signInFailures} for update`);
    pending = signIn();
    // It reads the user's hash, then waits for the rows.
    // A session of this test's database waits for a lock (a fixed pause raced it on a busy machine).
    await untilLockAwaited(server.db, 'the sign-in waiting for the held rows');
    await meanwhile();
  });
  if (!pending) throw new Error('the sign-in was not started');
  return pending;
}

const refreshTokensOf = (user: TestUser) =>
  server.db.select({ revokedAt: oauthRefreshTokens.revokedAt }).from(oauthRefreshTokens).where(eq(oauthRefreshTokens.userId, user.id));

const changePassword = (user: TestUser) => changeOwnPassword(server, user);

const deleteUser = async (user: TestUser) => {
  expect((await server.request({ method: 'DELETE', url: `/api/v1/users/${user.id}`, token: server.admin.token })).statusCode).toBe(204);
};

const deleteClient = async (client: TestClient) => {
  expect((await server.request({ method: 'DELETE', url: `/api/v1/clients/${client.client.client_id}`, token: server.admin.token })).statusCode).toBe(204);
};

describe.runIf(onPostgres)('racing sign-ins on PostgreSQL', () => {
  it('a password grant checked against the old password while the password changes gets no token the change leaves alive', async () => {
    const ada = await server.createUser('customer');
    const app = await insertClient(server.db);
    const response = await race(ada, app, () => passwordGrant(app, ada), () => changePassword(ada));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_grant', error_description: 'The email or password is incorrect.' });
    expect((await refreshTokensOf(ada)).filter((row) => row.revokedAt === null)).toEqual([]);
  });

  it('the sign-in form likewise issues no code for the old password', async () => {
    const grace = await server.createUser('customer');
    const app = await insertClient(server.db);
    const { query } = await codeFlowStart(app.client);
    const form = await getForm(server.base, query);
    const response = await race(grace, app, () => postForm(server.base, { ...form.fields, email: grace.email, password: TEST_PASSWORD }, form.cookie), () => changePassword(grace));
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('The email or password is incorrect.');
    expect(await server.db.select().from(oauthAuthorizationCodes).where(eq(oauthAuthorizationCodes.userId, grace.id))).toEqual([]);
  });

  it('a user deleted during a password grant: invalid_grant, not a 500', async () => {
    const linus = await server.createUser('customer');
    const app = await insertClient(server.db);
    const response = await race(linus, app, () => passwordGrant(app, linus), () => deleteUser(linus));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('a client deleted during a password grant: invalid_client, not a 500', async () => {
    const ken = await server.createUser('customer');
    const app = await insertClient(server.db);
    const response = await race(ken, app, () => passwordGrant(app, ken), () => deleteClient(app));
    expect(response.status).toBeLessThan(500);
    expect(await response.json()).toMatchObject({ error: 'invalid_client' });
    expect(await refreshTokensOf(ken)).toEqual([]);
  });

  /**
   * Runs `grant` while the client is being deleted as DELETE /clients/{id} does: the client's row
   * FOR UPDATE, then the delete that removes its codes and tokens. The grant, started in between,
   * must not hold a code's or token's row the delete then waits for.
   */
  async function grantWhileClientDeleted(app: TestClient, grant: () => Promise<Response>): Promise<Response> {
    let pending: Promise<Response> | undefined;
    await server.db.transaction(async (tx) => {
      await tx.execute(sql`select 1 from ${oauthClients} where ${oauthClients.id} = ${app.client.client_id} for update`);
      pending = grant();
      // A session of this test's database waits for a lock (a fixed pause raced it on a busy machine).
      await untilLockAwaited(server.db, 'the sign-in waiting for the held rows');
      await tx.delete(oauthClients).where(eq(oauthClients.id, app.client.client_id));
    });
    if (!pending) throw new Error('the grant was not started');
    return pending;
  }

  it('a refresh grant while its client is being deleted waits for the deletion: invalid_client, never a deadlock', async () => {
    const lena = await server.createUser('customer');
    const app = await insertClient(server.db);
    const signedIn = await passwordGrant(app, lena);
    expect(signedIn.status).toBe(200);
    const { refresh_token } = (await signedIn.json()) as { refresh_token: string };
    const response = await grantWhileClientDeleted(app, () => postToken(server.base, { grant_type: 'refresh_token', client_id: app.client.client_id, refresh_token }));
    expect(response.status).toBeLessThan(500);
    expect(await response.json()).toMatchObject({ error: 'invalid_client' });
    expect(await refreshTokensOf(lena)).toEqual([]);
  });

  it('an authorization code grant while its client is being deleted likewise: invalid_client, never a deadlock', async () => {
    const mira = await server.createUser('customer');
    const app = await insertClient(server.db);
    const start = await codeFlowStart(app.client);
    const callback = await signInWithForm(server.base, start.query, { email: mira.email, password: TEST_PASSWORD });
    const code = String(callback.searchParams.get('code'));
    const response = await grantWhileClientDeleted(app, () =>
      postToken(server.base, { grant_type: 'authorization_code', client_id: app.client.client_id, code, redirect_uri: REDIRECT_URI, code_verifier: start.verifier }),
    );
    expect(response.status).toBeLessThan(500);
    expect(await response.json()).toMatchObject({ error: 'invalid_client' });
    expect(await refreshTokensOf(mira)).toEqual([]);
  });

  it('a user deleted during a form sign-in: the form again, not a 500; a deleted client: the refusal page', async () => {
    const dennis = await server.createUser('customer');
    const app = await insertClient(server.db);
    const { query } = await codeFlowStart(app.client);
    const form = await getForm(server.base, query);
    const submit = (user: TestUser) => () => postForm(server.base, { ...form.fields, email: user.email, password: TEST_PASSWORD }, form.cookie);
    const gone = await race(dennis, app, submit(dennis), () => deleteUser(dennis));
    expect(gone.status).toBe(400);
    expect(await gone.text()).toContain('The email or password is incorrect.');

    const barbara = await server.createUser('customer');
    const clientGone = await race(barbara, app, submit(barbara), () => deleteClient(app));
    expect(clientGone.status).toBe(400);
    expect(await clientGone.text()).toContain('Unknown application');
  });
});

describe('issuing what a sign-in earned re-reads the user and the client', () => {
  const issue = (signedIn: { user: { id: number }; passwordHash: string }, clientId: string) =>
    issueForSignIn(server.db, signedIn, clientId, async () => 'issued');

  const hashOf = async (user: TestUser) => {
    const [row] = await server.db.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, user.id));
    return row?.passwordHash ?? '';
  };

  it('issues for the user whose hash is still the one checked, and answers the user as the row is now', async () => {
    const ada = await server.createUser('customer');
    const app = await insertClient(server.db);
    const outcome = await issue({ user: { id: ada.id }, passwordHash: await hashOf(ada) }, app.client.client_id);
    expect(outcome).toMatchObject({ ok: true, issued: 'issued', user: { id: ada.id, email: ada.email, role: 'customer' } });
  });

  it('refuses a user whose password changed since it was checked, or who is gone', async () => {
    const grace = await server.createUser('customer');
    const app = await insertClient(server.db);
    const checked = await hashOf(grace);
    await server.db.update(users).set({ passwordHash: await hashPassword(NEW_PASSWORD) }).where(eq(users.id, grace.id));
    expect(await issue({ user: { id: grace.id }, passwordHash: checked }, app.client.client_id)).toEqual({ ok: false, refused: 'user' });
    await server.db.delete(users).where(eq(users.id, grace.id));
    expect(await issue({ user: { id: grace.id }, passwordHash: checked }, app.client.client_id)).toEqual({ ok: false, refused: 'user' });
  });

  it('refuses a client that is gone, and issues nothing', async () => {
    const linus = await server.createUser('customer');
    const app = await insertClient(server.db);
    await server.db.delete(oauthClients).where(eq(oauthClients.id, app.client.client_id));
    let ran = false;
    const outcome = await issueForSignIn(server.db, { user: { id: linus.id }, passwordHash: await hashOf(linus) }, app.client.client_id, async () => {
      ran = true;
    });
    expect(outcome).toEqual({ ok: false, refused: 'client' });
    expect(ran).toBe(false);
  });
});
