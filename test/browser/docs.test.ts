import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';

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
