/**
 * The token and authorization endpoints under random parameters (fast-check, fixed seed):
 *   - never a 5xx, whatever arrives;
 *   - never a token for a bad request: a valid request spoiled in any one way gets a 4xx OAuth
 *     error and no token;
 *   - never a redirect to a URI that is not registered for the client: every 3xx of
 *     /oauth/authorize goes to exactly the registered redirect URI the request named;
 *   - no form POST without the served CSRF token yields a code.
 */
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_PASSWORD, type TestUser } from '../helpers/app.ts';
import { insertClient, REDIRECT_URI, type TestClient, useOAuthServer } from '../helpers/oauth.ts';

const SEED = 20_250_310;

let ada: TestUser;
let firstParty: TestClient;
let thirdParty: TestClient;
let backend: TestClient;
const OTHER_REDIRECT = 'com.example.app:/oauth/callback';

// A backoff no run reaches, so a valid sign-in stays valid throughout.
const server = useOAuthServer({ oauth: { backoff: { freeFailures: 1_000_000 } } });
beforeAll(async () => {
  ada = await server.createUser('customer');
  firstParty = await insertClient(server.db, { scopes: ['orders:read', 'orders:write'], redirectUris: [REDIRECT_URI, OTHER_REDIRECT] });
  thirdParty = await insertClient(server.db, { firstParty: false, scopes: ['orders:read'] });
  backend = await insertClient(server.db, { confidential: true, firstParty: false, grantTypes: ['client_credentials'], scopes: ['orders:read', 'products:write'] });
});

const oddText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('', ' ', '%00', '\u0000', '<script>alert(1)</script>', '"\'><', '../../etc', 'a'.repeat(5000), 'null', '[]', '{}'),
);

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

function tokenRequest(body: Record<string, unknown> | string, headers: Record<string, string>, json: boolean) {
  return server.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded', ...headers },
    payload: typeof body === 'string' ? body : json ? JSON.stringify(body) : new URLSearchParams(body as Record<string, string>).toString(),
  });
}

function expectNoToken(response: LightMyRequestResponse) {
  expect(response.statusCode, response.body).toBeGreaterThanOrEqual(400);
  expect(response.statusCode, response.body).toBeLessThan(500);
  const body = response.json<Record<string, unknown>>();
  expect(body.access_token).toBeUndefined();
  expect(body.refresh_token).toBeUndefined();
  expect(body.error).toEqual(expect.any(String));
  expect(body.type).toEqual(expect.stringMatching(/^\/problems\//));
}

describe('POST /oauth/token', () => {
  it('random parameters never cause a 5xx, and every error is an OAuth error with problem fields', async () => {
    const name = fc.constantFrom('grant_type', 'client_id', 'client_secret', 'username', 'password', 'scope', 'code', 'code_verifier', 'redirect_uri', 'refresh_token');
    const value = fc.oneof(
      oddText,
      fc.constantFrom('password', 'client_credentials', 'refresh_token', 'authorization_code', firstParty.client.client_id, backend.client.client_id, ada.email, 'orders:read'),
    );
    const request = fc.record({
      params: fc.array(fc.tuple(name, value), { maxLength: 8 }),
      json: fc.boolean(),
      jsonValue: fc.option(fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 }), fc.object({ maxDepth: 1 })), { nil: undefined }),
      authorization: fc.option(
        fc.oneof(
          oddText,
          fc.constant('Basic !!!'),
          fc.constant(basic(backend.client.client_id, 'wrong')),
          oddText.map((t) => `Basic ${Buffer.from(t).toString('base64')}`),
          fc.tuple(oddText, oddText).map(([id, secret]) => basic(id, secret)),
        ),
        { nil: undefined },
      ),
    });
    await fc.assert(
      fc.asyncProperty(request, async ({ params, json, jsonValue, authorization }) => {
        const body = json
          ? Object.fromEntries([...params, ...(jsonValue === undefined ? [] : [['grant_type', jsonValue] as const])])
          : params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
        const response = await tokenRequest(body, authorization === undefined ? {} : { authorization }, json);
        expect(response.statusCode, response.body).toBeLessThan(500);
        expect(response.headers['cache-control']).toBe('no-store');
        if (response.statusCode !== 200) {
          const problem = response.json<Record<string, unknown>>();
          expect(problem.error).toEqual(expect.any(String));
          expect(problem.status).toBe(response.statusCode);
        }
      }),
      { seed: SEED, numRuns: 150 },
    );
  });

  /** A valid request of each kind, and the ways to spoil it, each of which must leave it bad. */
  const spoilers: Record<string, (base: Record<string, string>) => { body: Record<string, string>; headers?: Record<string, string> }> = {
    'wrong password': (b) => ({ body: { ...b, password: `${TEST_PASSWORD}!` } }),
    'unknown user': (b) => ({ body: { ...b, username: `x${ada.email}` } }),
    'third-party client': (b) => ({ body: { ...b, client_id: thirdParty.client.client_id } }),
    'unknown client': (b) => ({ body: { ...b, client_id: 'no-such-client' } }),
    'scope beyond the client': (b) => ({ body: { ...b, scope: 'orders:read clients:manage' } }),
    'malformed scope': (b) => ({ body: { ...b, scope: 'orders:read,orders:write' } }),
    'unknown grant': (b) => ({ body: { ...b, grant_type: `${b.grant_type}x` } }),
    'missing grant': ({ grant_type: _, ...b }) => ({ body: b }),
    'secret for a public client': (b) => ({ body: { ...b, client_secret: 'anything' } }),
    'wrong Basic secret': (b) => ({ body: { ...b, client_id: backend.client.client_id }, headers: { authorization: basic(backend.client.client_id, 'wrong') } }),
  };
  const backendSpoilers: Record<string, (base: Record<string, string>) => { body: Record<string, string>; headers?: Record<string, string> }> = {
    'wrong secret': (b) => ({ body: { ...b, client_secret: `${backend.secret}x` } }),
    'no secret': ({ client_secret: _, ...b }) => ({ body: b }),
    'two methods': (b) => ({ body: b, headers: { authorization: basic(backend.client.client_id, backend.secret ?? '') } }),
    'scope beyond the client': (b) => ({ body: { ...b, scope: 'users:read' } }),
    'password grant': (b) => ({ body: { ...b, grant_type: 'password', username: ada.email, password: TEST_PASSWORD } }),
    'refresh grant with a bogus token': (b) => ({ body: { ...b, grant_type: 'refresh_token', refresh_token: 'x'.repeat(43) } }),
    'another client id': (b) => ({ body: { ...b, client_id: firstParty.client.client_id } }),
  };

  it('a valid request spoiled in any way never gets a token', async () => {
    const passwordBase = { grant_type: 'password', client_id: firstParty.client.client_id, username: ada.email, password: TEST_PASSWORD };
    const backendBase = { grant_type: 'client_credentials', client_id: backend.client.client_id, client_secret: backend.secret ?? '' };
    // The unspoiled requests do work: the spoiling is what refuses them.
    expect((await tokenRequest(passwordBase, {}, false)).statusCode).toBe(200);
    expect((await tokenRequest(backendBase, {}, true)).statusCode).toBe(200);
    const spoiled = fc.oneof(
      fc.record({ base: fc.constant(passwordBase), spoil: fc.subarray(Object.keys(spoilers), { minLength: 1 }).map((keys) => keys.map((k) => spoilers[k])) }),
      fc.record({ base: fc.constant(backendBase), spoil: fc.subarray(Object.keys(backendSpoilers), { minLength: 1 }).map((keys) => keys.map((k) => backendSpoilers[k])) }),
    );
    await fc.assert(
      fc.asyncProperty(spoiled, fc.boolean(), async ({ base, spoil }, json) => {
        let request: { body: Record<string, string>; headers?: Record<string, string> } = { body: base };
        for (const change of spoil) {
          if (!change) continue;
          const next = change(request.body);
          request = { body: next.body, headers: { ...request.headers, ...next.headers } };
        }
        expectNoToken(await tokenRequest(request.body, request.headers ?? {}, json));
      }),
      { seed: SEED, numRuns: 60 },
    );
  });
});

describe('GET and POST /oauth/authorize', () => {
  const registered = [REDIRECT_URI, OTHER_REDIRECT];
  const redirectUri = fc.oneof(
    fc.constantFrom(...registered),
    fc.constantFrom(`${REDIRECT_URI}/`, `${REDIRECT_URI}?x=1`, `${REDIRECT_URI}#f`, 'https://evil.example/callback', '//evil.example', 'javascript:alert(1)', 'http://127.0.0.1:9/CALLBACK', 'com.example.app:/oauth/callback/../x'),
    fc.webUrl(),
    oddText,
  );
  const query = () =>
    fc.record(
      {
        response_type: fc.oneof(fc.constantFrom('code', 'token', 'code id_token'), oddText),
        client_id: fc.oneof(fc.constantFrom(firstParty.client.client_id, thirdParty.client.client_id, backend.client.client_id), oddText),
        redirect_uri: redirectUri,
        scope: fc.oneof(fc.constantFrom('orders:read', 'orders:read orders:write', 'clients:manage'), oddText),
        state: oddText,
        code_challenge: fc.oneof(fc.constant('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'), oddText),
        code_challenge_method: fc.oneof(fc.constantFrom('S256', 'plain', 's256'), oddText),
      },
      { requiredKeys: [] },
    );

  function checkAnswer(response: LightMyRequestResponse, sent: Record<string, string>) {
    expect(response.statusCode, response.body).toBeLessThan(500);
    if (response.statusCode >= 300 && response.statusCode < 400) {
      // Only to the registered redirect URI the request named, exactly.
      expect(registered).toContain(sent.redirect_uri);
      const location = String(response.headers.location);
      expect(location.startsWith(`${sent.redirect_uri}?`)).toBe(true);
      expect(new URL(location).searchParams.get('code')).toBeNull();
    } else {
      expect(response.headers.location).toBeUndefined();
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.body).not.toMatch(/<script/i);
    }
    expect(response.headers['x-frame-options']).toBe('DENY');
    expect(response.headers['cache-control']).toBe('no-store');
  }

  it('random requests: no 5xx, no redirect but to a registered URI, no script in the page', async () => {
    await fc.assert(
      fc.asyncProperty(query(), async (sent) => {
        const params = Object.fromEntries(Object.entries(sent).filter((e): e is [string, string] => e[1] !== undefined));
        const response = await server.app.inject({ method: 'GET', url: `/oauth/authorize?${new URLSearchParams(params)}` });
        checkAnswer(response, params);
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it('random form POSTs without the served token: no code, no 5xx, no foreign redirect', async () => {
    const form = fc.record({
      sent: query(),
      csrf_token: fc.option(fc.oneof(oddText, fc.constant(`${Math.floor(Date.now() / 1000)}.${'A'.repeat(43)}`)), { nil: undefined }),
      cookie: fc.option(fc.oneof(oddText.map((t) => `oauth-csrf=${t}`), fc.constant('oauth-csrf=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')), { nil: undefined }),
      credentials: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(form, async ({ sent, csrf_token, cookie, credentials }) => {
        const params = Object.fromEntries(Object.entries(sent).filter((e): e is [string, string] => e[1] !== undefined));
        const body = new URLSearchParams({
          ...params,
          ...(csrf_token === undefined ? {} : { csrf_token }),
          ...(credentials ? { email: ada.email, password: TEST_PASSWORD } : { email: 'x@example.com', password: 'nope-nope' }),
        });
        const response = await server.app.inject({
          method: 'POST',
          url: '/oauth/authorize',
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie === undefined ? {} : { cookie }) },
          payload: body.toString(),
        });
        checkAnswer(response, params);
      }),
      { seed: SEED, numRuns: 100 },
    );
  });
});
