/**
 * The sign-in form in a real browser (Debian's chromium through playwright-core): fields found by
 * their labels, submitted with the keyboard, the redirect followed to the client's redirect URI (a
 * tiny local HTTP server) with a code that oauth4webapi exchanges. Its strict Content-Security-Policy
 * (no script, hashed style, form-action) must let all of that happen and report no violation. The
 * sign-up form the same way, with JavaScript turned off.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { eq } from 'drizzle-orm';
import * as oauth from 'oauth4webapi';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { users } from '../../server/db/schema.ts';
import { TEST_PASSWORD, type TestUser } from '../helpers/app.ts';
import { codeFlowStart, insecure, insertClient, startOAuthServer, type OAuthTestServer, type TestClient } from '../helpers/oauth.ts';

// The form is the same whatever the database: run it once, in the PGlite project.
const CHROMIUM = '/usr/bin/chromium';
const runs = process.env.TEST_DB !== 'postgres';
if (runs && !existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (.ci/run does)`);

let server: OAuthTestServer;
let browser: Browser;
let callbackServer: Server;
let redirectUri: string;
let app: TestClient;
let ada: TestUser;

beforeAll(async () => {
  if (!runs) return;
  // The client's redirect URI: answers every request with a plain page.
  callbackServer = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('signed in'));
  callbackServer.listen(0, '127.0.0.1');
  await once(callbackServer, 'listening');
  const address = callbackServer.address();
  redirectUri = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/callback`;
  server = await startOAuthServer();
  app = await insertClient(server.db, { name: 'Corner Shop', redirectUris: [redirectUri], scopes: ['orders:read', 'orders:write'] });
  ada = await server.createUser('customer');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  callbackServer?.close();
});

async function openForm(options: { javaScriptEnabled?: boolean } = {}): Promise<{ page: Page; start: Awaited<ReturnType<typeof codeFlowStart>>; problems: string[] }> {
  const page = await browser.newPage(options);
  const problems: string[] = [];
  page.on('console', (message) => {
    // A CSP violation is reported as a console error; the 400 of a refused sign-in is not a problem.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  const start = await codeFlowStart(app.client, { redirect_uri: redirectUri, scope: 'orders:read' });
  await page.goto(`${server.base}/oauth/authorize?${new URLSearchParams(start.query)}`);
  return { page, start, problems };
}

describe.skipIf(!runs)('signing in with the form in chromium', () => {
  it('fills the labelled fields, submits with Enter, lands on the redirect URI with a code that works', async () => {
    const { page, start, problems } = await openForm();
    expect(await page.title()).toBe('Sign in - order-service');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
    expect(await page.getByRole('main').count()).toBe(1);
    // The email field has the focus: a keyboard user starts typing at once.
    expect(await page.evaluate('document.activeElement?.id')).toBe('email');
    await page.getByLabel('Email').fill(ada.email);
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    await Promise.all([page.waitForURL((url) => url.href.startsWith(redirectUri), { timeout: 15_000 }), page.getByLabel('Password').press('Enter')]);
    const landed = new URL(page.url());
    expect(await page.textContent('body')).toBe('signed in');
    expect(landed.searchParams.get('state')).toBe(start.state);
    const params = oauth.validateAuthResponse(server.as, app.client, landed, start.state);
    const response = await oauth.authorizationCodeGrantRequest(server.as, app.client, app.auth, params, redirectUri, start.verifier, insecure);
    const tokens = await oauth.processAuthorizationCodeResponse(server.as, app.client, response);
    expect(tokens.scope).toBe('orders:read');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('by keyboard alone: Tab between the fields, Enter to submit; a wrong password is announced in an alert', async () => {
    const { page, problems } = await openForm();
    // autofocus lands once the page has rendered: keys typed before it would go nowhere.
    await expect.poll(() => page.evaluate('document.activeElement?.id'), { timeout: 5000 }).toBe('email');
    await page.keyboard.type(ada.email);
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.id')).toBe('password');
    await page.keyboard.type('not-the-password');
    await Promise.all([page.waitForLoadState('load'), page.waitForResponse((r) => r.request().method() === 'POST'), page.keyboard.press('Enter')]);
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('The email or password is incorrect.');
    // The email stays, the password does not; the focus is on the password.
    expect(await page.getByLabel('Email').inputValue()).toBe(ada.email);
    expect(await page.getByLabel('Password').inputValue()).toBe('');
    expect(await page.evaluate('document.activeElement?.id')).toBe('password');
    // The fields point at the alert, so a screen reader reads it with them.
    expect(await page.getByLabel('Password').getAttribute('aria-describedby')).toBe('sign-in-error');
    await page.keyboard.type(TEST_PASSWORD);
    await Promise.all([page.waitForURL((url) => url.href.startsWith(redirectUri), { timeout: 15_000 }), page.keyboard.press('Enter')]);
    expect(new URL(page.url()).searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(problems).toEqual([]);
    await page.close();
  });
});

describe.skipIf(!runs)('signing up with the form in chromium, JavaScript off', () => {
  it('"Create an account", a known email announced beside its field, then a new account lands on the redirect URI with a code that works', async () => {
    const { page, start, problems } = await openForm({ javaScriptEnabled: false });
    await Promise.all([page.waitForURL((url) => url.searchParams.get('prompt') === 'create'), page.getByRole('link', { name: 'Create an account' }).click()]);
    expect(await page.title()).toBe('Create an account - order-service');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Create an account');
    // The request goes on: the sign-up page carries the same state.
    expect(new URL(page.url()).searchParams.get('state')).toBe(start.state);
    const name = page.getByLabel('Name');
    const email = page.getByLabel('Email');
    const password = page.getByLabel('Password');
    expect([await name.getAttribute('autocomplete'), await email.getAttribute('autocomplete'), await password.getAttribute('autocomplete')]).toEqual([
      'name',
      'email',
      'new-password',
    ]);
    await name.fill('Grace Hopper');
    await email.fill(ada.email);
    await password.fill('a-new-customer-password');
    await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Create account' }).click()]);
    await page.waitForLoadState('load');
    expect(await page.getByRole('alert').textContent()).toBe('An account with this email already exists. Sign in instead.');
    // The message sits under the field, which points at it and is marked invalid; the name stays, the password does not.
    expect(await page.getByLabel('Email').getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await page.getByLabel('Email').getAttribute('aria-describedby')) ?? '';
    expect(await page.locator(`#${describedBy}`).textContent()).toBe('An account with this email already exists.');
    expect(await page.getByLabel('Name').inputValue()).toBe('Grace Hopper');
    expect(await page.getByLabel('Password').inputValue()).toBe('');
    expect(await page.getByRole('link', { name: 'Sign in instead' }).count()).toBe(1);
    const newEmail = `grace-${Date.now()}@example.com`;
    await page.getByLabel('Email').fill(newEmail);
    await page.getByLabel('Password').fill('a-new-customer-password');
    await Promise.all([page.waitForURL((url) => url.href.startsWith(redirectUri), { timeout: 15_000 }), page.getByLabel('Password').press('Enter')]);
    const landed = new URL(page.url());
    expect(landed.searchParams.get('state')).toBe(start.state);
    const params = oauth.validateAuthResponse(server.as, app.client, landed, start.state);
    const response = await oauth.authorizationCodeGrantRequest(server.as, app.client, app.auth, params, redirectUri, start.verifier, insecure);
    const tokens = await oauth.processAuthorizationCodeResponse(server.as, app.client, response);
    expect(tokens.scope).toBe('orders:read');
    const created = await server.db.select({ role: users.role }).from(users).where(eq(users.email, newEmail));
    expect(created).toEqual([{ role: 'customer' }]);
    expect(problems).toEqual([]);
    await page.close();
  });
});
