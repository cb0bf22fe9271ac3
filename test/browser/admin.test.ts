/**
 * The admin console example (examples/admin) in a real browser (Debian's chromium through
 * playwright-core), built once for this file the way `npm run example:admin` builds it: the packed
 * @order-service/client installed from its tarball, the console's OAuth client registered through
 * the admin API, `vite build` served on an origin of its own. An admin signs in through the
 * service's sign-in page (PKCE); filters the orders; sends a paid order to fulfillment, ships it,
 * marks it delivered and refunds part of it (a double click refunds once); adds, changes and
 * archives a product; registers a backend client (its secret shown once) and removes it. A
 * customer who signs in gets no admin rights. axe-core finds no serious or critical violation on
 * any page.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_CONSOLE, buildExample } from '../../scripts/examples.ts';
import { TEST_PASSWORD, type TestApp, type TestUser } from '../helpers/app.ts';
import { browserTestsRun as runs, expectAccessible, openExample, serveStatic, WAIT, watch, type ExampleUnderTest } from '../helpers/browser.ts';
import { freePort } from '../helpers/ports.ts';

let example: ExampleUnderTest;
let origin: string;
let t: TestApp;
let base: string;
let browser: Browser;
let products: { id: number; name: string }[];

beforeAll(async () => {
  if (!runs) return;
  example = await openExample(ADMIN_CONSOLE);
  ({ t, base, browser, origin } = example);
  const listed = await t.request({ method: 'GET', url: '/api/v1/products?limit=100' });
  products = listed.json<{ data: { id: number; name: string }[] }>().data;
}, 300_000);

afterAll(async () => {
  await example?.close();
});

/** A customer's order of two products, confirmed and paid through the API. */
async function paidOrder(customer: TestUser): Promise<{ id: number; total: number }> {
  const [first, second] = products.map((p) => p.id);
  const created = await t.request({
    method: 'POST',
    url: '/api/v1/orders',
    token: customer.token,
    payload: { items: [{ product_id: first, quantity: 1 }, { product_id: second, quantity: 2 }], address: '1 Market Street, Springfield' },
  });
  expect(created.statusCode).toBe(201);
  const order = created.json<{ id: number; total: number }>();
  expect((await t.request({ method: 'POST', url: `/api/v1/orders/${order.id}/confirm`, token: customer.token })).statusCode).toBe(200);
  const paid = await t.request({ method: 'POST', url: '/api/v1/payments', token: customer.token, payload: { order_id: order.id, amount: order.total, method: 'card' } });
  expect(paid.statusCode).toBe(201);
  return order;
}

/** Through the console's Sign in button and the service's sign-in form, back on the console. */
async function signIn(page: Page, email: string): Promise<void> {
  await page.goto(origin);
  await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.origin === base && url.pathname === '/oauth/authorize', WAIT);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.origin === origin && url.pathname === '/', WAIT);
  await page.getByRole('button', { name: 'Sign out' }).waitFor(WAIT);
}

const notice = (page: Page) => page.locator('.notice').textContent();

describe.skipIf(!runs)('the admin console in chromium', () => {
  let context: BrowserContext;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    if (!runs) return;
    context = await browser.newContext();
    page = await context.newPage();
    problems = watch(page);
    // The console asks before it cancels, archives or removes: the admin says yes.
    page.on('dialog', (dialog) => void dialog.accept());
  });
  afterAll(async () => {
    await context?.close();
  });

  it('an admin signs in, filters the orders, sends a paid order to fulfillment, ships it, marks it delivered, and refunds part of it once on a double click', { timeout: 180_000 }, async () => {
    const customer = await t.createUser();
    const order = await paidOrder(customer);
    const draft = await t.request({ method: 'POST', url: '/api/v1/orders', token: customer.token, payload: { items: [{ product_id: products[0]?.id, quantity: 1 }] } });
    const draftId = draft.json<{ id: number }>().id;

    await page.goto(origin);
    await expectAccessible(page, 'signed out');
    await signIn(page, t.admin.email);
    await page.getByRole('link', { name: `Order #${order.id}` }).waitFor(WAIT);
    await expectAccessible(page, 'orders');

    // The status filter narrows the list and stays in the address.
    await page.getByLabel('Status').selectOption('paid');
    await page.waitForURL(`${origin}/?status=paid`, WAIT);
    await expect.poll(() => page.getByRole('rowheader').allTextContents(), WAIT).toEqual([`Order #${order.id}`]);
    await page.getByLabel('Status').selectOption('draft');
    await expect.poll(() => page.getByRole('rowheader').allTextContents(), WAIT).toEqual([`Order #${draftId}`]);
    await page.getByLabel('Status').selectOption('');

    // Customers by name and email, linked to their orders (regression: "#2").
    const row = page.getByRole('row').filter({ hasText: `Order #${order.id}` });
    await expect.poll(() => row.getByRole('cell').first().textContent(), WAIT).toBe(`${customer.name} ${customer.email}`);
    expect(await row.getByRole('link', { name: customer.email }).getAttribute('href')).toBe(`mailto:${customer.email}`);
    await row.getByRole('link', { name: customer.name }).click();
    await page.waitForURL(`${origin}/?customer_id=${customer.id}`, WAIT);
    await expect.poll(() => page.getByRole('rowheader').allTextContents(), WAIT).toEqual([`Order #${draftId}`, `Order #${order.id}`]);
    await expectAccessible(page, 'orders of a customer');
    await page.getByRole('link', { name: `Order #${order.id}` }).click();

    await page.getByRole('heading', { level: 1, name: `Order #${order.id}` }).waitFor(WAIT);
    await expect.poll(() => page.getByRole('main').getByRole('link', { name: customer.name }).count(), WAIT).toBe(1);
    await page.getByRole('button', { name: 'Send to fulfillment' }).waitFor(WAIT);
    // The lines show `Product #<id>` until the catalogue's names arrive.
    await expect.poll(() => page.locator('tbody').getByRole('rowheader').allTextContents(), WAIT).toEqual(products.slice(0, 2).map((p) => p.name));
    await expectAccessible(page, 'order (paid)');

    await page.getByRole('button', { name: 'Send to fulfillment' }).click();
    await expect.poll(() => notice(page), WAIT).toBe('Sent to fulfillment.');
    await page.getByLabel('Carrier').fill('UPS');
    await page.getByLabel('Tracking number').fill('1Z999AA10123456784');
    await page.getByRole('button', { name: 'Ship' }).click();
    await expect.poll(() => notice(page), WAIT).toBe('Shipped.');
    await page.getByRole('button', { name: 'Mark delivered' }).click();
    await expect.poll(() => notice(page), WAIT).toBe('Marked delivered.');
    const delivered = await t.request({ method: 'GET', url: `/api/v1/orders/${order.id}`, token: t.admin.token });
    expect(delivered.json<{ status: string }>().status).toBe('delivered');
    const fulfillments = await t.request({ method: 'GET', url: `/api/v1/orders/${order.id}/fulfillments`, token: t.admin.token });
    expect(fulfillments.json<{ data: { status: string; carrier: string }[] }>().data.map((f) => [f.status, f.carrier])).toEqual([['shipped', 'UPS']]);

    // A partial refund, double-clicked: one refund. Typed in dollars, as the page shows money
    // (regression: "Refund (minor units, at most 5100)" beside "$51.00").
    const refundLabel = (await page.locator('label').filter({ has: page.getByLabel(/^Refund/) }).textContent()) ?? '';
    expect(refundLabel).toBe(`Refund (USD, at most $${(order.total / 100).toFixed(2)})`);
    expect(await page.getByLabel(/^Refund/).inputValue()).toBe((order.total / 100).toFixed(2));
    await page.getByLabel(/^Refund/).fill('10.00');
    await page.getByLabel('Reason').selectOption('requested_by_customer');
    await page.getByRole('button', { name: 'Refund', exact: true }).dblclick();
    await expect.poll(() => notice(page), WAIT).toBe('Refunded.');
    const payments = await t.request({ method: 'GET', url: `/api/v1/payments?order_id=${order.id}`, token: t.admin.token });
    const [payment] = payments.json<{ data: { id: number; amount_refunded: number }[] }>().data;
    expect(payment?.amount_refunded).toBe(1000);
    const refunds = await t.request({ method: 'GET', url: `/api/v1/payments/${payment?.id}/refunds`, token: t.admin.token });
    expect(refunds.json<{ data: { amount: number; reason: string }[] }>().data).toMatchObject([{ amount: 1000, reason: 'requested_by_customer' }]);
    expect(await page.getByText('$10.00 refunded').count()).toBe(1);
    await expectAccessible(page, 'order (delivered, refunded in part)');

    // A refund of more than remains: the service's problem, shown with the field and the request id.
    await page.getByLabel(/^Refund/).evaluate((input) => input.removeAttribute('max'));
    await page.getByLabel(/^Refund/).fill((order.total / 100).toFixed(2));
    await page.getByRole('button', { name: 'Refund', exact: true }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor(WAIT);
    expect(await alert.textContent()).toMatch(/Request id: \S+/);
    expect(await alert.textContent()).not.toMatch(/[{}]|problems\//);
    expect(problems).toEqual([]);
  });

  it('adds a product, changes its price, and archives it', { timeout: 120_000 }, async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Products' }).click();
    await page.getByRole('link', { name: 'Kettle' }).waitFor(WAIT);
    await expectAccessible(page, 'products');
    await page.getByLabel('SKU').fill('LAMP-DESK');
    await page.getByLabel('Name').fill('Desk lamp');
    await page.getByLabel('Category').fill('home');
    await page.getByLabel('Price (USD)').fill('45.00');
    await page.getByLabel('Stock').fill('7');
    await page.getByRole('button', { name: 'Add product' }).click();
    await expect.poll(() => notice(page), WAIT).toBe('Added Desk lamp.');
    await page.getByRole('link', { name: 'Desk lamp' }).click();
    await page.getByRole('heading', { level: 1, name: 'Desk lamp' }).waitFor(WAIT);
    await expectAccessible(page, 'product');
    // An integration's metadata on it survives the console's save (a PUT replaces the whole product).
    const id = Number(new URL(page.url()).pathname.split('/').pop());
    const stored = await t.request({ method: 'GET', url: `/api/v1/products/${id}` });
    const tagged = await t.request({ method: 'PUT', url: `/api/v1/products/${id}`, token: t.admin.token, payload: { ...stored.json<Record<string, unknown>>(), id: undefined, metadata: { erp_id: 'ERP-7' } } });
    expect(tagged.statusCode, tagged.body).toBe(200);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Desk lamp' }).waitFor(WAIT);
    // The price as the page shows it, in dollars, and changed in dollars (regression: 4500 in cents).
    expect(await page.getByLabel('Price (USD)').inputValue()).toBe('45.00');
    await page.getByLabel('Price (USD)').fill('39');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => notice(page), WAIT).toBe('Saved.');
    expect((await t.request({ method: 'GET', url: `/api/v1/products/${id}` })).json<{ price: number; metadata: unknown }>()).toMatchObject({ price: 3900, metadata: { erp_id: 'ERP-7' } });

    await page.getByRole('button', { name: 'Archive' }).click();
    await page.waitForURL(`${origin}/products`, WAIT);
    await page.getByRole('link', { name: 'Kettle' }).waitFor(WAIT);
    expect(await page.getByRole('link', { name: 'Desk lamp' }).count()).toBe(0);
    expect((await t.request({ method: 'GET', url: `/api/v1/products/${id}` })).statusCode).toBe(410);
    expect(problems).toEqual([]);
  });

  it('registers a backend client, shows its secret once, and removes it', { timeout: 120_000 }, async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'OAuth clients' }).click();
    await page.getByRole('rowheader', { name: ADMIN_CONSOLE.clientName }).waitFor(WAIT);
    await expectAccessible(page, 'clients');
    await page.getByLabel('Name').fill('Warehouse sync');
    await page.getByLabel(/A backend service/).check();
    await page.getByLabel('orders:read').uncheck();
    await page.getByLabel('events:read').check();
    await page.getByRole('button', { name: 'Register' }).click();
    await page.getByRole('rowheader', { name: 'Warehouse sync' }).waitFor(WAIT);
    const secret = (await page.locator('.secret code').nth(1).textContent()) ?? '';
    expect(secret.length).toBeGreaterThanOrEqual(32);
    const listed = await t.request({ method: 'GET', url: '/api/v1/clients?limit=100', token: t.admin.token });
    const warehouse = listed.json<{ data: { client_id: string; name: string; scopes: string[]; confidential: boolean }[] }>().data.find((c) => c.name === 'Warehouse sync');
    expect(warehouse).toMatchObject({ scopes: ['events:read'], confidential: true });
    // The secret works once, at the token endpoint.
    const token = await t.request({
      method: 'POST',
      url: '/oauth/token',
      payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: warehouse?.client_id ?? '', client_secret: secret }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(token.statusCode).toBe(200);

    await page.getByRole('button', { name: 'Remove Warehouse sync' }).click();
    await expect.poll(() => notice(page), WAIT).toBe('Removed Warehouse sync.');
    await expect.poll(() => page.getByRole('rowheader', { name: 'Warehouse sync' }).count(), WAIT).toBe(0);
    expect(problems).toEqual([]);
  });

  it('a customer who signs in gets no admin rights: registering clients is refused with a message', { timeout: 120_000 }, async () => {
    const customer = await t.createUser();
    const fresh = await browser.newContext();
    const page = await fresh.newPage();
    const problems = watch(page);
    await signIn(page, customer.email);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'OAuth clients' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor(WAIT);
    expect(await alert.textContent()).toMatch(/Forbidden|scope/);
    await expectAccessible(page, 'clients (customer)');
    expect(problems).toEqual([]);
    await fresh.close();
  });

  it('compiles under strict TypeScript (exactOptionalPropertyTypes) against the packed package alone', { timeout: 180_000 }, async () => {
    expect(await example.typecheck).toBe('');
  });
});

describe.skipIf(!runs)('the admin console without its service', () => {
  it('"Sign in" that cannot reach the service says so on the page, naming its URL (regression: nothing on screen, a CORS error in the console only)', { timeout: 180_000 }, async () => {
    // The same console built against a port nothing listens on.
    const work = mkdtempSync(join(tmpdir(), 'admin-unreachable-'));
    const served = await serveStatic(join(work, 'dist'));
    const closed = `http://127.0.0.1:${await freePort()}`;
    const context = await browser.newContext();
    try {
      await buildExample(ADMIN_CONSOLE, join(work, 'dist'), { serviceUrl: closed, clientId: 'admin-console' });
      const page = await context.newPage();
      await page.goto(served.origin);
      await page.getByRole('heading', { level: 1, name: 'Order admin' }).waitFor(WAIT);
      await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor(WAIT);
      expect(await alert.textContent()).toBe(`Cannot reach the order service at ${closed}: is it running, and does its CORS_ORIGINS include this page's origin (${served.origin})?`);
      await expectAccessible(page, 'signed out (service unreachable)');
    } finally {
      await context.close();
      served.close();
      rmSync(work, { recursive: true, force: true });
    }
  });
});
