/**
 * What the browser tests of the front-end examples share: Debian's chromium through
 * playwright-core, a built app served as static files on an origin of its own, axe-core's check,
 * and a watch on the page's own errors.
 */
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import type { AxeResults } from 'axe-core';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { buildExample, installExample, packClient, registerExampleClient, seedProducts, typecheckExample, type Example } from '../../scripts/examples.ts';
import { createTestApp, type TestApp } from './app.ts';

const CHROMIUM = '/usr/bin/chromium';

/** The examples' browser tests run in the pglite project only: the app, not the database, is under test. */
export const browserTestsRun = process.env.TEST_DB !== 'postgres';
if (browserTestsRun && !existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (scripts/ensure-test-tools.sh does)`);

/** Generous: a loaded 2-core machine. */
export const WAIT = { timeout: 30_000 };

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });

const CONTENT_TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css' };

/**
 * Serves `dist` (a `vite build`) on a loopback port: its files, and `index.html` for any other
 * path (the app's own router shows it). Listening before the build exists is fine: the origin is
 * needed first, for the OAuth client's redirect URI and the service's CORS setting.
 */
export async function serveStatic(dist: string): Promise<{ origin: string; close: () => void }> {
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = normalize(decodeURIComponent(new URL(request.url ?? '/', 'http://app').pathname));
    const file = join(dist, path);
    const isFile = file.startsWith(dist) && existsSync(file) && statSync(file).isFile();
    const served = isFile ? file : join(dist, 'index.html');
    response.writeHead(200, { 'content-type': CONTENT_TYPES[extname(served)] ?? 'application/octet-stream' });
    createReadStream(served).pipe(response);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  return { origin: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, close: () => server.close() };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core on the page as it is: no serious or critical violation. */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  await page.addScriptTag({ content: axeSource });
  const violations = await page.evaluate(async () => {
    // Runs in the page: axe.run() checks the whole document.
    const { axe } = globalThis as unknown as { axe: { run: () => Promise<AxeResults> } };
    const results = await axe.run();
    return results.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  });
  expect(
    violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'),
    `${name}: axe-core`,
  ).toEqual([]);
}

/** Errors the page threw or logged (a 4xx answer the app shows as a message is not one). */
export function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
  });
  return problems;
}

/** A front-end example built and served against a test service, with chromium to drive it. */
export interface ExampleUnderTest {
  t: TestApp;
  /** The service's base URL. */
  base: string;
  /** The served app's origin. */
  origin: string;
  browser: Browser;
  /** The example's strict type check against the packed package ('' when clean), run beside the browser. */
  typecheck: Promise<string>;
  close(): Promise<void>;
}

/**
 * Builds `example` the way its `npm run example:*` command does (scripts/examples.ts): the packed
 * client installed from its tarball, its OAuth client registered through the admin API, sample
 * products added, `vite build` served on an origin of its own; then launches chromium.
 */
export async function openExample(example: Example): Promise<ExampleUnderTest> {
  const work = mkdtempSync(join(tmpdir(), 'example-'));
  const dist = join(work, 'dist');
  const served = await serveStatic(dist);
  // The service's database and the app's packages get ready side by side: both take seconds.
  const [t] = await Promise.all([createTestApp({ corsOrigins: [served.origin] }), packClient(work).then((tarball) => installExample(example, tarball))]);
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const admin = { serviceUrl: base, token: t.admin.token };
  const clientId = await registerExampleClient(example, admin, `${served.origin}/callback`);
  await seedProducts(admin);
  // tsc takes a while: it runs beside the browser, and a test reads the result at the end.
  const typecheck = typecheckExample(example);
  await buildExample(example, dist, { serviceUrl: base, clientId });
  const browser = await launchChromium();
  return {
    t,
    base,
    origin: served.origin,
    browser,
    typecheck,
    close: async () => {
      await typecheck.catch(() => undefined);
      await browser.close();
      await t.close();
      served.close();
      rmSync(work, { recursive: true, force: true });
    },
  };
}
