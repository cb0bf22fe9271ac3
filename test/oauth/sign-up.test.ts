/**
 * The sign-up form of /oauth/authorize (docs/signing-in.md#the-sign-up-form): reached from the
 * sign-in form for the same authorization request, held to the rules of POST /api/v1/users,
 * creating a customer only, and continuing the authorization as a sign-in does; the sign-in
 * form's CSRF protection, rate limit and headers; off with SIGN_UP_ENABLED=false.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it } from 'vitest';
import { oauthAuthorizationCodes, users } from '../../server/db/schema.ts';
import { verifyPassword } from '../../server/auth/password.ts';
import { consentOf, SCOPES } from '../../server/auth/scopes.ts';
import { TEST_PASSWORD, type TestUser } from '../helpers/app.ts';
import {
  codeFlowStart,
  expectPageHeaders,
  formFields,
  getForm,
  insecure,
  insertClient,
  type OAuthTestServer,
  postForm,
  REDIRECT_URI,
  redirectedTo,
  type ServedForm,
  type TestClient,
  useOAuthServer,
} from '../helpers/oauth.ts';

const PASSWORD = 'a-new-customer-password';

/** 255 characters, each part within its own limit (local part 64, labels 63): only the whole is too long. */
const LONG_EMAIL = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`;

const newEmail = () => `new-${randomBytes(6).toString('hex')}@example.com`;

const decode = (text: string) => text.replace(/&amp;/g, '&');

/** The phrases the page lists under "<app> will be able to:", HTML-decoded. */
const grantedPhrases = (html: string): string[] =>
  [.../<ul aria-labelledby="scopes-heading">([\s\S]*?)<\/ul>/.exec(html)?.[1]?.matchAll(/<li>([^<]*)<\/li>/g) ?? []].map((m) => (m[1] ?? '').replace(/&#39;/g, "'").replace(/&amp;/g, '&'));

/** The href of the link whose text is `text`, HTML-decoded. */
function linkTo(html: string, text: string): string | undefined {
  const match = new RegExp(`<a href="([^"]+)">${text}</a>`).exec(html);
  return match?.[1] === undefined ? undefined : decode(match[1]);
}

async function usersWithEmail(server: OAuthTestServer, email: string) {
  return server.db
    .select({ id: users.id, role: users.role, name: users.name, passwordHash: users.passwordHash })
    .from(users)
    .where(sql`lower(${users.email}) = lower(${email})`);
}

const userCount = async (server: OAuthTestServer) => (await server.db.select({ id: users.id }).from(users)).length;

/** The sign-up form for an authorization request, served as the sign-in form's link serves it. */
function getSignUpForm(server: OAuthTestServer, query: Record<string, string>): Promise<ServedForm> {
  return getForm(server.base, { ...query, prompt: 'create' });
}

describe('sign-up on (the default)', () => {
  let app: TestClient;
  let ada: TestUser;

  const server = useOAuthServer();
  beforeAll(async () => {
    ada = await server.createUser('customer');
    // The client may ask for every scope, clients:manage included: a customer's token never has it.
    app = await insertClient(server.db, { name: 'Shop <b>"App"</b>' });
  });

  describe('the sign-in form links to it, for the same request', () => {
    it('"Create an account" carries every parameter of the request, and prompt=create', async () => {
      const { query } = await codeFlowStart(app.client, { scope: 'orders:read orders:write' });
      const form = await getForm(server.base, query);
      const href = linkTo(form.html, 'Create an account');
      expect(href).toBeDefined();
      const target = new URL(href ?? '', `${server.base}/oauth/authorize`);
      expect(target.pathname).toBe('/oauth/authorize');
      expect(Object.fromEntries(target.searchParams)).toEqual({ ...query, prompt: 'create' });
      const followed = await fetch(target, { redirect: 'manual' });
      expect(followed.status).toBe(200);
      expect(await followed.text()).toContain('<h1>Create an account</h1>');
    });

    it('the metadata names prompt=create (prompt_values_supported)', async () => {
      const metadata = (await (await fetch(`${server.base}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      expect(metadata.prompt_values_supported).toEqual(['create']);
    });
  });

  describe('the page', () => {
    it('is plain, labelled HTML: name, email, new password with their autocomplete tokens, no script', async () => {
      const { query } = await codeFlowStart(app.client);
      const form = await getSignUpForm(server, query);
      expect(form.status).toBe(200);
      expect(form.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const { html } = form;
      expect(html).toContain('<title>Create an account - order-service</title>');
      expect(html.match(/<main>/g)).toHaveLength(1);
      expect(html).toContain('<label for="name">Name</label>');
      expect(html).toMatch(/<input id="name" name="name" type="text" autocomplete="name" required maxlength="200" autofocus>/);
      expect(html).toContain('<label for="email">Email</label>');
      expect(html).toMatch(/<input id="email" name="email" type="email" autocomplete="email" required maxlength="254">/);
      expect(html).toContain('<label for="password">Password</label>');
      expect(html).toMatch(
        /<input id="password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="256" aria-describedby="password-hint">/,
      );
      expect(html).toContain('<p class="hint" id="password-hint">At least 8 characters.</p>');
      expect(html).toContain('<button type="submit">Create account</button>');
      expect(html).not.toMatch(/<script/i);
      expect(html).not.toMatch(/<p role="alert"/);
      // The request's own parameters, prompt=create and the CSRF token: nothing else is hidden.
      expect(Object.keys(form.fields).sort()).toEqual(
        ['client_id', 'code_challenge', 'code_challenge_method', 'csrf_token', 'prompt', 'redirect_uri', 'response_type', 'state'].sort(),
      );
      expect(form.fields).toMatchObject({ ...query, prompt: 'create' });
      expect(form.fields.csrf_token).toMatch(/^\d+\.[A-Za-z0-9_-]{43}$/);
      // What the new account will be granted: a customer's scopes of the client's, never clients:manage.
      expect(grantedPhrases(html)).toEqual(consentOf('orders:read orders:write payments:write users:read users:write'));
      // And back to the sign-in form of the same request.
      const back = new URL(linkTo(html, 'Sign in') ?? '', `${server.base}/oauth/authorize`);
      expect(Object.fromEntries(back.searchParams)).toEqual(query);
    });

    it('the sign-in form\'s headers and cookie', async () => {
      const { query } = await codeFlowStart(app.client);
      const form = await getSignUpForm(server, query);
      expectPageHeaders(form.headers);
      expect(form.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:9;");
      expect(form.headers.getSetCookie()).toHaveLength(1);
      expect(form.headers.get('set-cookie')).toMatch(/^oauth-csrf=[A-Za-z0-9_-]{32}; Path=\/oauth; HttpOnly; SameSite=Strict; Max-Age=1800$/);
    });

    it('escapes every reflected value: state, client name, typed name and email', async () => {
      const hostile = `"><script>alert(1)</script>'&`;
      const { query } = await codeFlowStart(app.client, { state: hostile });
      const form = await getSignUpForm(server, query);
      expect(form.html).not.toContain('<script>');
      expect(form.html).not.toContain('<b>');
      expect(form.html).toContain('Shop &lt;b&gt;&quot;App&quot;&lt;/b&gt;');
      expect(form.fields.state).toBe(hostile);
      const response = await postForm(server.base, { ...form.fields, name: hostile, email: hostile, password: PASSWORD }, form.cookie);
      expect(response.status).toBe(400);
      const html = await response.text();
      expect(html).not.toContain('<script>');
      expect(html).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&#39;&amp;"');
    });

    it('both forms say in plain words what the app will be able to do, one phrase per granted scope, never a scope name (regression: "asks for: orders:read orders:write ...")', async () => {
      const { query } = await codeFlowStart(app.client, { scope: 'orders:read payments:write' });
      for (const form of [await getSignUpForm(server, query), await getForm(server.base, query)]) {
        expect(form.html).toContain('<p id="scopes-heading">Shop &lt;b&gt;&quot;App&quot;&lt;/b&gt; will be able to:</p>');
        expect(grantedPhrases(form.html)).toEqual([
          'See orders with their payments and shipments (your own, or every order if you are staff)',
          'Pay for orders, and refund payments if you are staff',
        ]);
        // Nowhere in what the page shows (the request's own parameters are in hidden fields and links).
        expect(form.html.replace(/<[^>]*>/g, '')).not.toMatch(/orders:read|payments:write/);
      }
    });

    it('every declared scope has its own plain phrase, which names no scope', () => {
      const phrases = consentOf(SCOPES.join(' '));
      expect(phrases).toHaveLength(SCOPES.length);
      expect(new Set(phrases).size).toBe(SCOPES.length);
      for (const phrase of phrases) expect(phrase).not.toMatch(/\b[a-z_]+:[a-z_]+\b/);
    });

    it('a scope that is not the client\'s is sent back to the client, as for the sign-in form', async () => {
      const limited = await insertClient(server.db, { scopes: ['orders:read'] });
      const { query, state } = await codeFlowStart(limited.client, { scope: 'orders:write' });
      const response = await fetch(`${server.base}/oauth/authorize?${new URLSearchParams({ ...query, prompt: 'create' })}`, { redirect: 'manual' });
      const params = redirectedTo(response);
      expect(params.get('error')).toBe('invalid_scope');
      expect(params.get('state')).toBe(state);
    });
  });

  describe('signing up creates a customer and continues the authorization', () => {
    it('303 to the redirect URI with code, state and iss; the cookie is cleared; the user is a customer with a hashed password', async () => {
      const { query, state } = await codeFlowStart(app.client);
      const form = await getSignUpForm(server, query);
      const email = newEmail();
      const response = await postForm(server.base, { ...form.fields, name: 'Grace Hopper', email, password: PASSWORD }, form.cookie);
      const params = redirectedTo(response);
      expect(params.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(params.get('state')).toBe(state);
      expect(params.get('iss')).toBe(server.base);
      expectPageHeaders(response.headers);
      expect(response.headers.get('set-cookie')).toMatch(/^oauth-csrf=; Path=\/oauth; HttpOnly; SameSite=Strict; Max-Age=0$/);
      const [user, ...others] = await usersWithEmail(server, email);
      expect(others).toEqual([]);
      expect(user).toMatchObject({ role: 'customer', name: 'Grace Hopper' });
      expect(user?.passwordHash).not.toContain(PASSWORD);
      expect(await verifyPassword(PASSWORD, user?.passwordHash ?? '')).toBe(true);
    });

    it('the whole flow: the code exchanges for tokens naming the new user, with a customer\'s scopes only', async () => {
      const start = await codeFlowStart(app.client);
      const form = await getSignUpForm(server, start.query);
      const email = newEmail();
      const response = await postForm(server.base, { ...form.fields, name: 'Katherine Johnson', email, password: PASSWORD }, form.cookie);
      const callback = new URL(response.headers.get('location') ?? '');
      const params = oauth.validateAuthResponse(server.as, app.client, callback, start.state);
      const exchanged = await oauth.authorizationCodeGrantRequest(server.as, app.client, app.auth, params, REDIRECT_URI, start.verifier, insecure);
      const tokens = await oauth.processAuthorizationCodeResponse(server.as, app.client, exchanged);
      // Asked for nothing, granted what a customer can use of the client's scopes (docs/signing-in.md#scopes).
      expect(tokens.scope).toBe('orders:read orders:write payments:write users:read users:write');
      expect(tokens.refresh_token).toEqual(expect.any(String));
      const [user] = await usersWithEmail(server, email);
      const me = await fetch(`${server.base}/api/v1/users/${user?.id}`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      expect(me.status).toBe(200);
      expect(await me.json()).toMatchObject({ id: user?.id, email, name: 'Katherine Johnson', role: 'customer' });
      // And the new account signs in with its password through the sign-in form.
      const again = await codeFlowStart(app.client);
      const signIn = await getForm(server.base, again.query);
      expect(redirectedTo(await postForm(server.base, { ...signIn.fields, email, password: PASSWORD }, signIn.cookie)).get('code')).toEqual(expect.any(String));
    });

    it('a scope naming admin scopes and a customer\'s is narrowed to the customer\'s, as a sign-in does', async () => {
      const { query } = await codeFlowStart(app.client, { scope: 'orders:read clients:manage' });
      const form = await getSignUpForm(server, query);
      const response = await postForm(server.base, { ...form.fields, name: 'Mary', email: newEmail(), password: PASSWORD }, form.cookie);
      const code = redirectedTo(response).get('code') ?? '';
      const { hashSecret } = await import('../../server/auth/secrets.ts');
      const [row] = await server.db.select({ scope: oauthAuthorizationCodes.scope }).from(oauthAuthorizationCodes).where(sql`${oauthAuthorizationCodes.codeHash} = ${hashSecret(code)}`);
      expect(row?.scope).toBe('orders:read');
    });

    it('a scope naming nothing a customer can use: invalid_scope back to the client, and no account', async () => {
      const { query, state } = await codeFlowStart(app.client, { scope: 'clients:manage products:write' });
      const form = await getSignUpForm(server, query);
      const email = newEmail();
      const response = await postForm(server.base, { ...form.fields, name: 'Mary', email, password: PASSWORD }, form.cookie);
      const params = redirectedTo(response);
      expect(params.get('error')).toBe('invalid_scope');
      expect(params.get('error_description')).toBe('The scope asks for nothing your role can use.');
      expect(params.get('state')).toBe(state);
      expect(params.get('code')).toBeNull();
      expect(await usersWithEmail(server, email)).toEqual([]);
    });
  });

  describe('bad input shows the form again with a message beside the field, and creates nothing', () => {
    const valid = () => ({ name: 'Ada Lovelace', email: newEmail(), password: PASSWORD });
    const cases: [string, (fields: Record<string, string>) => Record<string, string>, 'name' | 'email' | 'password', string][] = [
      ['a missing name', ({ name: _, ...f }) => f, 'name', 'Enter your name.'],
      ['an empty name', (f) => ({ ...f, name: '' }), 'name', 'Enter your name.'],
      ['a missing email', ({ email: _, ...f }) => f, 'email', 'Enter your email address.'],
      ['a missing password', ({ password: _, ...f }) => f, 'password', 'Choose a password of at least 8 characters.'],
      ['an invalid email', (f) => ({ ...f, email: 'not-an-email' }), 'email', 'Enter an email address such as ada@example.com.'],
      ['an email without a top-level domain', (f) => ({ ...f, email: 'a@localhost' }), 'email', 'Enter an email address such as ada@example.com.'],
      ['a 7-character password', (f) => ({ ...f, password: 'seven77' }), 'password', 'Use at least 8 characters.'],
      ['a 201-character name', (f) => ({ ...f, name: 'n'.repeat(201) }), 'name', 'Use at most 200 characters.'],
      ['a 255-character email', (f) => ({ ...f, email: LONG_EMAIL }), 'email', 'Use at most 254 characters.'],
      ['a 257-character password', (f) => ({ ...f, password: 'p'.repeat(257) }), 'password', 'Use at most 256 characters.'],
      ['a name with a control character', (f) => ({ ...f, name: 'Ada\u0007' }), 'name', 'Must not contain control characters.'],
      ['a name with a NUL', (f) => ({ ...f, name: 'Ada\u0000' }), 'name', 'Must not contain control characters.'],
    ];
    for (const [title, change, field, message] of cases) {
      it(`${title}: 400, "${message}"`, async () => {
        const { query } = await codeFlowStart(app.client);
        const form = await getSignUpForm(server, query);
        const fields = change(valid());
        const before = await userCount(server);
        const response = await postForm(server.base, { ...form.fields, ...fields }, form.cookie);
        expect(response.status).toBe(400);
        expect(response.headers.get('location')).toBeNull();
        expectPageHeaders(response.headers);
        const html = await response.text();
        expect(html).toContain('<p role="alert" id="sign-up-error">No account was created: correct the fields marked below.</p>');
        expect(html).toContain(`<p class="field-error" id="${field}-error">${message}</p>`);
        // The field points at its message, is marked invalid, and has the focus.
        expect(html).toMatch(new RegExp(`<input id="${field}" [^>]*aria-invalid="true" aria-describedby="(password-hint )?${field}-error" autofocus>`));
        // The form comes back for the same request, with a fresh token, and without the password.
        expect(formFields(html)).toMatchObject({ ...query, prompt: 'create' });
        if (fields.password !== undefined) expect(html).not.toContain(fields.password);
        if (field !== 'email' && fields.email) expect(html).toContain(`value="${fields.email}"`);
        expect(await userCount(server)).toBe(before);
      });
    }

    it('a 255-character email is over the limit for the same reason the API refuses it', async () => {
      const email = LONG_EMAIL;
      expect(email).toHaveLength(255);
      const api = await server.request({ method: 'POST', url: '/api/v1/users', payload: { name: 'Ada', email, password: PASSWORD } });
      expect(api.statusCode).toBe(422);
    });

    it('a name far over the limit is refused and not sent back', async () => {
      const { query } = await codeFlowStart(app.client);
      const form = await getSignUpForm(server, query);
      const name = 'n'.repeat(100_000);
      const response = await postForm(server.base, { ...form.fields, name, email: newEmail(), password: PASSWORD }, form.cookie);
      expect(response.status).toBe(400);
      const html = await response.text();
      expect(html).toContain('<p class="field-error" id="name-error">Use at most 200 characters.</p>');
      expect(html.length).toBeLessThan(10_000);
    });

    it('every field wrong: each gets its message, the first has the focus', async () => {
      const { query } = await codeFlowStart(app.client);
      const form = await getSignUpForm(server, query);
      const response = await postForm(server.base, { ...form.fields, name: '', email: 'x', password: 'short' }, form.cookie);
      const html = await response.text();
      expect(html).toContain('<p class="field-error" id="name-error">Enter your name.</p>');
      expect(html).toContain('<p class="field-error" id="email-error">Enter an email address such as ada@example.com.</p>');
      expect(html).toContain('<p class="field-error" id="password-error">Use at least 8 characters.</p>');
      expect(html.match(/autofocus/g)).toHaveLength(1);
      expect(html).toMatch(/<input id="name" [^>]*autofocus>/);
    });

    it('an extra field (role=admin) is refused, not ignored: no account, let alone an admin', async () => {
      const extras: Record<string, string>[] = [{ role: 'admin' }, { is_admin: 'true' }, { resource: 'https://a.example' }];
      for (const extra of extras) {
        const { query } = await codeFlowStart(app.client);
        const form = await getSignUpForm(server, query);
        const email = newEmail();
        const response = await postForm(server.base, { ...form.fields, ...valid(), email, ...extra }, form.cookie);
        expect(response.status).toBe(400);
        const html = await response.text();
        expect(html).toContain('This form was sent with fields it does not have, so no account was created.');
        // Nor is it carried into the form shown again.
        expect(Object.keys(formFields(html))).not.toContain(Object.keys(extra)[0]);
        expect(await usersWithEmail(server, email)).toEqual([]);
      }
    });

    it('a field sent twice is refused on that field', async () => {
      const { query } = await codeFlowStart(app.client);
      const form = await getSignUpForm(server, query);
      const body = new URLSearchParams({ ...form.fields, name: 'Ada', password: PASSWORD });
      const email = newEmail();
      body.append('email', email);
      body.append('email', newEmail());
      const response = await fetch(`${server.base}/oauth/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie ?? '' },
        body,
      });
      expect(response.status).toBe(400);
      expect(await response.text()).toContain('<p class="field-error" id="email-error">Send this field once.</p>');
      expect(await usersWithEmail(server, email)).toEqual([]);
    });
  });

  describe('an email that has an account', () => {
    it('409, "already exists" beside the email with a link to sign in, as POST /api/v1/users tells anyone; nothing created', async () => {
      const { query } = await codeFlowStart(app.client);
      const form = await getSignUpForm(server, query);
      const before = await userCount(server);
      // Any case: emails are compared case-insensitively.
      const response = await postForm(server.base, { ...form.fields, name: 'Someone', email: ada.email.toUpperCase(), password: PASSWORD }, form.cookie);
      expect(response.status).toBe(409);
      expectPageHeaders(response.headers);
      const html = await response.text();
      expect(html).toMatch(/<p role="alert" id="sign-up-error">An account with this email already exists\. <a href="[^"]+">Sign in instead<\/a>\.<\/p>/);
      expect(html).toContain('<p class="field-error" id="email-error">An account with this email already exists.</p>');
      const signIn = new URL(linkTo(html, 'Sign in instead') ?? '', `${server.base}/oauth/authorize`);
      expect(Object.fromEntries(signIn.searchParams)).toEqual(query);
      expect(await userCount(server)).toBe(before);
      // The API says as much to anyone, without a token.
      const api = await server.request({ method: 'POST', url: '/api/v1/users', payload: { name: 'Someone', email: ada.email.toUpperCase(), password: PASSWORD } });
      expect(api.statusCode).toBe(409);
      expect(api.json()).toMatchObject({ type: '/problems/duplicate-resource', detail: 'A user with this email already exists.' });
      // The existing account is untouched: its password still signs in.
      const again = await getForm(server.base, query);
      expect((await postForm(server.base, { ...again.fields, email: ada.email, password: TEST_PASSWORD }, again.cookie)).status).toBe(303);
    });
  });

  describe('the CSRF token and cookie, as on the sign-in form', () => {
    async function refused(change: (form: ServedForm) => { fields: Record<string, string>; cookie: string | undefined }) {
      const { query } = await codeFlowStart(app.client);
      const form = await getSignUpForm(server, query);
      const { fields, cookie } = change(form);
      const email = newEmail();
      const response = await postForm(server.base, { ...fields, name: 'Ada', email, password: PASSWORD }, cookie);
      expect(response.status).toBe(403);
      expect(response.headers.get('location')).toBeNull();
      expectPageHeaders(response.headers);
      const html = await response.text();
      expect(html).toContain('<h1>Create an account</h1>');
      expect(html).toContain('This sign-up form has expired or was not sent from this page, so no account was created.');
      expect(await usersWithEmail(server, email)).toEqual([]);
      return html;
    }

    it('without the cookie (a cross-site POST)', async () => {
      await refused((form) => ({ fields: form.fields, cookie: undefined }));
    });

    it('without the token', async () => {
      await refused(({ fields: { csrf_token: _, ...fields }, cookie }) => ({ fields, cookie }));
    });

    it('with another browser\'s cookie', async () => {
      const { query } = await codeFlowStart(app.client);
      const other = await getSignUpForm(server, query);
      await refused((form) => ({ fields: form.fields, cookie: other.cookie }));
    });

    it('with the token of another request (a changed state or scope)', async () => {
      await refused((form) => ({ fields: { ...form.fields, state: 'attacker-state' }, cookie: form.cookie }));
      await refused((form) => ({ fields: { ...form.fields, scope: 'orders:read' }, cookie: form.cookie }));
    });

    it('with a forged token', async () => {
      await refused((form) => ({ fields: { ...form.fields, csrf_token: `${Math.floor(Date.now() / 1000)}.${'A'.repeat(43)}` }, cookie: form.cookie }));
    });

    it('replayed after a sign-up: the browser has dropped the cookie, so the form sent again creates nothing', async () => {
      const { query } = await codeFlowStart(app.client);
      const form = await getSignUpForm(server, query);
      const fields = { ...form.fields, name: 'Ada', email: newEmail(), password: PASSWORD };
      const first = await postForm(server.base, fields, form.cookie);
      expect(first.status).toBe(303);
      expect(first.headers.get('set-cookie')).toMatch(/Max-Age=0$/);
      const before = await userCount(server);
      const replayed = await postForm(server.base, { ...fields, email: newEmail() }, undefined);
      expect(replayed.status).toBe(403);
      expect(await userCount(server)).toBe(before);
    });

    it('the refused form keeps the name and email, and its fresh token works', async () => {
      const { query } = await codeFlowStart(app.client);
      const form = await getSignUpForm(server, query);
      const email = newEmail();
      const response = await postForm(server.base, { ...form.fields, csrf_token: 'x', name: 'Ada', email, password: PASSWORD }, form.cookie);
      expect(response.status).toBe(403);
      const html = await response.text();
      expect(html).toContain('value="Ada"');
      expect(html).toContain(`value="${email}"`);
      expect(html).not.toContain(PASSWORD);
      const retried = await postForm(server.base, { ...formFields(html), name: 'Ada', email, password: PASSWORD }, form.cookie);
      expect(retried.status).toBe(303);
      expect(await usersWithEmail(server, email)).toHaveLength(1);
    });
  });
});

describe('SIGN_UP_ENABLED=false', () => {
  let app: TestClient;

  const server = useOAuthServer({ oauth: { signUpEnabled: false } });
  beforeAll(async () => {
    app = await insertClient(server.db);
  });

  it('the sign-in form has no "Create an account", and prompt=create serves the sign-in form', async () => {
    const { query } = await codeFlowStart(app.client);
    const signIn = await getForm(server.base, query);
    expect(signIn.status).toBe(200);
    expect(signIn.html).not.toContain('Create an account');
    expect(signIn.html).not.toContain('prompt');
    const prompted = await getSignUpForm(server, query);
    expect(prompted.status).toBe(200);
    expect(prompted.html).toContain('<h1>Sign in</h1>');
    expect(prompted.html).not.toContain('Create an account');
    expect(prompted.fields.prompt).toBeUndefined();
  });

  it('the metadata does not name prompt=create', async () => {
    const metadata = (await (await fetch(`${server.base}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(metadata).not.toHaveProperty('prompt_values_supported');
  });

  it('a sign-up POST is refused (403, the sign-in form says so) and creates nothing', async () => {
    const { query } = await codeFlowStart(app.client);
    const form = await getForm(server.base, query);
    const email = newEmail();
    const before = await userCount(server);
    const response = await postForm(server.base, { ...form.fields, prompt: 'create', name: 'Ada', email, password: PASSWORD }, form.cookie);
    expect(response.status).toBe(403);
    expect(response.headers.get('location')).toBeNull();
    expectPageHeaders(response.headers);
    const html = await response.text();
    expect(html).toContain('<h1>Sign in</h1>');
    expect(html).toContain('New accounts cannot be created here. Sign in with an account you already have.');
    expect(await userCount(server)).toBe(before);
    expect(await usersWithEmail(server, email)).toEqual([]);
  });
});

describe('the per-address limit of the form POST counts sign-ups too (small limit)', () => {
  let app: TestClient;

  const server = useOAuthServer({ oauth: { rateLimit: { max: 3, timeWindow: '1 minute' } } });
  beforeAll(async () => {
    app = await insertClient(server.db);
  });

  it('sign-ups and sign-ins share the count; past it a sign-up gets the 429 page and creates nothing', async () => {
    const { query } = await codeFlowStart(app.client);
    const form = await getSignUpForm(server, query);
    const signUp = (fields: Record<string, string>) => postForm(server.base, { ...form.fields, ...fields }, form.cookie);
    expect((await signUp({ name: 'Ada', email: 'not-an-email', password: PASSWORD })).status).toBe(400);
    expect((await signUp({ name: 'Ada', email: newEmail(), password: 'short' })).status).toBe(400);
    const signIn = await getForm(server.base, query);
    const wrong = await postForm(server.base, { ...signIn.fields, email: 'nobody@example.com', password: 'wrong-password' }, signIn.cookie);
    expect(wrong.status).toBe(400);
    expect(wrong.headers.get('ratelimit-remaining')).toBe('0');
    const email = newEmail();
    const limited = await signUp({ name: 'Ada', email, password: PASSWORD });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expectPageHeaders(limited.headers);
    expect(await limited.text()).toMatch(/<h1>Too many attempts<\/h1>[\s\S]*role="alert"/);
    expect(await usersWithEmail(server, email)).toEqual([]);
  });
});
