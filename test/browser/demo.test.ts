/**
 * `npm run demo` (scripts/demo.ts) as a person runs it: one command, then a purchase in the
 * storefront and its fulfilment in the admin console, both against the one service it started,
 * in Debian's chromium; then Ctrl-C (SIGINT) ends the demo and every process it started.
 *
 * Runs in the pglite project only: the demo runs on PGlite in memory whatever the suite's database.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserTestsRun as runs, launchChromium, WAIT, watch } from '../helpers/browser.ts';
import { collectLines, descendants, killTree, lineOf, running, withFreePorts } from '../helpers/process-tree.ts';

const root = resolve(import.meta.dirname, '../..');
/** scripts/demo.ts's last line once the three are up. */
const READY = 'The demo is ready. Ctrl-C stops it.';

let demo: ChildProcess;

/** scripts/demo.ts with these settings, its lines collected into `lines`. */
function startDemo(env: NodeJS.ProcessEnv, lines: string[]): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  collectLines(child, lines);
  return child;
}
const output: string[] = [];
let browser: Browser;
/** What the demo printed: its URLs and the two accounts. */
let printed: { service: string; storefront: string; admin: string; customerLogin: [string, string]; adminLogin: [string, string] };

function printedLine(label: string): string {
  const line = output.find((l) => l.startsWith(`  ${label}:`));
  if (!line) throw new Error(`the demo printed no "${label}:" line:\n${output.join('\n')}`);
  return line.slice(label.length + 3).trim();
}

const login = (label: string): [string, string] => {
  const [email = '', , password = ''] = printedLine(label).split(/\s+/);
  return [email, password];
};

beforeAll(async () => {
  if (!runs) return;
  await withFreePorts(3, async ([port, storefrontPort, adminPort]) => {
    output.length = 0;
    demo = startDemo({ PORT: String(port), STOREFRONT_PORT: String(storefrontPort), ADMIN_CONSOLE_PORT: String(adminPort) }, output);
    await lineOf(demo, output, (line) => line === READY);
  });
  printed = {
    service: printedLine('Service').split(/\s+/)[0] ?? '',
    storefront: printedLine('Storefront'),
    admin: printedLine('Admin console'),
    customerLogin: login('Customer'),
    adminLogin: login('Admin'),
  };
  browser = await launchChromium();
}, 600_000);

afterAll(async () => {
  await browser?.close();
  // Only if a test failed before stopping it: the demo and what it started, by pid.
  killTree(demo);
});

/** Through the app's Sign in button and the service's sign-in form, back on the app, signed in. */
async function signIn(page: Page, appOrigin: string, [email, password]: [string, string]): Promise<void> {
  await page.goto(appOrigin);
  await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.origin === printed.service && url.pathname === '/oauth/authorize', WAIT);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.origin === appOrigin, WAIT);
  await page.getByRole('button', { name: 'Sign out' }).waitFor(WAIT);
}

describe.skipIf(!runs)('npm run demo: the storefront and the admin console on one service', () => {
  it('prints the service, both apps and two accounts with generated passwords', () => {
    expect(printed.service).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(printed.storefront).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(printed.admin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(printed.customerLogin[0]).toMatch(/@/);
    expect(printed.adminLogin[0]).toMatch(/@/);
    expect(printed.customerLogin[1].length).toBeGreaterThanOrEqual(12);
    expect(printed.adminLogin[1]).not.toBe(printed.customerLogin[1]);
  });

  it('a purchase in the storefront is fulfilled in the admin console: the customer sees it shipped', { timeout: 300_000 }, async () => {
    const shop = await (await browser.newContext()).newPage();
    const shopProblems = watch(shop);

    // The printed customer signs in, buys a kettle, confirms and pays.
    await signIn(shop, printed.storefront, printed.customerLogin);
    await shop.getByRole('button', { name: 'Add to cart: Kettle' }).click();
    await shop.getByRole('link', { name: 'Cart (1)' }).click();
    await shop.getByLabel('Delivery address').fill('1 Market Street, Springfield');
    await shop.getByRole('button', { name: 'Place order' }).click();
    await shop.waitForURL(/\/orders\/\d+$/, WAIT);
    const orderId = Number(new URL(shop.url()).pathname.split('/').pop());
    const status = () => shop.locator('[data-status]').getAttribute('data-status');
    await expect.poll(status, WAIT).toBe('draft');
    await shop.getByRole('button', { name: 'Confirm order' }).click();
    await expect.poll(status, WAIT).toBe('confirmed');
    await shop.getByRole('button', { name: /^Pay / }).click();
    await expect.poll(status, WAIT).toBe('paid');

    // The printed admin signs in to the console, on the same service, and ships it.
    const console = await (await browser.newContext()).newPage();
    const consoleProblems = watch(console);
    console.on('dialog', (dialog) => void dialog.accept());
    await signIn(console, printed.admin, printed.adminLogin);
    await console.getByRole('link', { name: `Order #${orderId}` }).click(WAIT);
    await console.getByRole('heading', { level: 1, name: `Order #${orderId}` }).waitFor(WAIT);
    await console.getByRole('button', { name: 'Send to fulfillment' }).click(WAIT);
    await expect.poll(() => console.locator('.notice').textContent(), WAIT).toBe('Sent to fulfillment.');
    await console.getByLabel('Carrier').fill('UPS');
    await console.getByLabel('Tracking number').fill('1Z999AA10123456784');
    await console.getByRole('button', { name: 'Ship' }).click();
    await expect.poll(() => console.locator('.notice').textContent(), WAIT).toBe('Shipped.');

    // The shopper's open page hears it (live updates from the same service).
    await expect.poll(status, WAIT).toBe('shipped');
    // And the service says so: the admin's token from the password grant of development's client.
    const token = await fetch(`${printed.service}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'password', client_id: 'order-service-dev', username: printed.adminLogin[0], password: printed.adminLogin[1], scope: 'orders:read' }),
    }).then((r) => r.json() as Promise<{ access_token: string }>);
    const order = await fetch(`${printed.service}/api/v1/orders/${orderId}`, { headers: { authorization: `Bearer ${token.access_token}` } }).then(
      (r) => r.json() as Promise<{ status: string }>,
    );
    expect(order.status).toBe('shipped');
    const fulfillments = await fetch(`${printed.service}/api/v1/orders/${orderId}/fulfillments`, { headers: { authorization: `Bearer ${token.access_token}` } }).then(
      (r) => r.json() as Promise<{ data: { carrier: string; tracking_number: string }[] }>,
    );
    expect(fulfillments.data).toMatchObject([{ carrier: 'UPS', tracking_number: '1Z999AA10123456784' }]);
    expect(shopProblems).toEqual([]);
    expect(consoleProblems).toEqual([]);
  });

  it('Ctrl-C (SIGINT) stops the service and both dev servers, and the demo exits 0', { timeout: 120_000 }, async () => {
    const pid = demo.pid ?? -1;
    const started = descendants(pid);
    // The service and two Vite servers at least (Vite may run helpers of its own).
    expect(started.length).toBeGreaterThanOrEqual(3);
    const exited = new Promise<number | null>((done) => demo.once('exit', (code) => done(code)));
    demo.kill('SIGINT');
    expect(await exited).toBe(0);
    await expect.poll(() => started.filter(running), { timeout: 60_000 }).toEqual([]);
    for (const url of [printed.service, printed.storefront, printed.admin]) {
      expect(await fetch(url).then(() => 'answered', () => 'refused'), url).toBe('refused');
    }
  });
});
