/**
 * Staying signed in with the typed client (issue 10 item 10): `getToken: refreshingToken(...)`
 * renews the access token with the rotating refresh token, once for every call waiting on it (a
 * refresh token used twice would revoke the whole sign-in), and says plainly when the sign-in ended.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrderServiceClient, isProblem, refreshingToken, TokenRefreshError, type TokenResponse } from '../../client-sdk/src/index.ts';
import type { TestUser } from '../helpers/app.ts';
import { changeOwnPassword, insertClient, postToken, signInWithPassword, startOAuthServer, type OAuthTestServer, type TestClient } from '../helpers/oauth.ts';

let server: OAuthTestServer;
let app: TestClient;

beforeAll(async () => {
  server = await startOAuthServer();
  app = await insertClient(server.db);
});
afterAll(() => server?.close());

const signIn = async (user: TestUser): Promise<TokenResponse> => (await signInWithPassword(server.base, app.client.client_id, user)) as TokenResponse;

/** A fetch that counts the token requests it carries. */
function countingFetch(): { fetch: typeof fetch; renewals: () => number } {
  let renewals = 0;
  return {
    fetch: (input, init) => {
      if (String(input).endsWith('/oauth/token')) renewals += 1;
      return fetch(input, init);
    },
    renewals: () => renewals,
  };
}

describe('refreshingToken as the typed client getToken', () => {
  it('uses the access token while it is fresh, without renewing', async () => {
    const ada = await server.createUser('customer');
    const tokens = await signIn(ada);
    const counter = countingFetch();
    const getToken = refreshingToken({ url: server.base, clientId: app.client.client_id, tokens, fetch: counter.fetch });
    const client = createOrderServiceClient({ url: server.base, getToken });
    expect(await client.orders.list.query()).toMatchObject({ data: [] });
    expect(await getToken()).toBe(tokens.access_token);
    expect(counter.renewals()).toBe(0);
  });

  it('renews when the token is about to expire, keeps each rotated refresh token, and calls go on working', async () => {
    const ada = await server.createUser('customer');
    const tokens = await signIn(ada);
    const seen: TokenResponse[] = [];
    // Renew on every use: the access token is always "about to expire".
    const getToken = refreshingToken({ url: server.base, clientId: app.client.client_id, tokens, renewBeforeSeconds: 10_000, onTokens: (next) => seen.push(next) });
    const client = createOrderServiceClient({ url: server.base, getToken });
    for (let i = 0; i < 3; i += 1) expect(await client.orders.list.query()).toMatchObject({ data: [] });
    expect(seen).toHaveLength(3);
    const refreshTokens = [tokens.refresh_token, ...seen.map((t) => t.refresh_token)];
    expect(new Set(refreshTokens).size).toBe(4);
    // The rotation is real: the first refresh token is spent (and presenting it again ends the family).
    const replay = await postToken(server.base, { grant_type: 'refresh_token', client_id: app.client.client_id, refresh_token: tokens.refresh_token ?? '' });
    expect(replay.status).toBe(400);
  });

  it('calls made during one renewal share it: one token request, the sign-in survives', async () => {
    const ada = await server.createUser('customer');
    const tokens = await signIn(ada);
    const counter = countingFetch();
    const getToken = refreshingToken({ url: server.base, clientId: app.client.client_id, tokens, renewBeforeSeconds: 10_000, fetch: counter.fetch });
    // Separate clients: separate HTTP requests, each asking for a token at the same moment.
    const clients = Array.from({ length: 8 }, () => createOrderServiceClient({ url: server.base, getToken }));
    const pages = await Promise.all(clients.map((client) => client.orders.list.query()));
    expect(pages.every((page) => Array.isArray(page.data))).toBe(true);
    expect(counter.renewals()).toBe(1);
    // Had two renewals presented one refresh token, the family would be revoked and this would fail.
    expect(await createOrderServiceClient({ url: server.base, getToken }).users.get.query({ id: ada.id })).toMatchObject({ id: ada.id });
    expect(counter.renewals()).toBe(2);
  });

  it('a sign-in ended by a password change: TokenRefreshError invalid_grant, the call fails, nothing is sent anonymously', async () => {
    const ada = await server.createUser('customer');
    const tokens = await signIn(ada);
    const getToken = refreshingToken({ url: server.base, clientId: app.client.client_id, tokens, renewBeforeSeconds: 10_000 });
    await changeOwnPassword(server, ada);
    const failure = await getToken().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TokenRefreshError);
    expect(failure).toMatchObject({ status: 400, error: 'invalid_grant' });
    const client = createOrderServiceClient({ url: server.base, getToken });
    const callFailure = await client.orders.list.query().catch((error: unknown) => error);
    expect(isProblem(callFailure)).toBe(false);
    expect(String(callFailure)).toContain('sign in again');
  });
});
