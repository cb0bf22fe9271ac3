/**
 * The storefront example (examples/storefront) in a real browser (Debian's chromium through
 * playwright-core), built once for this file the way `npm run example:storefront` builds it: the
 * packed @order-service/client installed from its tarball, the storefront's OAuth client
 * registered through the admin API, sample products added, `vite build` served as static files on
 * an origin of its own. A shopper signs up through the service's sign-up page (PKCE), buys two
 * products, pays with a double click (one payment, one idempotency key), sees the order paid and
 * then shipped (live, through orders.onChange); problems are shown as sentences; axe-core finds no serious or critical
 * violation on any page.
 *
 * Runs in the pglite project only: the app, not the database, is under test.
 */
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildExample, SAMPLE_PRODUCTS, STOREFRONT } from '../../scripts/examples.ts';
import { TEST_PASSWORD, type TestApp } from '../helpers/app.ts';
import { browserTestsRun as runs, expectAccessible, openExample, serveStatic, WAIT, watch, type ExampleUnderTest } from '../helpers/browser.ts';
import { freePort } from '../helpers/ports.ts';

let example: ExampleUnderTest;
let shopOrigin: string;
let t: TestApp;
let base: string;
let browser: Browser;

beforeAll(async () => {
  if (!runs) return;
  example = await openExample(STOREFRONT);
  ({ t, base, browser, origin: shopOrigin } = example);
}, 300_000);

afterAll(async () => {
  await example?.close();
});

const statusOf = (page: Page) => page.locator('[data-status]').getAttribute('data-status');

/** How the shop writes a moment on every page (examples/storefront/src/dates.ts): "3 May 2026, 14:05". */
const ONE_DATE_FORMAT = /^\d{1,2} [A-Z][a-z]{2,3} \d{4}, \d{2}:\d{2}$/;

describe.skipIf(!runs)('the storefront in chromium', () => {
  // One tab for the shopper of the first two tests: the sign-in lives in the tab's sessionStorage.
  let context: BrowserContext;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    if (!runs) return;
    context = await browser.newContext();
    page = await context.newPage();
    problems = watch(page);
  });
  afterAll(async () => {
    await context?.close();
  });

  it('a shopper signs up, buys two products, pays with a double click (one payment, one key), sees the order paid, then shipped', { timeout: 180_000 }, async () => {
    const paymentRequests: (string | null)[] = [];
    const liveRequests: string[] = [];
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (path === '/trpc/payments.create') paymentRequests.push(request.headers()['idempotency-key'] ?? null);
      if (path === '/trpc/orders.onChange') liveRequests.push(request.url());
    });

    // Browse: the sample products, anonymously; the category filter narrows them.
    await page.goto(shopOrigin);
    await page.getByRole('heading', { level: 2, name: 'Kettle' }).waitFor(WAIT);
    expect(await page.getByRole('heading', { level: 2 }).count()).toBe(SAMPLE_PRODUCTS.length);
    await expectAccessible(page, 'products');
    await page.getByLabel('Category').selectOption('books');
    await expect.poll(() => page.getByRole('heading', { level: 2 }).allTextContents(), WAIT).toEqual(['A5 notebook', 'Bread at home']);
    await page.getByLabel('Category').selectOption('');
    await page.getByRole('heading', { level: 2, name: 'Kettle' }).waitFor(WAIT);

    // Sign up on the service's own page (prompt=create), and land back in the shop, signed in.
    const email = `shopper-${Date.now()}@example.com`;
    await page.getByRole('banner').getByRole('button', { name: 'Create an account' }).click();
    await page.waitForURL((url) => url.origin === base && url.pathname === '/oauth/authorize', WAIT);
    await page.getByLabel('Name').fill('Grace Shopper');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('a-long-shopper-password');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL((url) => url.origin === shopOrigin && url.pathname === '/', WAIT);
    await page.getByRole('button', { name: 'Sign out' }).waitFor(WAIT);

    // Two products into the cart, then the cart becomes an order.
    await page.getByRole('button', { name: 'Add to cart: Kettle' }).click();
    await page.getByRole('button', { name: 'Add to cart: Blue mug' }).click();
    await page.getByRole('button', { name: 'Add to cart: Blue mug' }).click();
    await page.getByRole('link', { name: 'Cart (3)' }).click();
    await page.getByRole('heading', { level: 1, name: 'Your cart' }).waitFor(WAIT);
    await page.getByLabel('Delivery address').fill('1 Market Street, Springfield');
    await expectAccessible(page, 'cart');
    await page.getByRole('button', { name: 'Place order' }).click();
    await page.waitForURL(/\/orders\/\d+$/, WAIT);
    const orderId = Number(new URL(page.url()).pathname.split('/').pop());
    await expect.poll(() => statusOf(page), WAIT).toBe('draft');
    // The lines show `Product #<id>` until the catalogue's names arrive, which may be after the status.
    await expect.poll(() => page.getByRole('rowheader').allTextContents(), WAIT).toEqual(['Kettle', 'Blue mug']);
    expect(await page.locator('.total').textContent()).toContain('$63.00');
    await expectAccessible(page, 'order (draft)');

    await page.getByRole('button', { name: 'Confirm order' }).click();
    await expect.poll(() => statusOf(page), WAIT).toBe('confirmed');

    // A double click on Pay: one request, one payment.
    await page.getByRole('button', { name: 'Pay $63.00' }).dblclick();
    await expect.poll(() => statusOf(page), WAIT).toBe('paid');
    await page.getByRole('heading', { name: 'Payments' }).waitFor(WAIT);
    expect(await page.getByRole('alert').count()).toBe(0);
    const payments = await t.request({ method: 'GET', url: `/api/v1/payments?order_id=${orderId}`, token: t.admin.token });
    expect(payments.json<{ data: { amount: number }[] }>().data.map((p) => p.amount)).toEqual([6300]);
    // The second click met a button already busy: one request, with a key of its own.
    expect(paymentRequests).toHaveLength(1);
    expect(paymentRequests[0]).toMatch(/^[0-9a-f]{32}$/);
    await expectAccessible(page, 'order (paid)');

    // Shipped by the shop: the open page shows it on its own, live (orders.onChange over
    // server-sent events; the page no longer polls), which it subscribed to when it opened.
    expect(liveRequests.length).toBeGreaterThan(0);
    const shipped = await t.request({
      method: 'POST',
      url: `/api/v1/orders/${orderId}/fulfillments`,
      token: t.admin.token,
      payload: { carrier: 'UPS', tracking_number: '1Z999AA10123456784' },
    });
    expect(shipped.statusCode).toBe(201);
    await expect.poll(() => statusOf(page), WAIT).toBe('shipped');
    // The shopper sees how it travels (regression: the tracking number was never shown).
    await expect.poll(() => page.locator('.shipments').textContent(), WAIT).toContain('Sent with UPS');
    expect(await page.locator('.shipments .tracking').textContent()).toBe('1Z999AA10123456784');
    // One way of writing a moment on every page (regression: "5/3/2026, 2:05:00 PM" here, "May 3, 2026" in the list).
    const paidAt = ((await page.locator('.payments li').textContent()) ?? '').replace(/^.* on /, '');
    expect(paidAt).toMatch(ONE_DATE_FORMAT);
    await expectAccessible(page, 'order (shipped)');

    // The order history lists it.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Your orders' }).click();
    await page.getByRole('link', { name: `Order #${orderId}` }).waitFor(WAIT);
    expect(await page.getByRole('row').filter({ hasText: `Order #${orderId}` }).textContent()).toContain('Shipped');
    expect(await page.getByRole('row').filter({ hasText: `Order #${orderId}` }).getByRole('cell').first().textContent()).toMatch(ONE_DATE_FORMAT);
    await expectAccessible(page, 'orders');
    expect(problems).toEqual([]);
  });

  it('shows problems as sentences a shopper understands, never the JSON: an unknown order', { timeout: 120_000 }, async () => {
    await page.goto(`${shopOrigin}/orders/999999`);
    const alert = page.getByRole('alert');
    await alert.waitFor(WAIT);
    expect(await alert.textContent()).toContain("We couldn't find that.");
    expect(await alert.textContent()).not.toMatch(/[{}]|problems\//);
    await expectAccessible(page, 'order not found');
    expect(problems).toEqual([]);
  });

  it('a two-line delivery address places the order; a refused one shows the service\'s words beside the field (regression: 422 for a newline, then only "Please check the delivery address")', { timeout: 120_000 }, async () => {
    await page.goto(shopOrigin);
    await page.getByRole('button', { name: 'Add to cart: Wool socks, 3 pairs' }).click();
    await page.getByRole('link', { name: 'Cart (1)' }).click();
    const address = page.getByLabel('Delivery address');
    // A bell (U+0007) is a control character the service still refuses: its message shows at the field.
    await address.fill('1 Market Street\u0007');
    await page.getByRole('button', { name: 'Place order' }).click();
    await page.locator('#address-error').waitFor(WAIT);
    expect(await page.locator('#address-error').textContent()).toBe('Must not contain control characters other than tab and line breaks.');
    expect(await address.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByRole('alert').textContent()).toContain('Please check the delivery address.');
    await expectAccessible(page, 'cart (address refused)');

    await address.fill('Flat 2\n1 Market Street\nSpringfield');
    await page.getByRole('button', { name: 'Place order' }).click();
    await page.waitForURL(/\/orders\/\d+$/, WAIT);
    await expect.poll(() => statusOf(page), WAIT).toBe('draft');
    // Shown on the lines it was written on.
    expect(await page.locator('.address').innerText()).toBe('Flat 2\n1 Market Street\nSpringfield');
    await page.getByRole('button', { name: 'Confirm order' }).click();
    await expect.poll(() => statusOf(page), WAIT).toBe('confirmed');
    expect(problems).toEqual([]);
  });

  it('the cart caps a quantity at the stock, and a refusal for stock offers the change that fixes it (regression: 50 accepted with 8 in stock, then "Lower the quantity" with no quantity to lower)', { timeout: 120_000 }, async () => {
    const products = await t.request({ method: 'GET', url: '/api/v1/products?limit=100', token: t.admin.token });
    const bread = products.json<{ data: { id: number; sku: string; stock: number }[] }>().data.find((p) => p.sku === 'BOOK-BREAD');
    if (bread === undefined) throw new Error('the sample products have no BOOK-BREAD');

    await page.goto(shopOrigin);
    await page.getByRole('button', { name: 'Add to cart: Bread at home' }).click();
    await page.getByRole('link', { name: 'Cart (1)' }).click();
    const quantity = page.getByLabel('Quantity of Bread at home');
    await quantity.fill('50');
    await expect.poll(() => quantity.inputValue(), WAIT).toBe(String(bread.stock));
    expect(await page.getByRole('status').filter({ hasText: 'in stock' }).textContent()).toBe(`Only ${bread.stock} Bread at home in stock: your cart now holds ${bread.stock}.`);
    expect(await page.getByRole('link', { name: `Cart (${bread.stock})` }).count()).toBe(1);
    await page.getByLabel('Delivery address').fill('1 Market Street, Springfield');
    await page.getByRole('button', { name: 'Place order' }).click();
    await page.waitForURL(/\/orders\/\d+$/, WAIT);
    await expect.poll(() => page.getByRole('rowheader').allTextContents(), WAIT).toEqual(['Bread at home']);

    // Meanwhile others bought some: confirming is refused, and the refusal says what to do.
    const lowered = await t.request({ method: 'PATCH', url: `/api/v1/products/${bread.id}`, token: t.admin.token, headers: { 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ stock: 3 }) });
    expect(lowered.statusCode, lowered.body).toBe(200);
    await page.getByRole('button', { name: 'Confirm order' }).click();
    await page.getByRole('alert').waitFor(WAIT);
    const refusal = (await page.getByRole('alert').textContent()) ?? '';
    expect(refusal).toContain("Sorry, we don't have enough Bread at home in stock.");
    expect(refusal).toMatch(/Reference: \S+/);
    expect(await statusOf(page)).toBe('draft');
    const shortage = page.getByRole('list', { name: 'Items short of stock' });
    await expect.poll(() => shortage.textContent(), WAIT).toContain(`Bread at home: ${bread.stock} in this order, 3 in stock.`);
    await expectAccessible(page, 'order (short of stock)');
    await shortage.getByRole('button', { name: 'Order 3 instead' }).click();
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'Bread at home' }).getByRole('cell').first().textContent(), WAIT).toBe('3');
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.getByRole('button', { name: 'Confirm order' }).click();
    await expect.poll(() => statusOf(page), WAIT).toBe('confirmed');
    expect(problems).toEqual([]);
  });

  it('the stock fix is sent with the order\'s ETag: an edit made meanwhile in another tab is refused (412), said, and the order reloaded, not overwritten (regression: a merge patch of every line from the page\'s stale copy, no If-Match)', { timeout: 120_000 }, async () => {
    const products = await t.request({ method: 'GET', url: '/api/v1/products?limit=100', token: t.admin.token });
    const bread = products.json<{ data: { id: number; sku: string }[] }>().data.find((p) => p.sku === 'BOOK-BREAD');
    if (bread === undefined) throw new Error('the sample products have no BOOK-BREAD');
    const setStock = async (stock: number) => {
      const res = await t.request({ method: 'PATCH', url: `/api/v1/products/${bread.id}`, token: t.admin.token, headers: { 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ stock }) });
      expect(res.statusCode, res.body).toBe(200);
    };
    const patches: (string | null)[] = [];
    const onRequest = (request: Request) => {
      if (new URL(request.url()).pathname === '/trpc/orders.patch') patches.push(request.headers()['if-match'] ?? null);
    };
    page.on('request', onRequest);
    // The page must not hear the other tab's edit live (orders.onChange would read the order again
    // at once): as when that event is late, or the connection is down.
    const deaf = '**/trpc/orders.onChange**';
    await page.route(deaf, (route) => route.abort());
    try {
      await setStock(5);
      await page.goto(shopOrigin);
      await page.getByRole('button', { name: 'Add to cart: Bread at home' }).click();
      await page.getByRole('link', { name: 'Cart (1)' }).click();
      await page.getByLabel('Quantity of Bread at home').fill('5');
      await page.getByLabel('Delivery address').fill('1 Market Street, Springfield');
      await page.getByRole('button', { name: 'Place order' }).click();
      await page.waitForURL(/\/orders\/\d+$/, WAIT);
      const orderId = Number(new URL(page.url()).pathname.split('/').pop());
      await expect.poll(() => page.getByRole('row').filter({ hasText: 'Bread at home' }).getByRole('cell').first().textContent(), WAIT).toBe('5');

      await setStock(2);
      await page.getByRole('button', { name: 'Confirm order' }).click();
      const shortage = page.getByRole('list', { name: 'Items short of stock' });
      await shortage.getByRole('button', { name: 'Order 2 instead' }).waitFor(WAIT);

      // Meanwhile, in another tab, the order changes: its address.
      const edited = await t.request({ method: 'PATCH', url: `/api/v1/orders/${orderId}`, token: t.admin.token, headers: { 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ address: '2 Side Street, Springfield' }) });
      expect(edited.statusCode, edited.body).toBe(200);

      // The page's copy is stale: the fix is refused, said, and the page shows the order as it is now.
      await shortage.getByRole('button', { name: 'Order 2 instead' }).click();
      await expect.poll(() => page.getByRole('alert').textContent(), WAIT).toContain('This order changed in the meantime, so nothing was changed: it has been reloaded.');
      await expect.poll(() => page.locator('.address').textContent(), WAIT).toBe('2 Side Street, Springfield');
      expect(patches).toHaveLength(1);
      expect(patches[0]).toMatch(/^"[\w-]+"$/);
      const kept = await t.request({ method: 'GET', url: `/api/v1/orders/${orderId}`, token: t.admin.token });
      expect(kept.json<{ address: string; items: { quantity: number }[] }>()).toMatchObject({ address: '2 Side Street, Springfield', items: [{ quantity: 5 }] });

      // From the fresh copy the same fix goes through, and keeps the other tab's edit.
      await page.getByRole('button', { name: 'Confirm order' }).click();
      await shortage.getByRole('button', { name: 'Order 2 instead' }).click();
      await expect.poll(() => page.getByRole('row').filter({ hasText: 'Bread at home' }).getByRole('cell').first().textContent(), WAIT).toBe('2');
      expect(await page.getByRole('alert').count()).toBe(0);
      const fixed = await t.request({ method: 'GET', url: `/api/v1/orders/${orderId}`, token: t.admin.token });
      expect(fixed.json<{ address: string; items: { quantity: number }[] }>()).toMatchObject({ address: '2 Side Street, Springfield', items: [{ quantity: 2 }] });
      expect(problems).toEqual([]);
    } finally {
      page.off('request', onRequest);
      await page.unroute(deaf);
    }
  });

  it('signs in (not up) from the cart with the sign-in form, and keeps the cart across the redirect', { timeout: 120_000 }, async () => {
    const customer = await t.createUser();
    const fresh = await browser.newContext();
    const page = await fresh.newPage();
    const problems = watch(page);
    await page.goto(shopOrigin);
    await page.getByRole('button', { name: 'Add to cart: Green T-shirt, M' }).click();
    await page.getByRole('link', { name: 'Cart (1)' }).click();
    await expectAccessible(page, 'cart (signed out)');
    await page.getByRole('main').getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.origin === base, WAIT);
    await page.getByLabel('Email').fill(customer.email);
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${shopOrigin}/cart`, WAIT);
    await page.getByRole('button', { name: 'Place order' }).waitFor(WAIT);
    expect(await page.getByRole('rowheader').allTextContents()).toEqual(['Green T-shirt, M']);
    expect(problems).toEqual([]);
    await fresh.close();
  });

  it('compiles under strict TypeScript (exactOptionalPropertyTypes) against the packed package alone', { timeout: 180_000 }, async () => {
    expect(await example.typecheck).toBe('');
  });
});

describe.skipIf(!runs)('the storefront without its service', () => {
  it('a page that cannot reach the service says so, naming its URL, and so does "Sign in" (regression: a blank page, and a button that did nothing on screen)', { timeout: 180_000 }, async () => {
    // The same app built against a port nothing listens on.
    const work = mkdtempSync(join(tmpdir(), 'storefront-unreachable-'));
    const served = await serveStatic(join(work, 'dist'));
    const closed = `http://127.0.0.1:${await freePort()}`;
    const context = await browser.newContext();
    try {
      await buildExample(STOREFRONT, join(work, 'dist'), { serviceUrl: closed, clientId: 'storefront' });
      const page = await context.newPage();
      await page.goto(served.origin);
      const alert = page.getByRole('alert');
      await alert.waitFor(WAIT);
      const expected = `Cannot reach the order service at ${closed}: is it running, and does its CORS_ORIGINS include this page's origin (${served.origin})?`;
      expect(await alert.textContent()).toContain(expected);
      await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByRole('alert').count(), WAIT).toBe(2);
      expect(await page.getByRole('alert').first().textContent()).toContain(expected);
      await expectAccessible(page, 'products (service unreachable)');
    } finally {
      await context.close();
      served.close();
      rmSync(work, { recursive: true, force: true });
    }
  });
});
