/**
 * The front-end examples (examples/storefront, examples/admin) against a service, in one command
 * each (`npm run example:storefront`, `npm run example:admin`), or both on one service
 * (`npm run demo`, scripts/demo.ts). Each packs the client from a copy of client-sdk (which it
 * compiles; client-sdk/dist is left alone, so commands running at once never rebuild it under
 * each other) and installs the tarball into the example, as an app installs the published
 * package; starts the service on PGlite in memory (or uses the one ORDER_SERVICE_URL names, with
 * an admin's access token in TOKEN), allowing both examples' origins (CORS), so either example can
 * be pointed at the other's service; registers the example's OAuth client (public, PKCE, redirect
 * URI of the dev server) through the service's admin API; adds a few products if there are none;
 * and serves the app with Vite's dev server.
 *
 * The steps are exported for the demo and the examples' browser tests (test/browser/).
 */
import { execFile, spawn, type ChildProcess, type ExecFileOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const sdkDir = join(root, 'client-sdk');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

/** How long a process stopped with SIGTERM has before it gets SIGKILL. */
const KILL_AFTER_MS = 10_000;

/**
 * What a command (the demo, an example command) started and created, so that a stop, at any step,
 * ends it and leaves nothing behind: the processes (the steps' npm, tsc and npm pack as well as
 * the service and Vite), by their handles, never by name, and the temporary directories.
 * `signal` is aborted on stop: a step waiting on a process fails at once, and none starts after.
 */
export class CommandProcesses {
  readonly #abort = new AbortController();
  /** Processes whose stdio has not closed yet: their last lines may still be on the way. */
  readonly #open = new Map<ChildProcess, string>();
  readonly #temporary = new Set<string>();
  #stopping = false;

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get stopping(): boolean {
    return this.#stopping;
  }

  /** Tracks `child` until it has closed (exited and its output drained). */
  add(child: ChildProcess, name: string): ChildProcess {
    // Started by a step that was already under way when the stop came (the signal stops the next).
    if (this.#stopping) child.kill('SIGTERM');
    this.#open.set(child, name);
    child.once('close', () => this.#open.delete(child));
    return child;
  }

  /** A directory the command removes on stop, whatever step it was at. */
  temporaryDirectory(path: string): string {
    this.#temporary.add(path);
    return path;
  }

  removeTemporary(path: string): void {
    rmSync(path, { recursive: true, force: true });
    this.#temporary.delete(path);
  }

  /**
   * Aborts the steps, sends SIGTERM to every process still open, and once all have closed removes
   * the temporary directories and exits with `exitCode`. A process still open after
   * KILL_AFTER_MS, or at a second stop (a second Ctrl-C), gets SIGKILL: one that ignores SIGTERM
   * cannot hang the command.
   */
  stop(exitCode: number): void {
    if (this.#stopping) {
      for (const child of this.#open.keys()) child.kill('SIGKILL');
      return;
    }
    this.#stopping = true;
    process.exitCode = exitCode;
    this.#abort.abort();
    const open = [...this.#open];
    const finish = () => {
      for (const path of [...this.#temporary]) this.removeTemporary(path);
      process.exit(exitCode);
    };
    if (open.length === 0) return finish();
    console.log(`Stopping ${open.map(([, name]) => name).join(', ')}...`);
    const escalation = setTimeout(() => {
      for (const [child] of open) child.kill('SIGKILL');
    }, KILL_AFTER_MS);
    let left = open.length;
    for (const [child] of open) {
      const closed = () => {
        left -= 1;
        if (left > 0) return;
        clearTimeout(escalation);
        finish();
      };
      if (this.#open.has(child)) child.once('close', closed);
      else closed();
      child.kill('SIGTERM');
    }
  }
}

/**
 * execFile, with the process tracked by `processes` (ended on its stop, whose signal aborts it);
 * none starts once the command is stopping.
 */
async function run(file: string, args: string[], options: ExecFileOptions & { maxBuffer?: number }, processes?: CommandProcesses): Promise<{ stdout: string; stderr: string }> {
  processes?.signal.throwIfAborted();
  const running = execFileAsync(file, args, { ...options, encoding: 'utf8', ...(processes ? { signal: processes.signal } : {}) });
  processes?.add(running.child, [file === process.execPath ? 'node' : file, ...args.slice(0, 1)].join(' '));
  return running;
}

/** One front-end example: its folder, its OAuth client's name and scopes, where its dev server listens. */
export interface Example {
  dir: string;
  /** Shown on the sign-in page; a client registered earlier under this name and redirect URI is reused. */
  clientName: string;
  scopes: readonly string[];
  /** The dev server's port: `portVariable` from the environment, else `defaultPort`. */
  portVariable: string;
  defaultPort: number;
  /**
   * The port of the service its command starts (PORT overrides it): each example's own, so both
   * commands can run at once (docs/examples.md#running-it).
   */
  defaultServicePort: number;
}

export const STOREFRONT: Example = {
  dir: join(root, 'examples/storefront'),
  clientName: 'Corner Shop (storefront example)',
  // What a shopper's token needs: the client package's CUSTOMER_SCOPES.
  scopes: ['orders:read', 'orders:write', 'payments:write', 'users:read', 'users:write'],
  portVariable: 'STOREFRONT_PORT',
  defaultPort: 5173,
  defaultServicePort: 3000,
};

export const ADMIN_CONSOLE: Example = {
  dir: join(root, 'examples/admin'),
  clientName: 'Order admin (admin console example)',
  // examples/admin/src/session.ts asks for these; a person gets only what their role can use.
  scopes: ['orders:read', 'orders:write', 'fulfillments:write', 'payments:write', 'products:write', 'users:read', 'clients:manage'],
  portVariable: 'ADMIN_CONSOLE_PORT',
  defaultPort: 5174,
  defaultServicePort: 3001,
};

/** `npm pack`'s JSON report: the build's own lines come first, then the report from a line of its own. */
function packedFile(stdout: string, destination: string): string {
  const [packed] = JSON.parse(stdout.slice(stdout.search(/^\[\s*$/m))) as { filename: string }[];
  if (!packed) throw new Error(`npm pack printed no package: ${stdout}`);
  return join(destination, packed.filename);
}

/**
 * Packs @order-service/client into `destination` and answers the tarball's path: a copy of
 * client-sdk (its committed sources, router types included) compiled and packed, as
 * `npm pack` in client-sdk would (its prepack, `npm run client:build`, compiles the same sources
 * with the same tsconfig). Never client-sdk itself: its prepack empties and rebuilds
 * client-sdk/dist, so two packs at once (both example commands started together, or one beside
 * test/sdk/client-package.test.ts) would remove the files the other is packing (`ENOENT
 * client-sdk/dist/...`). After changing a procedure, `npm run client:router-types` first.
 */
export async function packClient(destination: string, processes?: CommandProcesses): Promise<string> {
  mkdirSync(destination, { recursive: true });
  // Inside the repository, so the compile finds @trpc/client and oauth4webapi in node_modules.
  const copy = mkdtempSync(join(root, 'examples/.client-build-'));
  processes?.temporaryDirectory(copy);
  try {
    for (const name of ['package.json', 'README.md', 'tsconfig.json', 'src']) cpSync(join(sdkDir, name), join(copy, name), { recursive: true });
    await run(process.execPath, [tsc, '-p', join(copy, 'tsconfig.json')], { cwd: copy }, processes);
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination], { cwd: copy, maxBuffer: 16 << 20 }, processes);
    return packedFile(stdout, destination);
  } finally {
    if (processes) processes.removeTemporary(copy);
    else rmSync(copy, { recursive: true, force: true });
  }
}

const npmQuiet = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];

/**
 * The example's own dependencies (its package-lock.json: Preact, Vite, TypeScript), then the
 * packed client from its tarball, as `npm install @order-service/client` would bring it (without
 * writing it into the example's package.json: the tarball's path is this machine's).
 */
export async function installExample(example: Example, tarball: string, processes?: CommandProcesses): Promise<void> {
  const installed = join(example.dir, 'node_modules/.package-lock.json');
  const lock = join(example.dir, 'package-lock.json');
  if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs) {
    await run('npm', ['ci', ...npmQuiet], { cwd: example.dir }, processes);
  }
  await run('npm', ['install', '--no-save', ...npmQuiet, tarball], { cwd: example.dir }, processes);
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

/** Polls `url` until it answers 200 (the server is serving), up to `timeoutMs`; a `child` that exits first fails it. */
export async function waitFor(url: string, timeoutMs: number, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child?.exitCode !== null && child?.exitCode !== undefined) throw new Error(`${url}: its process exited (${child.exitCode}) before it was ready`);
    if (child?.signalCode) throw new Error(`${url}: its process ended (${child.signalCode}) before it was ready`);
    const ok = await fetch(url).then((r) => r.ok, () => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs / 1000} s`);
    await new Promise((done) => setTimeout(done, 500));
  }
}

/** An admin token from the service's password grant with development's first-party client. */
export async function adminToken(serviceUrl: string, email: string, password: string): Promise<string> {
  const response = await fetch(`${serviceUrl}/oauth/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'password', client_id: 'order-service-dev', username: email, password, scope: 'clients:manage products:write' }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!response.ok || body.access_token === undefined) throw new Error(`signing the admin in failed: ${response.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

/** The port of `example`'s dev server: `portVariable` from the environment, else its default port. */
export const examplePort = (example: Example): number => Number(process.env[example.portVariable] ?? example.defaultPort);

/** Where `example`'s dev server listens. */
export function exampleOrigin(example: Example, host = '127.0.0.1'): string {
  return `http://${host}:${examplePort(example)}`;
}

/**
 * The origins a service started for the examples allows (CORS): both examples' (so the admin
 * console can be pointed at the storefront's service and the other way round, docs/examples.md),
 * and those already in CORS_ORIGINS, kept rather than overridden.
 */
export function examplesCorsOrigins(host = '127.0.0.1'): string {
  const given = process.env.CORS_ORIGINS?.trim();
  if (given === '*') return given;
  const origins = new Set([...(given ? given.split(',').map((o) => o.trim()) : []), exampleOrigin(STOREFRONT, host), exampleOrigin(ADMIN_CONSOLE, host)]);
  return [...origins].filter(Boolean).join(',');
}

/**
 * Fails, saying what to do, when `port` is taken (another example's or demo's service, most
 * likely), rather than letting the service die on EADDRINUSE after the packing.
 */
export async function ensurePortFree(host: string, port: number, variable: string): Promise<void> {
  const server = createServer();
  const taken = await new Promise<boolean>((done) => {
    server.once('error', () => done(true));
    server.listen(port, host, () => server.close(() => done(false)));
  });
  if (taken) {
    throw new Error(
      `http://${host}:${port} is in use (another example's or the demo's service?). Set ${variable} to another port, or point this example at that service with ORDER_SERVICE_URL and TOKEN (docs/examples.md), or run both examples on one service with npm run demo.`,
    );
  }
}

/** Generated, printed once: the examples' service is a throwaway one. */
export const generatedPassword = (): string => randomBytes(12).toString('base64url');

/**
 * The service (`node --import tsx server/main.ts`, one process: a signal to it reaches the
 * service itself) on PGlite in memory, in development (its banner prints an admin access token),
 * with `admin` as its first admin and the examples' origins allowed; answers once it is ready.
 */
export async function startService(options: {
  host: string;
  port: number;
  admin: { email: string; password: string };
  stdio?: 'inherit' | 'pipe';
  /** Called with the process as soon as it exists, before it is ready: a stop meanwhile must reach it. */
  onSpawn?: (child: ChildProcess) => void;
}): Promise<{ child: ChildProcess; serviceUrl: string }> {
  const serviceUrl = `http://${options.host}:${options.port}`;
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: root,
    stdio: ['ignore', options.stdio ?? 'inherit', options.stdio ?? 'inherit'],
    env: {
      ...process.env,
      NODE_ENV: 'development',
      DATABASE_URL: 'memory://',
      HOST: options.host,
      PORT: String(options.port),
      CORS_ORIGINS: examplesCorsOrigins(options.host),
      ADMIN_EMAIL: options.admin.email,
      ADMIN_PASSWORD: options.admin.password,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      SHUTDOWN_DELAY_MS: '0',
    },
  });
  options.onSpawn?.(child);
  await waitFor(`${serviceUrl}/api/health/ready`, 600_000, child).catch((error: unknown) => {
    child.kill('SIGTERM');
    throw error;
  });
  return { child, serviceUrl };
}

/** Vite's dev server for `example` at `origin` (its port strict: a busy port fails rather than moves), against `settings`. */
export function startDevServer(example: Example, origin: string, settings: ExampleSettings, stdio: 'inherit' | 'pipe' = 'inherit'): ChildProcess {
  const { hostname, port } = new URL(origin);
  return spawn(process.execPath, [viteOf(example), '--host', hostname, '--port', port, '--strictPort'], {
    cwd: example.dir,
    stdio: ['ignore', stdio, stdio],
    env: viteEnv(settings),
  });
}

/**
 * Whether the service at `serviceUrl` lets pages of `origin` call it (CORS): without it the
 * browser refuses every answer, and a page's sign-in does nothing but log to the console.
 */
export async function allowsOrigin(serviceUrl: string, origin: string): Promise<boolean> {
  const preflight = await fetch(`${serviceUrl}/trpc/products.list`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'GET' } });
  const allowed = preflight.headers.get('access-control-allow-origin');
  return allowed === origin || allowed === '*';
}

/**
 * The whole command: pack and install, a service (started or given), the OAuth client, sample
 * products, Vite's dev server. Ctrl-C (SIGINT) or SIGTERM stops it at any step, the packing and
 * installing too (CommandProcesses); a failing step stops what was started and exits 1.
 */
export async function runExample(example: Example): Promise<void> {
  const processes = new CommandProcesses();
  process.on('SIGINT', () => processes.stop(0));
  process.on('SIGTERM', () => processes.stop(0));
  try {
    await setUpExample(example, processes);
  } catch (error) {
    // Stopping aborts the step under way: its failure is the stop's, not news.
    if (processes.stopping) return;
    console.error(error instanceof Error ? error.message : error);
    processes.stop(1);
  }
}

async function setUpExample(example: Example, processes: CommandProcesses): Promise<void> {
  const host = '127.0.0.1';
  const appOrigin = exampleOrigin(example, host);
  await ensurePortFree(host, examplePort(example), example.portVariable);

  console.log(`Packing @order-service/client and installing it into ${example.dir}...`);
  const tarball = await packClient(join(example.dir, '.client'), processes);
  await installExample(example, tarball, processes);

  let admin: Admin;
  const given = process.env.ORDER_SERVICE_URL;
  if (given) {
    const token = process.env.TOKEN;
    if (!token) throw new Error('ORDER_SERVICE_URL needs TOKEN: an admin access token of that service (its start banner prints one in development).');
    admin = { serviceUrl: given.replace(/\/+$/, ''), token };
    if (!(await allowsOrigin(admin.serviceUrl, appOrigin))) {
      throw new Error(`The service at ${admin.serviceUrl} does not allow ${appOrigin} (CORS): the browser would refuse its answers. Restart it with ${appOrigin} in CORS_ORIGINS (a comma-separated list).`);
    }
  } else {
    const servicePort = Number(process.env.PORT ?? example.defaultServicePort);
    await ensurePortFree(host, servicePort, 'PORT');
    const credentials = { email: 'admin@example.com', password: generatedPassword() };
    console.log(`Starting the service on PGlite in memory at http://${host}:${servicePort}...`);
    processes.signal.throwIfAborted();
    const service = await startService({
      host,
      port: servicePort,
      admin: credentials,
      onSpawn: (child) => {
        processes.add(child, 'the service');
        // 'close': its last lines (why it stopped) are out before the command exits.
        child.once('close', (code) => {
          if (!processes.stopping) processes.stop(code === 0 || code === null ? 0 : code);
        });
      },
    });
    admin = { serviceUrl: service.serviceUrl, token: await adminToken(service.serviceUrl, credentials.email, credentials.password) };
    console.log(`  The shop's admin: ${credentials.email} / ${credentials.password}`);
  }

  const clientId = await registerExampleClient(example, admin, `${appOrigin}/callback`);
  const added = await seedProducts(admin);
  console.log(`OAuth client ${clientId} (public, PKCE, redirect ${appOrigin}/callback); ${added} sample products added.`);
  console.log(`The app: ${appOrigin}`);

  processes.signal.throwIfAborted();
  const dev = processes.add(startDevServer(example, appOrigin, { serviceUrl: admin.serviceUrl, clientId }), "Vite's dev server");
  dev.once('close', (code) => {
    if (!processes.stopping) processes.stop(code === 0 || code === null ? 0 : 1);
  });
}

/** Runs `example` when the calling script is the one node started. */
export function mainOf(example: Example, scriptPath: string): void {
  if (scriptPath !== resolve(process.argv[1] ?? '')) return;
  runExample(example).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
