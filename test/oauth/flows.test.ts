/**
 * Every grant of the authorization server, driven by oauth4webapi (a certified OAuth client) over
 * real HTTP: discovery, authorization code + PKCE, refresh rotation and reuse detection,
 * revocation, client credentials, the password grant, and their refusals.
 */
import { eq, sql } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it } from 'vitest';
import { PERSON_SCOPES, SCOPES } from '../../server/auth/policy.ts';
import { oauthAuthorizationCodes, oauthRefreshTokens } from '../../server/db/schema.ts';
import { hashSecret } from '../../server/auth/secrets.ts';
import { TEST_PASSWORD, type TestUser } from '../helpers/app.ts';
import {
  codeFlow,
  codeFlowStart,
  insecure,
  insertClient,
  postToken,
  REDIRECT_URI,
  signInWithForm,
  type TestClient,
  useOAuthServer,
} from '../helpers/oauth.ts';

let ada: TestUser;
let app: TestClient;

const server = useOAuthServer();
beforeAll(async () => {
  ada = await server.createUser('customer');
  app = await insertClient(server.db);
});

const credentials = () => ({ email: ada.email, password: TEST_PASSWORD });

/** The OAuth error an oauth4webapi call failed with (`error` of the body or the challenge). */
async function oauthErrorOf(promise: Promise<unknown>): Promise<{ error: string; status: number; description?: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError) return { error: error.error, status: error.status, ...(error.error_description ? { description: error.error_description } : {}) };
    if (error instanceof oauth.WWWAuthenticateChallengeError) {
      const body = (await error.response.json()) as { error: string };
      return { error: body.error, status: error.status };
    }
    throw error;
  }
  throw new Error('the call succeeded');
}

async function refresh(client: TestClient, refreshToken: string, parameters?: Record<string, string>) {
  const response = await oauth.refreshTokenGrantRequest(server.as, client.client, client.auth, refreshToken, { ...insecure, ...(parameters ? { additionalParameters: parameters } : {}) });
  return oauth.processRefreshTokenResponse(server.as, client.client, response);
}

async function familyOf(refreshToken: string) {
  const [row] = await server.db.select().from(oauthRefreshTokens).where(eq(oauthRefreshTokens.tokenHash, hashSecret(refreshToken)));
  if (!row) throw new Error('no such refresh token');
  return server.db.select().from(oauthRefreshTokens).where(eq(oauthRefreshTokens.familyId, row.familyId));
}

describe('discovery (RFC 8414)', () => {
  it('names the endpoints, grants, PKCE S256, client auth methods and scopes under the issuer', async () => {
    const { as, base } = server;
    expect(as.issuer).toBe(base);
    expect(as.authorization_endpoint).toBe(`${base}/oauth/authorize`);
    expect(as.token_endpoint).toBe(`${base}/oauth/token`);
    expect(as.revocation_endpoint).toBe(`${base}/oauth/revoke`);
    expect(as.response_types_supported).toEqual(['code']);
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    expect(as.grant_types_supported).toEqual(['authorization_code', 'refresh_token', 'client_credentials', 'password']);
    expect(as.token_endpoint_auth_methods_supported).toEqual(['none', 'client_secret_basic', 'client_secret_post']);
    expect(as.revocation_endpoint_auth_methods_supported).toEqual(['none', 'client_secret_basic', 'client_secret_post']);
    expect(as.scopes_supported).toEqual([...SCOPES]);
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
  });

  it('is cacheable JSON; other methods are 405 with Allow', async () => {
    const response = await fetch(`${server.base}/.well-known/oauth-authorization-server`);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    const post = await fetch(`${server.base}/.well-known/oauth-authorization-server`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });
});

describe('authorization code with PKCE', () => {
  it('signs in through the form and exchanges the code for an access token and a refresh token', async () => {
    const { tokens, callback, start } = await codeFlow(server, app, credentials());
    expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);
    expect(callback.searchParams.get('state')).toBe(start.state);
    expect(callback.searchParams.get('iss')).toBe(server.base);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(900);
    expect(tokens.refresh_token).toEqual(expect.any(String));
    // No scope asked: what a customer can use of the client's, nothing admin-only.
    expect(tokens.scope).toBe(PERSON_SCOPES.customer.join(' '));
    const claims = decodeJwt(tokens.access_token);
    expect(claims).toMatchObject({ sub: String(ada.id), role: 'customer', name: ada.name, scope: PERSON_SCOPES.customer.join(' ') });
    // The token works on the API.
    const me = await fetch(`${server.base}/api/v1/users/${ada.id}`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(me.status).toBe(200);
  });

  it('grants the scope asked for when it lies within the client\'s', async () => {
    const { tokens } = await codeFlow(server, app, credentials(), { scope: 'orders:read orders:write' });
    expect(tokens.scope).toBe('orders:read orders:write');
    expect(decodeJwt(tokens.access_token).scope).toBe('orders:read orders:write');
  });

  it('grants a person only what their role can use: a customer asking for admin scopes gets the rest, an admin everything', async () => {
    const { tokens } = await codeFlow(server, app, credentials(), { scope: 'orders:read products:write clients:manage' });
    expect(tokens.scope).toBe('orders:read');
    expect((await refresh(app, tokens.refresh_token ?? '')).scope).toBe('orders:read');
    const admin = await codeFlow(server, app, { email: server.admin.email, password: TEST_PASSWORD });
    expect(admin.tokens.scope).toBe(SCOPES.join(' '));
  });

  it('a customer asking only for what no customer can use is sent back with invalid_scope, and no code', async () => {
    const start = await codeFlowStart(app.client, { scope: 'products:write clients:manage' });
    const callback = await signInWithForm(server.base, start.query, credentials());
    expect(callback.searchParams.get('error')).toBe('invalid_scope');
    expect(callback.searchParams.get('code')).toBeNull();
    expect(callback.searchParams.get('state')).toBe(start.state);
    expect(callback.searchParams.get('iss')).toBe(server.base);
  });

  it('answers with no-store and no-cache', async () => {
    const start = await codeFlowStart(app.client);
    const callback = await signInWithForm(server.base, start.query, credentials());
    const response = await postToken(server.base, {
      grant_type: 'authorization_code',
      client_id: app.client.client_id,
      code: callback.searchParams.get('code') ?? '',
      redirect_uri: REDIRECT_URI,
      code_verifier: start.verifier,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('pragma')).toBe('no-cache');
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('refuses a wrong code_verifier with invalid_grant, and the code still works with the right one', async () => {
    const start = await codeFlowStart(app.client);
    const callback = await signInWithForm(server.base, start.query, credentials());
    const params = oauth.validateAuthResponse(server.as, app.client, callback, start.state);
    const wrong = oauth.authorizationCodeGrantRequest(server.as, app.client, app.auth, params, REDIRECT_URI, oauth.generateRandomCodeVerifier(), insecure);
    expect(await oauthErrorOf(wrong.then((r) => oauth.processAuthorizationCodeResponse(server.as, app.client, r)))).toMatchObject({
      error: 'invalid_grant',
      status: 400,
    });
    const right = await oauth.authorizationCodeGrantRequest(server.as, app.client, app.auth, params, REDIRECT_URI, start.verifier, insecure);
    expect((await oauth.processAuthorizationCodeResponse(server.as, app.client, right)).access_token).toEqual(expect.any(String));
  });

  it('refuses another redirect_uri than the authorization request\'s', async () => {
    const start = await codeFlowStart(app.client);
    const callback = await signInWithForm(server.base, start.query, credentials());
    const response = await postToken(server.base, {
      grant_type: 'authorization_code',
      client_id: app.client.client_id,
      code: callback.searchParams.get('code') ?? '',
      redirect_uri: 'http://127.0.0.1:9/other',
      code_verifier: start.verifier,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_grant', type: '/problems/invalid-grant', status: 400 });
  });

  it('refuses a code presented by another client', async () => {
    const other = await insertClient(server.db);
    const start = await codeFlowStart(app.client);
    const callback = await signInWithForm(server.base, start.query, credentials());
    const params = oauth.validateAuthResponse(server.as, app.client, callback, start.state);
    const response = await oauth.authorizationCodeGrantRequest(server.as, other.client, other.auth, params, REDIRECT_URI, start.verifier, insecure);
    expect(await oauthErrorOf(oauth.processAuthorizationCodeResponse(server.as, other.client, response))).toMatchObject({ error: 'invalid_grant' });
  });

  it('a code is single-use: presenting it again is invalid_grant and revokes the refresh tokens it issued', async () => {
    const start = await codeFlowStart(app.client);
    const callback = await signInWithForm(server.base, start.query, credentials());
    const params = oauth.validateAuthResponse(server.as, app.client, callback, start.state);
    const first = await oauth.processAuthorizationCodeResponse(
      server.as,
      app.client,
      await oauth.authorizationCodeGrantRequest(server.as, app.client, app.auth, params, REDIRECT_URI, start.verifier, insecure),
    );
    const again = oauth.authorizationCodeGrantRequest(server.as, app.client, app.auth, params, REDIRECT_URI, start.verifier, insecure);
    expect(await oauthErrorOf(again.then((r) => oauth.processAuthorizationCodeResponse(server.as, app.client, r)))).toMatchObject({ error: 'invalid_grant' });
    const refreshToken = first.refresh_token ?? '';
    expect((await familyOf(refreshToken)).every((row) => row.revokedAt !== null)).toBe(true);
    expect(await oauthErrorOf(refresh(app, refreshToken))).toMatchObject({ error: 'invalid_grant' });
  });

  it('an expired code is invalid_grant', async () => {
    const start = await codeFlowStart(app.client);
    const callback = await signInWithForm(server.base, start.query, credentials());
    const code = callback.searchParams.get('code') ?? '';
    await server.db
      .update(oauthAuthorizationCodes)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(oauthAuthorizationCodes.codeHash, hashSecret(code)));
    const params = oauth.validateAuthResponse(server.as, app.client, callback, start.state);
    const response = await oauth.authorizationCodeGrantRequest(server.as, app.client, app.auth, params, REDIRECT_URI, start.verifier, insecure);
    expect(await oauthErrorOf(oauth.processAuthorizationCodeResponse(server.as, app.client, response))).toMatchObject({
      error: 'invalid_grant',
      description: 'The authorization code has expired.',
    });
  });

  it('codes live 60 seconds and are stored only as a hash', async () => {
    const start = await codeFlowStart(app.client);
    const callback = await signInWithForm(server.base, start.query, credentials());
    const code = callback.searchParams.get('code') ?? '';
    const [row] = await server.db
      .select({ codeHash: oauthAuthorizationCodes.codeHash, ttl: sql<number>`extract(epoch from ${oauthAuthorizationCodes.expiresAt} - ${oauthAuthorizationCodes.createdAt})::float8` })
      .from(oauthAuthorizationCodes)
      .where(eq(oauthAuthorizationCodes.codeHash, hashSecret(code)));
    expect(row?.codeHash).not.toBe(code);
    expect(Number(row?.ttl)).toBeGreaterThan(59);
    expect(Number(row?.ttl)).toBeLessThanOrEqual(60.5);
  });
});

describe('refresh tokens', () => {
  it('rotate on every use: a new refresh token and access token, the old one used up', async () => {
    const { tokens } = await codeFlow(server, app, credentials());
    const first = tokens.refresh_token ?? '';
    const next = await refresh(app, first);
    expect(next.refresh_token).toEqual(expect.any(String));
    expect(next.refresh_token).not.toBe(first);
    expect(decodeJwt(next.access_token)).toMatchObject({ sub: String(ada.id), role: 'customer' });
    const third = await refresh(app, next.refresh_token ?? '');
    expect(third.refresh_token).not.toBe(next.refresh_token);
    const family = await familyOf(first);
    expect(family).toHaveLength(3);
    expect(family.filter((row) => row.usedAt === null)).toHaveLength(1);
    // Stored as hashes, living 30 days.
    expect(family.map((row) => row.tokenHash)).not.toContain(first);
    for (const row of family) expect((row.expiresAt.getTime() - row.createdAt.getTime()) / 86_400_000).toBeCloseTo(30, 2);
  });

  it('a used refresh token presented again revokes the whole family (RFC 9700 4.14)', async () => {
    const { tokens } = await codeFlow(server, app, credentials());
    const stolen = tokens.refresh_token ?? '';
    const legit = await refresh(app, stolen);
    expect(await oauthErrorOf(refresh(app, stolen))).toMatchObject({ error: 'invalid_grant', status: 400 });
    // The legitimate client's current token is revoked too: everyone signs in again.
    expect(await oauthErrorOf(refresh(app, legit.refresh_token ?? ''))).toMatchObject({ error: 'invalid_grant' });
    expect((await familyOf(stolen)).every((row) => row.revokedAt !== null)).toBe(true);
  });

  it('may narrow the scope but never widen it; the family keeps the original scope', async () => {
    const { tokens } = await codeFlow(server, app, credentials(), { scope: 'orders:read orders:write' });
    const narrowed = await refresh(app, tokens.refresh_token ?? '', { scope: 'orders:read' });
    expect(narrowed.scope).toBe('orders:read');
    expect(decodeJwt(narrowed.access_token).scope).toBe('orders:read');
    const whole = await refresh(app, narrowed.refresh_token ?? '');
    expect(whole.scope).toBe('orders:read orders:write');
    expect(await oauthErrorOf(refresh(app, whole.refresh_token ?? '', { scope: 'orders:read products:write' }))).toMatchObject({ error: 'invalid_scope' });
    // The refused request changed nothing: the token still works.
    expect((await refresh(app, whole.refresh_token ?? '')).access_token).toEqual(expect.any(String));
  });

  it('an expired refresh token is invalid_grant', async () => {
    const { tokens } = await codeFlow(server, app, credentials());
    const token = tokens.refresh_token ?? '';
    await server.db
      .update(oauthRefreshTokens)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(oauthRefreshTokens.tokenHash, hashSecret(token)));
    expect(await oauthErrorOf(refresh(app, token))).toMatchObject({ error: 'invalid_grant', description: 'The refresh token has expired. Sign in again.' });
  });

  it('belongs to its client: another client presenting it gets invalid_grant', async () => {
    const other = await insertClient(server.db);
    const { tokens } = await codeFlow(server, app, credentials());
    expect(await oauthErrorOf(refresh(other, tokens.refresh_token ?? ''))).toMatchObject({ error: 'invalid_grant' });
    expect((await refresh(app, tokens.refresh_token ?? '')).access_token).toEqual(expect.any(String));
  });

  it('two concurrent refreshes of one token: exactly one succeeds', async () => {
    const { tokens } = await codeFlow(server, app, credentials());
    const token = tokens.refresh_token ?? '';
    const results = await Promise.allSettled([refresh(app, token), refresh(app, token)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((r) => r.status === 'rejected');
    expect(refused?.status === 'rejected' && refused.reason instanceof oauth.ResponseBodyError && refused.reason.error).toBe('invalid_grant');
    // The second presentation is a reuse: the family, the winner's new token included, is revoked.
    expect((await familyOf(token)).every((row) => row.revokedAt !== null)).toBe(true);
  });

  it('a client without the refresh_token grant gets no refresh token', async () => {
    const noRefresh = await insertClient(server.db, { grantTypes: ['authorization_code', 'password'] });
    const { tokens } = await codeFlow(server, noRefresh, credentials());
    expect(tokens.refresh_token).toBeUndefined();
  });
});

describe('revocation (RFC 7009)', () => {
  it('revokes a refresh token and its family; the client can no longer refresh', async () => {
    const { tokens } = await codeFlow(server, app, credentials());
    const rotated = await refresh(app, tokens.refresh_token ?? '');
    const response = await oauth.revocationRequest(server.as, app.client, app.auth, rotated.refresh_token ?? '', { ...insecure, additionalParameters: { token_type_hint: 'refresh_token' } });
    await oauth.processRevocationResponse(response);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await oauthErrorOf(refresh(app, rotated.refresh_token ?? ''))).toMatchObject({ error: 'invalid_grant', description: 'The refresh token has been revoked.' });
    expect((await familyOf(tokens.refresh_token ?? '')).every((row) => row.revokedAt !== null)).toBe(true);
  });

  it('answers 200 for an unknown token and for an access token (stateless: it expires on its own)', async () => {
    const unknown = await oauth.revocationRequest(server.as, app.client, app.auth, 'no-such-token', insecure);
    await oauth.processRevocationResponse(unknown);
    const { tokens } = await codeFlow(server, app, credentials());
    const access = await oauth.revocationRequest(server.as, app.client, app.auth, tokens.access_token, { ...insecure, additionalParameters: { token_type_hint: 'access_token' } });
    await oauth.processRevocationResponse(access);
    expect(access.status).toBe(200);
    // The refresh token of that sign-in is untouched.
    expect((await refresh(app, tokens.refresh_token ?? '')).access_token).toEqual(expect.any(String));
  });

  it('refuses another client\'s token and leaves it working', async () => {
    const other = await insertClient(server.db);
    const { tokens } = await codeFlow(server, app, credentials());
    const response = await oauth.revocationRequest(server.as, other.client, other.auth, tokens.refresh_token ?? '', insecure);
    expect(await oauthErrorOf(oauth.processRevocationResponse(response))).toMatchObject({ error: 'invalid_grant' });
    expect((await refresh(app, tokens.refresh_token ?? '')).access_token).toEqual(expect.any(String));
  });

  it('needs client authentication and a token', async () => {
    const anonymous = await postToken(server.base, { token: 'x' }, {}, '/oauth/revoke');
    expect(anonymous.status).toBe(400);
    expect(anonymous.headers.get('www-authenticate')).toBeNull();
    expect(await anonymous.json()).toMatchObject({ error: 'invalid_client', status: 400 });
    const noToken = await postToken(server.base, { client_id: app.client.client_id }, {}, '/oauth/revoke');
    expect(noToken.status).toBe(400);
    expect(await noToken.json()).toMatchObject({ error: 'invalid_request', error_description: 'The token parameter is required.' });
  });
});

describe('client credentials', () => {
  let backend: TestClient;
  beforeAll(async () => {
    backend = await insertClient(server.db, { confidential: true, firstParty: false, grantTypes: ['client_credentials'], scopes: ['orders:read', 'products:write'], name: 'Warehouse' });
  });

  const grant = (auth: oauth.ClientAuth, scope?: string) =>
    oauth
      .clientCredentialsGrantRequest(server.as, backend.client, auth, new URLSearchParams(scope ? { scope } : {}), insecure)
      .then((response) => oauth.processClientCredentialsResponse(server.as, backend.client, response));

  it('with client_secret_basic: a service token, sub = client id, no refresh token', async () => {
    const tokens = await grant(oauth.ClientSecretBasic(backend.secret ?? ''));
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.scope).toBe('orders:read products:write');
    expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: backend.client.client_id, role: 'service', name: 'Warehouse', scope: 'orders:read products:write' });
  });

  it('with client_secret_post, narrowed to one scope', async () => {
    const tokens = await grant(oauth.ClientSecretPost(backend.secret ?? ''), 'orders:read');
    expect(decodeJwt(tokens.access_token)).toMatchObject({ role: 'service', scope: 'orders:read' });
    const orders = await fetch(`${server.base}/api/v1/orders`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(orders.status).toBe(200);
  });

  it('Basic credentials are form-urlencoded inside (RFC 6749 2.3.1)', async () => {
    const odd = await insertClient(server.db, { confidential: true, grantTypes: ['client_credentials'] });
    // A secret with characters that form-urlencoding changes.
    const secret = 'a+b c:d%e/é';
    const { oauthClients } = await import('../../server/db/schema.ts');
    await server.db.update(oauthClients).set({ secretHash: hashSecret(secret) }).where(eq(oauthClients.id, odd.client.client_id));
    const response = await oauth.clientCredentialsGrantRequest(server.as, odd.client, oauth.ClientSecretBasic(secret), new URLSearchParams(), insecure);
    expect((await oauth.processClientCredentialsResponse(server.as, odd.client, response)).access_token).toEqual(expect.any(String));
  });

  it('a wrong secret is invalid_client: 401 with a Basic challenge when sent with Basic, 400 without a challenge in the body', async () => {
    const response = await postToken(server.base, { grant_type: 'client_credentials' }, { authorization: `Basic ${btoa(`${backend.client.client_id}:wrong`)}` });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic realm="order-service"/);
    expect(await response.json()).toMatchObject({ error: 'invalid_client', type: '/problems/invalid-client', status: 401, title: 'Client authentication failed' });
    // RFC 6749 5.2: the challenge only answers a client that used the Authorization header, so a
    // form another site posts never makes the browser ask for a password.
    const post = await postToken(server.base, { grant_type: 'client_credentials', client_id: backend.client.client_id, client_secret: 'wrong' });
    expect(post.status).toBe(400);
    expect(post.headers.get('www-authenticate')).toBeNull();
    expect(await post.json()).toMatchObject({ error: 'invalid_client', type: '/problems/invalid-client', status: 400 });
  });

  it('any Authorization header that fails is 401 with the challenge (not Basic, malformed Basic)', async () => {
    for (const authorization of ['Bearer abc', 'Basic !!!', `Basic ${btoa('no-colon')}`]) {
      const response = await postToken(server.base, { grant_type: 'client_credentials' }, { authorization });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Basic realm="order-service"/);
      expect(await response.json()).toMatchObject({ error: 'invalid_client', status: 401 });
    }
  });

  it('two authentication methods at once are invalid_request', async () => {
    const response = await postToken(
      server.base,
      { grant_type: 'client_credentials', client_secret: backend.secret ?? '' },
      { authorization: `Basic ${btoa(`${backend.client.client_id}:${backend.secret}`)}` },
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('a confidential client without its secret, an unknown client, and no client at all are invalid_client (400: no header was used)', async () => {
    const bodies: Record<string, string>[] = [{ grant_type: 'client_credentials', client_id: backend.client.client_id }, { grant_type: 'client_credentials', client_id: 'nobody' }, { grant_type: 'client_credentials' }];
    for (const body of bodies) {
      const response = await postToken(server.base, body);
      expect(response.status).toBe(400);
      expect(response.headers.get('www-authenticate')).toBeNull();
      expect(await response.json()).toMatchObject({ error: 'invalid_client', status: 400 });
    }
  });

  it('a public client may not use it (unauthorized_client)', async () => {
    const publicClient = await insertClient(server.db, { grantTypes: ['client_credentials'] });
    const response = await postToken(server.base, { grant_type: 'client_credentials', client_id: publicClient.client.client_id });
    expect(await response.json()).toMatchObject({ error: 'unauthorized_client', status: 400 });
  });

  it('a scope beyond the client\'s is invalid_scope', async () => {
    expect(await oauthErrorOf(grant(oauth.ClientSecretBasic(backend.secret ?? ''), 'orders:read clients:manage'))).toMatchObject({ error: 'invalid_scope', status: 400 });
    expect(await oauthErrorOf(grant(oauth.ClientSecretBasic(backend.secret ?? ''), 'orders:read  products:write'))).toMatchObject({ error: 'invalid_scope' });
  });

  it('a grant the client is not registered for is unauthorized_client', async () => {
    const response = await postToken(server.base, { grant_type: 'password', username: ada.email, password: TEST_PASSWORD }, { authorization: `Basic ${btoa(`${backend.client.client_id}:${backend.secret}`)}` });
    expect(await response.json()).toMatchObject({ error: 'unauthorized_client' });
  });
});

describe('password grant', () => {
  const passwordGrant = (client: TestClient, username: string, password: string, scope?: string) =>
    oauth
      .genericTokenEndpointRequest(server.as, client.client, client.auth, 'password', new URLSearchParams({ username, password, ...(scope ? { scope } : {}) }), insecure)
      .then((response) => oauth.processGenericTokenEndpointResponse(server.as, client.client, response));

  it('signs a first-party app\'s user in: access and refresh token', async () => {
    const tokens = await passwordGrant(app, ada.email.toUpperCase(), TEST_PASSWORD, 'orders:read');
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: String(ada.id), role: 'customer', scope: 'orders:read' });
    expect((await refresh(app, tokens.refresh_token ?? '')).scope).toBe('orders:read');
  });

  it('an admin gets the admin role, and without a scope asked, every scope', async () => {
    const tokens = await passwordGrant(app, server.admin.email, TEST_PASSWORD);
    expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: String(server.admin.id), role: 'admin', scope: SCOPES.join(' ') });
  });

  it('a customer without a scope asked gets the customer scopes; asking only for admin scopes is invalid_scope, and nothing is issued', async () => {
    const tokens = await passwordGrant(app, ada.email, TEST_PASSWORD);
    expect(tokens.scope).toBe('orders:read orders:write payments:write users:read users:write');
    const before = await server.db.$count(oauthRefreshTokens);
    expect(await oauthErrorOf(passwordGrant(app, ada.email, TEST_PASSWORD, 'products:write'))).toMatchObject({
      error: 'invalid_scope',
      status: 400,
      description: 'The scope asks for nothing your role can use.',
    });
    expect(await server.db.$count(oauthRefreshTokens)).toBe(before);
  });

  it('is refused to third-party clients (unauthorized_client)', async () => {
    const thirdParty = await insertClient(server.db, { firstParty: false });
    expect(await oauthErrorOf(passwordGrant(thirdParty, ada.email, TEST_PASSWORD))).toMatchObject({ error: 'unauthorized_client', status: 400 });
  });

  it('wrong password and unknown email get the same neutral invalid_grant', async () => {
    const wrong = await oauthErrorOf(passwordGrant(app, ada.email, 'not-the-password'));
    const unknown = await oauthErrorOf(passwordGrant(app, 'nobody-here@example.com', 'not-the-password'));
    expect(wrong).toEqual({ error: 'invalid_grant', status: 400, description: 'The email or password is incorrect.' });
    expect(unknown).toEqual(wrong);
  });

  it('needs username and password', async () => {
    const response = await postToken(server.base, { grant_type: 'password', client_id: app.client.client_id, username: ada.email });
    expect(await response.json()).toMatchObject({ error: 'invalid_request', error_description: 'The password parameter is required.' });
  });
});

describe('the token endpoint\'s own refusals', () => {
  it('an unknown grant_type is unsupported_grant_type; a missing one invalid_request', async () => {
    const unknown = await postToken(server.base, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: app.client.client_id });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ error: 'unsupported_grant_type', type: '/problems/unsupported-grant-type' });
    const implicit = await oauthErrorOf(
      oauth.genericTokenEndpointRequest(server.as, app.client, app.auth, 'implicit', new URLSearchParams(), insecure).then((r) => oauth.processGenericTokenEndpointResponse(server.as, app.client, r)),
    );
    expect(implicit.error).toBe('unsupported_grant_type');
    const missing = await postToken(server.base, { client_id: app.client.client_id });
    expect(await missing.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('errors carry OAuth and problem fields in one application/json body, not cacheable', async () => {
    const response = await postToken(server.base, { grant_type: 'refresh_token', client_id: app.client.client_id, refresh_token: 'nope' });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('pragma')).toBe('no-cache');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      error: 'invalid_grant',
      error_description: 'The refresh token is invalid or was issued to another client.',
      type: '/problems/invalid-grant',
      title: 'Invalid grant',
      status: 400,
      detail: 'The refresh token is invalid or was issued to another client.',
      instance: '/oauth/token',
    });
    expect(body.request_id).toBe(response.headers.get('x-request-id'));
  });

  it('accepts JSON bodies too', async () => {
    const response = await fetch(`${server.base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'password', client_id: app.client.client_id, username: ada.email, password: TEST_PASSWORD }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String) });
  });

  it('a repeated parameter, a non-string JSON value, another media type: invalid_request, nothing issued', async () => {
    const repeated = await postToken(server.base, `grant_type=password&client_id=${app.client.client_id}&username=${encodeURIComponent(ada.email)}&password=x&password=${TEST_PASSWORD}`);
    expect(await repeated.json()).toMatchObject({ error: 'invalid_request', error_description: 'Invalid request: parameter password may be sent only once.' });
    const json = await fetch(`${server.base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: ['password'] }) });
    expect(await json.json()).toMatchObject({ error: 'invalid_request' });
    const text = await fetch(`${server.base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'grant_type=password' });
    expect(text.status).toBe(415);
    expect(await text.json()).toMatchObject({ error: 'invalid_request', type: '/problems/unsupported-media-type' });
    const get = await fetch(`${server.base}/oauth/token`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST, OPTIONS');
  });

  it('the JSON API still refuses form bodies with 415', async () => {
    const response = await fetch(`${server.base}/api/v1/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=x%40example.com&name=X&password=long-enough-password',
    });
    expect(response.status).toBe(415);
  });
});
