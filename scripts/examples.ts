/**
 * The front-end examples (examples/storefront, examples/admin) against a service, in one command
 * each (`npm run example:storefront`, `npm run example:admin`). Each packs the client (`npm pack`
 * of client-sdk, which builds it) and installs the tarball into the example, as an app installs
 * the published package; starts the service on PGlite in memory (or uses the one
 * ORDER_SERVICE_URL names, with an admin's access token in TOKEN); registers the example's OAuth
 * client (public, PKCE, redirect URI of the dev server) through the service's admin API; adds a
 * few products if there are none; and serves the app with Vite's dev server.
 *
 * The steps are exported for the examples' browser tests (test/browser/).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const sdkDir = join(root, 'client-sdk');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

/** One front-end example: its folder, its OAuth client's name and scopes, where its dev server listens. */
export interface Example {
  dir: string;
  /** Shown on the sign-in page; a client registered earlier under this name and redirect URI is reused. */
  clientName: string;
  scopes: readonly string[];
  /** The dev server's port: `portVariable` from the environment, else `defaultPort`. */
  portVariable: string;
  defaultPort: number;
}

export const STOREFRONT: Example = {
  dir: join(root, 'examples/storefront'),
  clientName: 'Corner Shop (storefront example)',
  // What a shopper's token needs: the client package's CUSTOMER_SCOPES.
  scopes: ['orders:read', 'orders:write', 'payments:write', 'users:read', 'users:write'],
  portVariable: 'STOREFRONT_PORT',
  defaultPort: 5173,
};

export const ADMIN_CONSOLE: Example = {
  dir: join(root, 'examples/admin'),
  clientName: 'Order admin (admin console example)',
  // examples/admin/src/session.ts asks for these; a person gets only what their role can use.
  scopes: ['orders:read', 'orders:write', 'fulfillments:write', 'payments:write', 'products:write', 'users:read', 'clients:manage'],
  portVariable: 'ADMIN_CONSOLE_PORT',
  defaultPort: 5174,
};

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
  const copy = mkdtempSync(join(root, 'examples/.client-build-'));
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
export async function installExample(example: Example, tarball: string): Promise<void> {
  const installed = join(example.dir, 'node_modules/.package-lock.json');
  const lock = join(example.dir, 'package-lock.json');
  if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs) {
    await run('npm', ['ci', ...npmQuiet], { cwd: example.dir });
  }
  await run('npm', ['install', '--no-save', ...npmQuiet, tarball], { cwd: example.dir });
}

/** Type-checks the example (strict) against the installed package: answers tsc's complaints, '' when none. */
export async function typecheckExample(example: Example): Promise<string> {
  const result = await run(process.execPath, [tsc, '-p', example.dir], { cwd: example.dir }).catch((error: { stdout?: string; message: string }) => ({
    stdout: error.stdout || error.message,
  }));
  return result.stdout;
}

export interface ExampleSettings {
  /** The service's base URL (its issuer). */
  serviceUrl: string;
  /** The example's OAuth client. */
  clientId: string;
}

const viteEnv = (settings: ExampleSettings): NodeJS.ProcessEnv => ({
  ...process.env,
  VITE_ORDER_SERVICE_URL: settings.serviceUrl,
  VITE_CLIENT_ID: settings.clientId,
});

const viteOf = (example: Example) => join(example.dir, 'node_modules/vite/bin/vite.js');

/** `vite build` of the example into `outDir`, for these settings. */
export async function buildExample(example: Example, outDir: string, settings: ExampleSettings): Promise<void> {
  await run(process.execPath, [viteOf(example), 'build', '--outDir', outDir, '--emptyOutDir', '--logLevel', 'warn'], { cwd: example.dir, env: viteEnv(settings) });
}

export interface Admin {
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
 * The example's OAuth client: a public client (no secret) for the authorization code flow with
 * PKCE, redirecting to `<origin>/callback`, with the example's scopes (docs/signing-in.md, "A
 * browser or mobile app"). Reuses one registered earlier for the same redirect URI; answers its client_id.
 */
export async function registerExampleClient(example: Example, admin: Admin, redirectUri: string): Promise<string> {
  const known = await api<{ data: Client[] }>(admin, 'GET', '/clients?limit=100');
  const existing = known.data.find((c) => c.name === example.clientName && c.redirect_uris.length === 1 && c.redirect_uris[0] === redirectUri);
  if (existing) return existing.client_id;
  const created = await api<Client>(admin, 'POST', '/clients', {
    name: example.clientName,
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    scopes: example.scopes,
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

/** The whole command: pack and install, a service (started or given), the OAuth client, sample products, Vite's dev server. */
export async function runExample(example: Example): Promise<void> {
  const host = '127.0.0.1';
  const appPort = Number(process.env[example.portVariable] ?? example.defaultPort);
  const appOrigin = `http://${host}:${appPort}`;
  const children: ChildProcess[] = [];
  const stop = () => {
    for (const child of children) child.kill('SIGTERM');
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);

  console.log(`Packing @order-service/client and installing it into ${example.dir}...`);
  const tarball = await packClient(join(example.dir, '.client'));
  await installExample(example, tarball);

  let admin: Admin;
  const given = process.env.ORDER_SERVICE_URL;
  if (given) {
    const token = process.env.TOKEN;
    if (!token) throw new Error('ORDER_SERVICE_URL needs TOKEN: an admin access token of that service (its start banner prints one in development).');
    admin = { serviceUrl: given.replace(/\/+$/, ''), token };
    const preflight = await fetch(`${admin.serviceUrl}/trpc/products.list`, { method: 'OPTIONS', headers: { origin: appOrigin, 'access-control-request-method': 'GET' } });
    if (!preflight.headers.get('access-control-allow-origin')) console.warn(`The service does not allow ${appOrigin} (CORS): start it with CORS_ORIGINS=${appOrigin}.`);
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
        CORS_ORIGINS: appOrigin,
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

  const clientId = await registerExampleClient(example, admin, `${appOrigin}/callback`);
  const added = await seedProducts(admin);
  console.log(`OAuth client ${clientId} (public, PKCE, redirect ${appOrigin}/callback); ${added} sample products added.`);
  console.log(`The app: ${appOrigin}`);

  const dev = spawn(process.execPath, [viteOf(example), '--host', host, '--port', String(appPort), '--strictPort'], {
    cwd: example.dir,
    stdio: 'inherit',
    env: viteEnv({ serviceUrl: admin.serviceUrl, clientId }),
  });
  children.push(dev);
  dev.on('exit', stop);
}

/** Runs `example` when the calling script is the one node started. */
export function mainOf(example: Example, scriptPath: string): void {
  if (scriptPath !== resolve(process.argv[1] ?? '')) return;
  runExample(example).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
