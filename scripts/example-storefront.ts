/**
 * `npm run example:storefront`: the storefront example (examples/storefront) against a service, in
 * one command. It packs the client (`npm pack` of client-sdk, which builds it) and installs the
 * tarball into the example, as an app installs the published package; starts the service on
 * PGlite in memory (or uses the one ORDER_SERVICE_URL names, with an admin's access token in
 * TOKEN); registers the storefront's OAuth client (public, PKCE, redirect URI of the dev server)
 * through the service's admin API; adds a few products if there are none; and serves the app
 * with Vite's dev server.
 *
 *   npm run example:storefront                      # service on http://127.0.0.1:3000, shop on http://127.0.0.1:5173
 *   ORDER_SERVICE_URL=http://127.0.0.1:3000 TOKEN=<admin access token> npm run example:storefront
 *
 * The steps are exported for the storefront's browser test (test/browser/storefront.test.ts).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
export const storefrontDir = join(root, 'examples/storefront');
const sdkDir = join(root, 'client-sdk');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

/** The name the storefront's OAuth client is registered under (shown on the sign-in page). */
export const STOREFRONT_CLIENT_NAME = 'Corner Shop (storefront example)';
/** What a shopper's token needs: the client package's CUSTOMER_SCOPES. */
const STOREFRONT_SCOPES = ['orders:read', 'orders:write', 'payments:write', 'users:read', 'users:write'];

/** `npm pack`'s JSON report: the build's own lines come first, then the report from a line of its own. */
function packedFile(stdout: string, destination: string): string {
  const [packed] = JSON.parse(stdout.slice(stdout.search(/^\[\s*$/m))) as { filename: string }[];
  if (!packed) throw new Error(`npm pack printed no package: ${stdout}`);
  return join(destination, packed.filename);
}

/**
 * Packs @order-service/client into `destination` and answers the tarball's path. `npm pack` in
 * client-sdk builds it first (prepack: `npm run client:build`). `isolated` compiles a copy of
 * client-sdk instead and packs that, leaving client-sdk/dist alone: a test running beside
 * test/sdk/client-package.test.ts (which packs client-sdk itself) must not rebuild the dist that
 * one is packing.
 */
export async function packClient(destination: string, options: { isolated?: boolean } = {}): Promise<string> {
  mkdirSync(destination, { recursive: true });
  if (!options.isolated) {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', destination], { cwd: sdkDir, maxBuffer: 16 << 20 });
    return packedFile(stdout, destination);
  }
  // Inside the repository, so the compile finds @trpc/client and oauth4webapi in node_modules.
  const copy = mkdtempSync(join(storefrontDir, '.client-build-'));
  try {
    for (const name of ['package.json', 'README.md', 'tsconfig.json', 'src']) cpSync(join(sdkDir, name), join(copy, name), { recursive: true });
    await run(process.execPath, [tsc, '-p', join(copy, 'tsconfig.json')], { cwd: copy });
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination], { cwd: copy, maxBuffer: 16 << 20 });
    return packedFile(stdout, destination);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

const npmQuiet = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];

/**
 * The example's own dependencies (its package-lock.json: Preact, Vite, TypeScript), then the
 * packed client from its tarball, as `npm install @order-service/client` would bring it (without
 * writing it into the example's package.json: the tarball's path is this machine's).
 */
export async function installStorefront(tarball: string): Promise<void> {
  const installed = join(storefrontDir, 'node_modules/.package-lock.json');
  const lock = join(storefrontDir, 'package-lock.json');
  if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs) {
    await run('npm', ['ci', ...npmQuiet], { cwd: storefrontDir });
  }
  await run('npm', ['install', '--no-save', ...npmQuiet, tarball], { cwd: storefrontDir });
}

/** Type-checks the storefront (strict) against the installed package: answers tsc's complaints, '' when none. */
export async function typecheckStorefront(): Promise<string> {
  const result = await run(process.execPath, [tsc, '-p', storefrontDir], { cwd: storefrontDir }).catch((error: { stdout?: string; message: string }) => ({
    stdout: error.stdout || error.message,
  }));
  return result.stdout;
}

export interface StorefrontSettings {
  /** The service's base URL (its issuer). */
  serviceUrl: string;
  /** The storefront's OAuth client. */
  clientId: string;
}

const viteEnv = (settings: StorefrontSettings): NodeJS.ProcessEnv => ({
  ...process.env,
  VITE_ORDER_SERVICE_URL: settings.serviceUrl,
  VITE_CLIENT_ID: settings.clientId,
});

const vite = join(storefrontDir, 'node_modules/vite/bin/vite.js');

/** `vite build` of the storefront into `outDir`, for these settings. */
export async function buildStorefront(outDir: string, settings: StorefrontSettings): Promise<void> {
  await run(process.execPath, [vite, 'build', '--outDir', outDir, '--emptyOutDir', '--logLevel', 'warn'], { cwd: storefrontDir, env: viteEnv(settings) });
}

interface Admin {
  serviceUrl: string;
  /** An admin's access token (clients:manage, products:write). */
  token: string;
}

/** A call to the service's REST API as the admin; a refusal throws with the problem's detail. */
async function api<T>(admin: Admin, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${admin.serviceUrl.replace(/\/+$/, '')}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${admin.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} /api/v1${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

interface Client {
  client_id: string;
  name: string;
  redirect_uris: string[];
}

/**
 * The storefront's OAuth client: a public client (no secret) for the authorization code flow with
 * PKCE, redirecting to `<origin>/callback`, with a shopper's scopes (docs/signing-in.md, "A browser
 * or mobile app"). Reuses one registered earlier for the same redirect URI; answers its client_id.
 */
export async function registerStorefrontClient(admin: Admin, redirectUri: string): Promise<string> {
  const known = await api<{ data: Client[] }>(admin, 'GET', '/clients?limit=100');
  const existing = known.data.find((c) => c.name === STOREFRONT_CLIENT_NAME && c.redirect_uris.length === 1 && c.redirect_uris[0] === redirectUri);
  if (existing) return existing.client_id;
  const created = await api<Client>(admin, 'POST', '/clients', {
    name: STOREFRONT_CLIENT_NAME,
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    scopes: STOREFRONT_SCOPES,
    first_party: false,
    confidential: false,
  });
  return created.client_id;
}

/** What an empty shop gets, so there is something to buy. */
export const SAMPLE_PRODUCTS = [
  { sku: 'MUG-BLUE', name: 'Blue mug', description: 'Stoneware, 350 ml.', category: 'kitchen', price: 1200, stock: 40 },
  { sku: 'KETTLE-1', name: 'Kettle', description: 'Stovetop, 1.5 l, stainless steel.', category: 'kitchen', price: 3900, stock: 12 },
  { sku: 'TEE-GREEN-M', name: 'Green T-shirt, M', description: 'Organic cotton.', category: 'apparel', price: 1999, stock: 25 },
  { sku: 'SOCKS-3', name: 'Wool socks, 3 pairs', description: 'Merino blend.', category: 'apparel', price: 1500, stock: 30 },
  { sku: 'BOOK-BREAD', name: 'Bread at home', description: 'Sourdough from starter to loaf.', category: 'books', price: 2450, stock: 8 },
  { sku: 'NOTEBOOK-A5', name: 'A5 notebook', description: 'Dotted, 120 pages.', category: 'books', price: 800, stock: 0 },
] as const;

/** Adds SAMPLE_PRODUCTS when the shop has no product; answers how many it added. */
export async function seedProducts(admin: Admin): Promise<number> {
  const page = await api<{ data: unknown[] }>(admin, 'GET', '/products?limit=1');
  if (page.data.length > 0) return 0;
  for (const product of SAMPLE_PRODUCTS) await api(admin, 'POST', '/products', product);
  return SAMPLE_PRODUCTS.length;
}

/** Polls `url` until it answers 200 (the service is serving), up to `timeoutMs`. */
async function waitFor(url: string, timeoutMs: number, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child?.exitCode !== null && child?.exitCode !== undefined) throw new Error(`the service exited (${child.exitCode}) before it was ready`);
    const ok = await fetch(url).then((r) => r.ok, () => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs / 1000} s`);
    await new Promise((done) => setTimeout(done, 500));
  }
}

/** An admin token from the service's password grant with development's first-party client. */
async function adminToken(serviceUrl: string, email: string, password: string): Promise<string> {
  const response = await fetch(`${serviceUrl}/oauth/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'password', client_id: 'order-service-dev', username: email, password, scope: 'clients:manage products:write' }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!response.ok || body.access_token === undefined) throw new Error(`signing the admin in failed: ${response.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

async function main(): Promise<void> {
  const host = '127.0.0.1';
  const shopPort = Number(process.env.STOREFRONT_PORT ?? 5173);
  const shopOrigin = `http://${host}:${shopPort}`;
  const children: ChildProcess[] = [];
  const stop = () => {
    for (const child of children) child.kill('SIGTERM');
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);

  console.log('Packing @order-service/client and installing it into examples/storefront...');
  const tarball = await packClient(join(storefrontDir, '.client'));
  await installStorefront(tarball);

  let admin: Admin;
  const given = process.env.ORDER_SERVICE_URL;
  if (given) {
    const token = process.env.TOKEN;
    if (!token) throw new Error('ORDER_SERVICE_URL needs TOKEN: an admin access token of that service (its start banner prints one in development).');
    admin = { serviceUrl: given.replace(/\/+$/, ''), token };
    const preflight = await fetch(`${admin.serviceUrl}/trpc/products.list`, { method: 'OPTIONS', headers: { origin: shopOrigin, 'access-control-request-method': 'GET' } });
    if (!preflight.headers.get('access-control-allow-origin')) console.warn(`The service does not allow ${shopOrigin} (CORS): start it with CORS_ORIGINS=${shopOrigin}.`);
  } else {
    const servicePort = Number(process.env.PORT ?? 3000);
    const serviceUrl = `http://${host}:${servicePort}`;
    const email = 'admin@example.com';
    const password = randomBytes(12).toString('base64url');
    console.log(`Starting the service on PGlite in memory at ${serviceUrl}...`);
    const service = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: {
        ...process.env,
        NODE_ENV: 'development',
        DATABASE_URL: 'memory://',
        HOST: host,
        PORT: String(servicePort),
        CORS_ORIGINS: shopOrigin,
        ADMIN_EMAIL: email,
        ADMIN_PASSWORD: password,
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
        SHUTDOWN_DELAY_MS: '0',
      },
    });
    children.push(service);
    service.on('exit', (code) => {
      if (code !== 0 && code !== null) process.exitCode = code;
      stop();
    });
    await waitFor(`${serviceUrl}/api/health/ready`, 120_000, service);
    admin = { serviceUrl, token: await adminToken(serviceUrl, email, password) };
    console.log(`  The shop's admin: ${email} / ${password}`);
  }

  const clientId = await registerStorefrontClient(admin, `${shopOrigin}/callback`);
  const added = await seedProducts(admin);
  console.log(`OAuth client ${clientId} (public, PKCE, redirect ${shopOrigin}/callback); ${added} sample products added.`);
  console.log(`The storefront: ${shopOrigin}`);

  const dev = spawn(process.execPath, [vite, '--host', host, '--port', String(shopPort), '--strictPort'], {
    cwd: storefrontDir,
    stdio: 'inherit',
    env: viteEnv({ serviceUrl: admin.serviceUrl, clientId }),
  });
  children.push(dev);
  dev.on('exit', stop);
}

if (import.meta.filename === resolve(process.argv[1] ?? '')) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}

