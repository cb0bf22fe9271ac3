import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDocsClient } from '../../server/modules/clients/clients.service.ts';
import { createTestApp, TEST_PASSWORD, type TestApp } from '../helpers/app.ts';

// The docs page is the same whatever the database: run it once, in the PGlite project.
const CHROMIUM = '/usr/bin/chromium';
const runs = process.env.TEST_DB !== 'postgres';
if (runs && !existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (.ci/run does)`);

let t: TestApp;
let browser: Browser;
let base: string;

beforeAll(async () => {
  if (!runs) return;
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  // What the service does at start (server/bootstrap.ts): the docs client, redirecting to this origin.
  await ensureDocsClient(t.db, base);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe.skipIf(!runs)('the interactive docs work in a real browser, offline', () => {
  it('renders the OpenAPI document with every tag, loading nothing from outside the service', async () => {
    const page = await browser.newPage();
    const outside: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(base) && !request.url().startsWith('data:')) outside.push(request.url());
    });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${base}/api/docs`);
    await page.waitForSelector('.swagger-ui .info .title', { timeout: 20_000 });
    expect(await page.textContent('.swagger-ui .info .title')).toContain('order-service');
    for (const tag of ['products', 'users', 'orders']) {
      await page.waitForSelector(`#operations-tag-${tag}`, { timeout: 10_000 });
    }
    expect(await page.locator('.opblock').count()).toBeGreaterThan(10);
    expect(outside).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('an operation opens and shows its problem responses', async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/api/docs`);
    await page.click('#operations-products-products-create .opblock-summary');
    await page.waitForSelector('#operations-products-products-create .responses-table', { timeout: 10_000 });
    const responses = await page.textContent('#operations-products-products-create .responses-table');
    expect(responses).toContain('201');
    expect(responses).toContain('422');
    await page.close();
  });
});

describe.skipIf(!runs)("the docs page's Authorize button signs in with the authorization code flow (PKCE) and calls the API", () => {
  it('serves the redirect page with its script from the service, under a strict policy', async () => {
    const res = await t.request({ method: 'GET', url: '/api/docs/oauth2-redirect.html' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-security-policy']).toBe("default-src 'none'; script-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    // No inline script: every script is a file of the service.
    expect(res.body.match(/<script[^>]*>/g)).toEqual(['<script src="/api/docs/assets/oauth2-redirect.js">']);
    expect((await t.request({ method: 'GET', url: '/api/docs/assets/oauth2-redirect.js' })).statusCode).toBe(200);
    // The docs page's own policy stays strict: scripts from the service only, nothing inline.
    const docs = await t.request({ method: 'GET', url: '/api/docs' });
    expect(docs.headers['content-security-policy']).toMatch(/script-src 'self';/);
    expect(docs.headers['content-security-policy']).not.toMatch(/script-src[^;]*unsafe/);
  });

  it('Authorize -> sign-in form -> back to the docs, authorized; Try it out on an operation that needs a token answers 200', { timeout: 90_000 }, async () => {
    const customer = await t.createUser();
    const context = await browser.newContext();
    const page = await context.newPage();
    const violations: string[] = [];
    const errors: string[] = [];
    context.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));

    await page.goto(`${base}/api/docs`);
    await page.waitForSelector('.swagger-ui .info .title', { timeout: 20_000 });
    await page.click('.swagger-ui .auth-wrapper .authorize');
    const flow = page.locator('.auth-container').filter({ hasText: 'authorizationCode' });
    await flow.waitFor({ timeout: 10_000 });
    // The docs client and PKCE come from the page's configuration; every scope is preselected.
    expect(await flow.locator('#client_id_authorizationCode').inputValue()).toBe('order-service-docs');
    expect(await flow.textContent()).toContain('authorizationCode with PKCE');

    const [popup] = await Promise.all([context.waitForEvent('page'), flow.locator('button.authorize').click()]);
    await popup.waitForLoadState();
    const authorizeUrl = new URL(popup.url());
    expect(authorizeUrl.pathname).toBe('/oauth/authorize');
    expect(authorizeUrl.searchParams.get('client_id')).toBe('order-service-docs');
    expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizeUrl.searchParams.get('redirect_uri')).toBe(`${base}/api/docs/oauth2-redirect.html`);
    await popup.getByLabel('Email').fill(customer.email);
    await popup.getByLabel('Password').fill(TEST_PASSWORD);
    await Promise.all([popup.waitForEvent('close', { timeout: 20_000 }), popup.getByRole('button', { name: 'Sign in' }).click()]);

    // Swagger UI exchanged the code (with its verifier) for a token: the flow says Authorized.
    await flow.locator('h6', { hasText: 'Authorized' }).waitFor({ timeout: 20_000 });
    await page.click('.swagger-ui .dialog-ux .modal-ux-header .close-modal');

    const operation = page.locator('#operations-orders-orders-list');
    await operation.locator('.opblock-summary').click();
    await operation.locator('button.try-out__btn').click();
    // Swagger UI fills each parameter with its example: customer_id has none, since a customer
    // naming another is 403 (docs/api.md), so the list works as the page offers it.
    expect(await operation.locator('tr[data-param-name="customer_id"] input').inputValue()).toBe('');
    const [answer] = await Promise.all([
      page.waitForResponse((response) => new URL(response.url()).pathname === '/api/v1/orders', { timeout: 20_000 }),
      operation.locator('button.execute').click(),
    ]);
    expect(answer.status()).toBe(200);
    expect(await answer.request().headerValue('authorization')).toMatch(/^Bearer ey/);
    await operation.locator('.live-responses-table tbody .response-col_status').first().waitFor({ timeout: 10_000 });
    expect((await operation.locator('.live-responses-table tbody .response-col_status').first().textContent())?.trim()).toBe('200');

    expect(violations).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
