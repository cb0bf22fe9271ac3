/**
 * GET/POST /oauth/authorize: the sign-in form (accessible, escaped, framed by strict headers), no
 * open redirect, errors sent back to the client per RFC 6749 4.1.2.1, and a CSRF token bound to
 * the request and the browser.
 */
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { oauthAuthorizationCodes } from '../../server/db/schema.ts';
import { TEST_PASSWORD, type TestUser } from '../helpers/app.ts';
import { codeFlowStart, expectPageHeaders, getForm, insertClient, postForm, REDIRECT_URI, redirectedTo, type TestClient, useOAuthServer } from '../helpers/oauth.ts';

let ada: TestUser;
let app: TestClient;

const server = useOAuthServer();
beforeAll(async () => {
  ada = await server.createUser('customer');
  app = await insertClient(server.db, { name: 'Shop <b>"App"</b>', scopes: ['orders:read', 'orders:write'] });
});

const codeCount = async () => (await server.db.select({ hash: oauthAuthorizationCodes.codeHash }).from(oauthAuthorizationCodes)).length;

describe('the sign-in form', () => {
  it('is plain, labelled HTML: main, h1, label for each field, autocomplete tokens, no script', async () => {
    const { query } = await codeFlowStart(app.client);
    const form = await getForm(server.base, query);
    expect(form.status).toBe(200);
    expect(form.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const { html } = form;
    expect(html).toContain('<main>');
    expect(html).toMatch(/<h1>Sign in<\/h1>/);
    expect(html).toContain('<label for="email">Email</label>');
    expect(html).toMatch(/<input id="email" name="email" type="email" autocomplete="username" required/);
    expect(html).toContain('<label for="password">Password</label>');
    expect(html).toMatch(/<input id="password" name="password" type="password" autocomplete="current-password" required/);
    expect(html).toContain('<button type="submit">Sign in</button>');
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<p role="alert"/);
    expect(form.fields).toMatchObject({ client_id: app.client.client_id, redirect_uri: REDIRECT_URI, state: query.state, code_challenge_method: 'S256' });
    expect(form.fields.csrf_token).toMatch(/^\d+\.[A-Za-z0-9_-]{43}$/);
  });

  it('sends the strict headers, allowing the form to post here and redirect to the client', async () => {
    const { query } = await codeFlowStart(app.client);
    const form = await getForm(server.base, query);
    expectPageHeaders(form.headers);
    expect(form.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:9;");
  });

  it('sets its one cookie: HttpOnly, SameSite=Strict, limited to /oauth (plain HTTP)', async () => {
    const { query } = await codeFlowStart(app.client);
    const form = await getForm(server.base, query);
    expect(form.headers.getSetCookie()).toHaveLength(1);
    expect(form.headers.get('set-cookie')).toMatch(/^oauth-csrf=[A-Za-z0-9_-]{32}; Path=\/oauth; HttpOnly; SameSite=Strict; Max-Age=1800$/);
  });

  it('escapes every reflected value: state, client name, scope', async () => {
    const hostile = `"><script>alert(1)</script><img src=x onerror=alert(2)>'&`;
    const { query } = await codeFlowStart(app.client, { state: hostile });
    const form = await getForm(server.base, query);
    expect(form.status).toBe(200);
    expect(form.html).not.toContain('<script>');
    expect(form.html).not.toContain('<img');
    expect(form.html).not.toContain('<b>');
    expect(form.html).toContain('Shop &lt;b&gt;&quot;App&quot;&lt;/b&gt;');
    expect(form.html).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&#39;&amp;"');
    // The state survives escaping: the redirect carries it back exactly.
    const response = await postForm(server.base, { ...form.fields, email: ada.email, password: TEST_PASSWORD }, form.cookie);
    expect(redirectedTo(response).get('state')).toBe(hostile);
  });

  it('a wrong password re-shows the form with a neutral alert and the email, escaped', async () => {
    const { query } = await codeFlowStart(app.client);
    const form = await getForm(server.base, query);
    const email = `"><i>x@example.com`;
    const response = await postForm(server.base, { ...form.fields, email, password: 'wrong-password' }, form.cookie);
    expect(response.status).toBe(400);
    expectPageHeaders(response.headers);
    const html = await response.text();
    expect(html).toContain('<p role="alert" id="sign-in-error">The email or password is incorrect.</p>');
    expect(html).toContain('value="&quot;&gt;&lt;i&gt;x@example.com"');
    expect(html).not.toContain('<i>');
    expect(html).not.toContain('wrong-password');
    // The same words for an email that exists.
    const again = await postForm(server.base, { ...form.fields, email: ada.email, password: 'wrong-password' }, form.cookie);
    expect(await again.text()).toContain('<p role="alert" id="sign-in-error">The email or password is incorrect.</p>');
  });

  it('signs in: 303 to the registered redirect URI with code, state and iss, never cached or referred', async () => {
    const { query, state } = await codeFlowStart(app.client, { scope: 'orders:read' });
    const form = await getForm(server.base, query);
    const before = await codeCount();
    const response = await postForm(server.base, { ...form.fields, email: ada.email, password: TEST_PASSWORD }, form.cookie);
    const params = redirectedTo(response);
    expect(params.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get('state')).toBe(state);
    expect(params.get('iss')).toBe(server.base);
    expectPageHeaders(response.headers);
    expect(await codeCount()).toBe(before + 1);
    // The form's cookie is done.
    expect(response.headers.get('set-cookie')).toMatch(/^oauth-csrf=; Path=\/oauth; HttpOnly; SameSite=Strict; Max-Age=0$/);
  });

  it('keeps the redirect URI\'s own query', async () => {
    const withQuery = 'http://127.0.0.1:9/callback?tenant=a%20b';
    const client = await insertClient(server.db, { redirectUris: [withQuery] });
    const { query } = await codeFlowStart(client.client, { redirect_uri: withQuery });
    const form = await getForm(server.base, query);
    const response = await postForm(server.base, { ...form.fields, email: ada.email, password: TEST_PASSWORD }, form.cookie);
    const location = new URL(response.headers.get('location') ?? '');
    expect(location.searchParams.get('tenant')).toBe('a b');
    expect(location.searchParams.get('code')).toEqual(expect.any(String));
  });
});

describe('no open redirector: an unknown client or unregistered redirect_uri gets a 400 page', () => {
  const cases: [string, (query: Record<string, string>) => Record<string, string>][] = [
    ['an unknown client_id', (q) => ({ ...q, client_id: 'no-such-client' })],
    ['a missing client_id', ({ client_id: _, ...q }) => q],
    ['an unregistered redirect_uri', (q) => ({ ...q, redirect_uri: 'https://evil.example/callback' })],
    ['a redirect_uri differing by a trailing slash', (q) => ({ ...q, redirect_uri: `${REDIRECT_URI}/` })],
    ['a redirect_uri differing in case', (q) => ({ ...q, redirect_uri: REDIRECT_URI.toUpperCase() })],
    ['a redirect_uri with an added query', (q) => ({ ...q, redirect_uri: `${REDIRECT_URI}?next=https://evil.example` })],
    // RFC 8252 7.3's any-port rule for loopback redirects is deliberately not followed: exact match.
    ['a loopback redirect_uri on another port', (q) => ({ ...q, redirect_uri: REDIRECT_URI.replace('127.0.0.1:9/', '127.0.0.1:8080/') })],
    ['a missing redirect_uri', ({ redirect_uri: _, ...q }) => q],
  ];
  for (const [name, change] of cases) {
    it(name, async () => {
      const { query } = await codeFlowStart(app.client);
      const response = await fetch(`${server.base}/oauth/authorize?${new URLSearchParams(change(query))}`, { redirect: 'manual' });
      expect(response.status).toBe(400);
      expect(response.headers.get('location')).toBeNull();
      expectPageHeaders(response.headers);
      const html = await response.text();
      expect(html).toMatch(/<main>[\s\S]*<h1>[^<]+<\/h1>[\s\S]*<p role="alert">/);
      expect(html).not.toContain('evil.example');
    });
  }

  it('a repeated redirect_uri or client_id', async () => {
    const { query } = await codeFlowStart(app.client);
    for (const name of ['redirect_uri', 'client_id']) {
      const search = new URLSearchParams(query);
      search.append(name, name === 'redirect_uri' ? 'https://evil.example/callback' : 'x');
      const response = await fetch(`${server.base}/oauth/authorize?${search}`, { redirect: 'manual' });
      expect(response.status).toBe(400);
      expect(response.headers.get('location')).toBeNull();
    }
  });

  it('the form POST too: a tampered redirect_uri is refused before anything else', async () => {
    const { query } = await codeFlowStart(app.client);
    const form = await getForm(server.base, query);
    const response = await postForm(server.base, { ...form.fields, redirect_uri: 'https://evil.example/cb', email: ada.email, password: TEST_PASSWORD }, form.cookie);
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
  });
});

describe('other errors go back to the client with error, error_description, state and iss', () => {
  const cases: [string, Record<string, string | undefined>, string][] = [
    ['no PKCE challenge', { code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
    ['the plain PKCE method', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['a challenge without a method (plain by default)', { code_challenge_method: undefined }, 'invalid_request'],
    ['a malformed challenge', { code_challenge: 'short' }, 'invalid_request'],
    ['response_type token', { response_type: 'token' }, 'unsupported_response_type'],
    ['no response_type', { response_type: undefined }, 'invalid_request'],
    ['a scope beyond the client\'s', { scope: 'orders:read clients:manage' }, 'invalid_scope'],
    ['a malformed scope', { scope: 'orders:read\torders:write' }, 'invalid_scope'],
  ];
  for (const [name, change, error] of cases) {
    it(`${name}: ${error}`, async () => {
      const { query, state } = await codeFlowStart(app.client);
      const changed = Object.fromEntries(Object.entries({ ...query, ...change }).filter((e): e is [string, string] => e[1] !== undefined));
      const response = await fetch(`${server.base}/oauth/authorize?${new URLSearchParams(changed)}`, { redirect: 'manual' });
      const params = redirectedTo(response);
      expect(params.get('error')).toBe(error);
      expect(params.get('error_description')).toEqual(expect.any(String));
      expect(params.get('state')).toBe(state);
      expect(params.get('iss')).toBe(server.base);
      expect(params.get('code')).toBeNull();
    });
  }

  it('a client not registered for the code grant: unauthorized_client', async () => {
    const backend = await insertClient(server.db, { grantTypes: ['password'] });
    const { query } = await codeFlowStart(backend.client);
    const response = await fetch(`${server.base}/oauth/authorize?${new URLSearchParams(query)}`, { redirect: 'manual' });
    expect(redirectedTo(response).get('error')).toBe('unauthorized_client');
  });

  it('a repeated parameter other than client_id and redirect_uri: invalid_request', async () => {
    const { query } = await codeFlowStart(app.client);
    const search = new URLSearchParams(query);
    search.append('scope', 'orders:read');
    search.append('scope', 'orders:write');
    const response = await fetch(`${server.base}/oauth/authorize?${search}`, { redirect: 'manual' });
    expect(redirectedTo(response).get('error')).toBe('invalid_request');
  });
});

describe('the CSRF token binds the form to its request and its browser', () => {
  async function attempt(change: (form: Awaited<ReturnType<typeof getForm>>) => { fields: Record<string, string>; cookie: string | undefined }) {
    const { query } = await codeFlowStart(app.client);
    const form = await getForm(server.base, query);
    const { fields, cookie } = change(form);
    const before = await codeCount();
    const response = await postForm(server.base, { ...fields, email: ada.email, password: TEST_PASSWORD }, cookie);
    expect(response.status).toBe(403);
    expect(response.headers.get('location')).toBeNull();
    expectPageHeaders(response.headers);
    const html = await response.text();
    expect(html).toContain('role="alert"');
    expect(html).toContain('This sign-in form has expired or was not sent from this page.');
    expect(await codeCount()).toBe(before);
    return html;
  }

  it('without the cookie (a cross-site POST), no code', async () => {
    await attempt((form) => ({ fields: form.fields, cookie: undefined }));
  });

  it('without the token, no code', async () => {
    await attempt(({ fields: { csrf_token: _, ...fields }, cookie }) => ({ fields, cookie }));
  });

  it('with another browser\'s cookie, no code', async () => {
    const { query } = await codeFlowStart(app.client);
    const other = await getForm(server.base, query);
    await attempt((form) => ({ fields: form.fields, cookie: other.cookie }));
  });

  it('with the token of another request (a changed state or challenge), no code', async () => {
    await attempt((form) => ({ fields: { ...form.fields, state: 'attacker-state' }, cookie: form.cookie }));
    await attempt((form) => ({ fields: { ...form.fields, scope: 'orders:read' }, cookie: form.cookie }));
  });

  it('with a forged token, no code', async () => {
    await attempt((form) => ({ fields: { ...form.fields, csrf_token: `${Math.floor(Date.now() / 1000)}.${'A'.repeat(43)}` }, cookie: form.cookie }));
  });

  it('the refused form comes back with a fresh token that works', async () => {
    const { query } = await codeFlowStart(app.client);
    const first = await getForm(server.base, query);
    const refused = await postForm(server.base, { ...first.fields, csrf_token: 'x', email: ada.email, password: TEST_PASSWORD }, first.cookie);
    expect(refused.status).toBe(403);
    const html = await refused.text();
    const token = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const response = await postForm(server.base, { ...first.fields, csrf_token: token, email: ada.email, password: TEST_PASSWORD }, first.cookie);
    expect(response.status).toBe(303);
  });

  it('a form served to one browser in several tabs keeps one nonce', async () => {
    const { query } = await codeFlowStart(app.client);
    const first = await getForm(server.base, query);
    const second = await fetch(`${server.base}/oauth/authorize?${new URLSearchParams(query)}`, { headers: { cookie: first.cookie ?? '' } });
    expect(second.headers.get('set-cookie')?.split(';')[0]).toBe(first.cookie);
    // The first tab still works.
    const response = await postForm(server.base, { ...first.fields, email: ada.email, password: TEST_PASSWORD }, first.cookie);
    expect(response.status).toBe(303);
  });
});

describe('the form POST itself', () => {
  it('must be a form: JSON is 415 with a page', async () => {
    const response = await fetch(`${server.base}/oauth/authorize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(415);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it('without email or password re-shows the form', async () => {
    const { query } = await codeFlowStart(app.client);
    const form = await getForm(server.base, query);
    const response = await postForm(server.base, { ...form.fields, email: ada.email }, form.cookie);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('Enter your email and password.');
  });

  it('other methods are 405 with Allow', async () => {
    const response = await fetch(`${server.base}/oauth/authorize`, { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
  });

  it('a code is bound to the user who signed in', async () => {
    const { query } = await codeFlowStart(app.client);
    const form = await getForm(server.base, query);
    const response = await postForm(server.base, { ...form.fields, email: ada.email, password: TEST_PASSWORD }, form.cookie);
    const code = new URL(response.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const { hashSecret } = await import('../../server/auth/secrets.ts');
    const [row] = await server.db.select().from(oauthAuthorizationCodes).where(eq(oauthAuthorizationCodes.codeHash, hashSecret(code)));
    expect(row).toMatchObject({ userId: ada.id, clientId: app.client.client_id, redirectUri: REDIRECT_URI, codeChallenge: query.code_challenge, scope: 'orders:read orders:write', usedAt: null });
  });
});
