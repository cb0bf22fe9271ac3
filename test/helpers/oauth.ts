/**
 * The authorization server under test: a listening app (oauth4webapi talks real HTTP), clients
 * inserted straight into `oauth_clients`, and the sign-in form driven by HTTP the way a browser
 * submits it (GET the form, keep its cookie and hidden fields, POST them with the credentials).
 */
import { randomBytes } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import type { Db } from '../../server/db/client.ts';
import { oauthClients, type GrantType } from '../../server/db/schema.ts';
import { hashSecret } from '../../server/auth/secrets.ts';
import { SCOPES } from '../../server/auth/policy.ts';
import { expect } from 'vitest';
import { createTestApp, TEST_PASSWORD, type TestApp } from './app.ts';
import { useFixture } from './fixture.ts';

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';

export interface OAuthTestServer extends TestApp {
  /** `http://127.0.0.1:<port>`: also the issuer. */
  base: string;
  /** The authorization server's metadata, discovered with oauth4webapi. */
  as: oauth.AuthorizationServer;
}

/** oauth4webapi refuses plain HTTP unless told: the test server is http://127.0.0.1. */
export const insecure = { [oauth.allowInsecureRequests]: true } as const;

export async function startOAuthServer(options: Parameters<typeof createTestApp>[0] = {}): Promise<OAuthTestServer> {
  const t = await createTestApp(options);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const issuer = new URL(base);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  return { ...t, base, as };
}

/** The test file's listening authorization server: `startOAuthServer(options)` as a fixture (useFixture). */
export const useOAuthServer = (options: Parameters<typeof createTestApp>[0] = {}): OAuthTestServer =>
  useFixture('the OAuth test server (useOAuthServer)', () => startOAuthServer(options));

export interface TestClientInput {
  name?: string;
  redirectUris?: string[];
  grantTypes?: GrantType[];
  scopes?: string[];
  firstParty?: boolean;
  confidential?: boolean;
}

export interface TestClient {
  client: oauth.Client;
  /** The secret of a confidential client. */
  secret: string | undefined;
  /** ClientSecretBasic for confidential clients, None for public ones. */
  auth: oauth.ClientAuth;
}

/** Inserts a client row (a public first-party client of every grant and scope unless told otherwise). */
export async function insertClient(db: Db, input: TestClientInput = {}): Promise<TestClient> {
  const id = `client-${randomBytes(6).toString('hex')}`;
  const confidential = input.confidential ?? false;
  const secret = confidential ? `secret-${randomBytes(16).toString('base64url')}` : undefined;
  await db.insert(oauthClients).values({
    id,
    name: input.name ?? `Test app ${id}`,
    secretHash: secret === undefined ? null : hashSecret(secret),
    redirectUris: input.redirectUris ?? [REDIRECT_URI],
    grantTypes: input.grantTypes ?? ['authorization_code', 'refresh_token', 'password', ...(confidential ? (['client_credentials'] as const) : [])],
    scopes: input.scopes ?? [...SCOPES],
    firstParty: input.firstParty ?? true,
    confidential,
  });
  return {
    client: { client_id: id, token_endpoint_auth_method: confidential ? 'client_secret_basic' : 'none' },
    secret,
    auth: secret === undefined ? oauth.None() : oauth.ClientSecretBasic(secret),
  };
}

/** The hidden fields and the CSRF cookie of a served sign-in form. */
export interface ServedForm {
  status: number;
  html: string;
  headers: Headers;
  fields: Record<string, string>;
  cookie: string | undefined;
}

const decodeHtml = (text: string) =>
  text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

export function formFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    if (match[1] !== undefined && match[2] !== undefined) fields[match[1]] = decodeHtml(match[2]);
  }
  return fields;
}

/** `name=value` of the Set-Cookie header, for sending back. */
export function cookieOf(headers: Headers): string | undefined {
  const cookie = headers.get('set-cookie');
  return cookie?.split(';')[0];
}

export async function getForm(base: string, query: Record<string, string>): Promise<ServedForm> {
  const response = await fetch(`${base}/oauth/authorize?${new URLSearchParams(query)}`, { redirect: 'manual' });
  const html = await response.text();
  return { status: response.status, html, headers: response.headers, fields: formFields(html), cookie: cookieOf(response.headers) };
}

export async function postForm(base: string, fields: Record<string, string>, cookie: string | undefined): Promise<Response> {
  return fetch(`${base}/oauth/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
    body: new URLSearchParams(fields),
  });
}

export interface CodeFlowStart {
  verifier: string;
  state: string;
  query: Record<string, string>;
}

/** The parameters of an authorization request with a fresh PKCE pair and state. */
export async function codeFlowStart(client: oauth.Client, extra: Record<string, string> = {}): Promise<CodeFlowStart> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const query = {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: REDIRECT_URI,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...extra,
  };
  return { verifier, state, query };
}

/** Serves the form, signs in with it, and answers the redirect (expects a 303 with a code). */
export async function signInWithForm(base: string, query: Record<string, string>, credentials: { email: string; password: string }): Promise<URL> {
  const form = await getForm(base, query);
  if (form.status !== 200) throw new Error(`the form was not served (${form.status}): ${form.html}`);
  const response = await postForm(base, { ...form.fields, email: credentials.email, password: credentials.password }, form.cookie);
  const location = response.headers.get('location');
  if (response.status !== 303 || location === null) throw new Error(`no redirect after sign-in (${response.status}): ${await response.text()}`);
  return new URL(location);
}

/** The whole code flow with oauth4webapi: sign in through the form, then exchange the code. */
export async function codeFlow(
  server: OAuthTestServer,
  testClient: TestClient,
  credentials: { email: string; password: string },
  extra: Record<string, string> = {},
): Promise<{ tokens: oauth.TokenEndpointResponse; callback: URL; start: CodeFlowStart }> {
  const start = await codeFlowStart(testClient.client, extra);
  const callback = await signInWithForm(server.base, start.query, credentials);
  const params = oauth.validateAuthResponse(server.as, testClient.client, callback, start.state);
  const response = await oauth.authorizationCodeGrantRequest(server.as, testClient.client, testClient.auth, params, REDIRECT_URI, start.verifier, insecure);
  const tokens = await oauth.processAuthorizationCodeResponse(server.as, testClient.client, response);
  return { tokens, callback, start };
}

/** A raw POST to a token-like endpoint, for what oauth4webapi would never send. */
export async function postToken(base: string, body: Record<string, string> | string, headers: Record<string, string> = {}, path = '/oauth/token'): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: typeof body === 'string' ? body : new URLSearchParams(body),
  });
}

/** Signs `user` in with the password grant (TEST_PASSWORD) as `clientId`; expects 200. */
export async function signInWithPassword(base: string, clientId: string, user: { email: string }): Promise<{ access_token: string; refresh_token: string; expires_in: number; token_type: string; scope?: string }> {
  const response = await postToken(base, { grant_type: 'password', client_id: clientId, username: user.email, password: TEST_PASSWORD });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as { access_token: string; refresh_token: string; expires_in: number; token_type: string; scope?: string };
}

export const NEW_PASSWORD = 'a-brand-new-password';

/** `user` changes their own password to NEW_PASSWORD over REST (which ends their grants); expects 200. */
export async function changeOwnPassword(server: TestApp, user: { id: number; email: string; name: string; token: string }): Promise<void> {
  const response = await server.request({
    method: 'PUT',
    url: `/api/v1/users/${user.id}`,
    token: user.token,
    payload: { email: user.email, name: user.name, password: NEW_PASSWORD, current_password: TEST_PASSWORD },
  });
  expect(response.statusCode, response.body).toBe(200);
}

/** The sign-in and sign-up pages' security headers: CSP by hashes, no framing, no caching, no referrer. */
export function expectPageHeaders(headers: Headers) {
  const csp = headers.get('content-security-policy') ?? '';
  expect(csp).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; form-action 'self'( \S+)?; frame-ancestors 'none'; base-uri 'none'$/);
  expect(headers.get('x-frame-options')).toBe('DENY');
  expect(headers.get('cache-control')).toBe('no-store');
  expect(headers.get('referrer-policy')).toBe('no-referrer');
}

/** The query of a redirect's Location, which must go to the registered URI. */
export function redirectedTo(response: Response): URLSearchParams {
  expect(response.status).toBe(303);
  const location = new URL(response.headers.get('location') ?? '');
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
  return location.searchParams;
}
