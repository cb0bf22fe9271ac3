/**
 * `npm run bench` (issue 12): the service against a hand-written baseline, each in a process of
 * its own, loaded from a third process, in interleaved rounds; medians printed as a table.
 *
 *   service   node <flags> dist/server/main.mjs   (what `npm start` builds and runs), production settings
 *   raw       node dist/bench/raw-server.mjs   (Fastify + postgres.js + jose, same SQL; built alike)
 *   load      node --import tsx scripts/bench/load.ts   (autocannon), one process per round
 *
 * Backends: PostgreSQL (DATABASE_URL, else the local cluster of scripts/setup-postgres.sh with a
 * throwaway database order_service_bench) and PGlite in memory (service only: the baseline has no
 * PGlite twin, so that table has no ratio).
 *
 * Options (environment): BENCH_SECONDS (3), BENCH_ROUNDS (6), BENCH_CONNECTIONS (16),
 * BENCH_CASES (comma list of case names, default all), BENCH_BACKENDS (postgres,pglite),
 * BENCH_PROFILE (a directory: each measured round of each server is profiled alone, through its
 * inspector, into `<backend>-<case>-r<round>-<server>.cpuprofile`; `scripts/bench/profile-summary.ts
 * <file>` summarizes one), BENCH_SERVICE_FLAGS (extra Node/V8 flags for the service process),
 * BENCH_METRICS (1: the service records metrics, served to a METRICS_TOKEN; the cost of recording).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';
import postgres from 'postgres';
import { CursorCodec } from '../../server/lib/cursors.ts';
import type { LoadResult, LoadSpec } from './load.ts';
import { NS_PER_TICK, postgresCpuNs } from './postgres-cpu.ts';
import { seedOrders } from './seed-orders.ts';
import { startCommand } from '../start-command.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

// --- options -----------------------------------------------------------------------------------

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer (got "${raw}")`);
  return value;
}

const CASE_NAMES = ['product-read', 'product-list', 'order-read', 'order-list', 'order-post', 'payment-post'] as const;
type CaseName = (typeof CASE_NAMES)[number];
const BACKENDS = ['postgres', 'pglite'] as const;
type Backend = (typeof BACKENDS)[number];

function list<T extends string>(name: string, known: readonly T[]): T[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return [...known];
  const wanted = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = wanted.filter((w) => !known.some((k) => k === w));
  if (unknown.length > 0) throw new Error(`${name}: unknown ${unknown.join(', ')} (known: ${known.join(', ')})`);
  return known.filter((k) => wanted.includes(k));
}

const seconds = positive('BENCH_SECONDS', 3);
const rounds = positive('BENCH_ROUNDS', 6);
const connections = positive('BENCH_CONNECTIONS', 16);
const cases = list('BENCH_CASES', CASE_NAMES);
const backends = list('BENCH_BACKENDS', BACKENDS);
/** `--orders N` (or BENCH_ORDERS): instead of the throughput tables, time the list shapes at N orders. */
const listOrders = ((): number | undefined => {
  const flag = process.argv.indexOf('--orders');
  const raw = flag >= 0 ? process.argv[flag + 1] : process.env.BENCH_ORDERS;
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 2000) throw new Error(`--orders must be an integer of at least 2000 (got "${raw}")`);
  return value;
})();
const profileDir = process.env.BENCH_PROFILE ? resolve(process.env.BENCH_PROFILE) : undefined;
/**
 * Node's flags for a server when profiling: an inspector on a free port, through which each
 * measured round is profiled alone (cpu-profiler.ts; BENCH_PROFILE/<case>-r<round>-<server>.cpuprofile).
 */
const profileArgs = (): string[] => (profileDir ? ['--inspect=127.0.0.1:0'] : []);
/** BENCH_SERVICE_FLAGS: extra Node/V8 flags for the service process (experiments: GC settings). */
const serviceFlags = (process.env.BENCH_SERVICE_FLAGS ?? '').split(/\s+/).filter(Boolean);
/** BENCH_SERVICE_ENV: more settings for the service, `NAME=value` separated by spaces (experiments: WEBHOOK_WORKER=false). */
const serviceEnv = Object.fromEntries(
  (process.env.BENCH_SERVICE_ENV ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0) throw new Error(`BENCH_SERVICE_ENV: "${pair}" is not NAME=value`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
);
/** A short warm-up per case and server (JIT, connection pools, plan caches), not reported. */
const warmupSeconds = Math.min(2, seconds);
/** How long the servers idle after the load before their RSS is read a second time. */
const IDLE_SECONDS = 10;

// --- the servers as `npm start` runs the service: built by esbuild, with the start script's flags --

const { flags: START_FLAGS, bundle: SERVICE_BUNDLE } = startCommand(root);
const RAW_BUNDLE = 'dist/bench/raw-server.mjs';

/** `npm run build` for the service, and the baseline bundled the same way. */
async function buildServers(): Promise<void> {
  await runScript('npm', ['run', 'build', '--silent']);
  await runScript(join(root, 'node_modules/.bin/esbuild'), ['scripts/bench/raw-server.ts', '--bundle', '--platform=node', '--format=esm', '--packages=external', `--outfile=${RAW_BUNDLE}`, '--log-level=warning']);
}

const JWT_SECRET = 'order-service-benchmark-secret-not-for-production-0123456789';
const ISSUER = 'order-service';
const AUDIENCE = 'order-service-api';

// --- child processes: own process groups, always stopped ----------------------------------------

interface Child {
  name: string;
  proc: ChildProcess;
  output: string[];
  exited: Promise<number | null>;
}

const children = new Set<Child>();

function start(name: string, script: string, env: Record<string, string>, input?: string, nodeArgs: string[] = []): Child {
  // A built bundle runs as is, a TypeScript script under `node --import tsx` rather than the tsx
  // CLI: either way the pid is then the server's own (for its RSS),
  // not a wrapper's. detached: its own process group, so a kill reaches anything it starts.
  const proc = spawn(process.execPath, [...nodeArgs, ...(script.endsWith('.mjs') ? [] : ['--import', 'tsx']), script], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    detached: true,
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (input !== undefined) proc.stdin?.end(input);
  const output: string[] = [];
  const keep = (data: Buffer) => {
    output.push(data.toString('utf8'));
    if (output.length > 200) output.shift();
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolveExit) => proc.on('exit', (code) => resolveExit(code)));
  const child = { name, proc, output, exited };
  children.add(child);
  void exited.then(() => children.delete(child));
  return child;
}

function killGroup(child: Child, signal: NodeJS.Signals): void {
  if (child.proc.pid === undefined || child.proc.exitCode !== null) return;
  try {
    process.kill(-child.proc.pid, signal);
  } catch {
    // Already gone.
  }
}

async function stop(child: Child): Promise<void> {
  killGroup(child, 'SIGTERM');
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 5000);
  await child.exited;
  clearTimeout(timer);
}

const cleanups: (() => Promise<void>)[] = [];
let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await Promise.all([...children].map((child) => stop(child)));
    for (const task of cleanups.reverse()) await task().catch(() => {});
  })();
  return cleaning;
}
// Ctrl-C or a kill: stop every child group first, then leave.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping the servers`);
    void cleanup().finally(() => process.exit(130));
  });
}
// Last resort (an uncaught error path that skipped cleanup): no orphan servers.
process.on('exit', () => {
  for (const child of children) killGroup(child, 'SIGKILL');
});

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

async function waitHealthy(child: Child, base: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null) break;
    try {
      const response = await fetch(`${base}/api/health`);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${child.name} did not become healthy at ${base}:\n${child.output.join('').slice(-3000)}`);
}

function rssMb(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CPU time a process has used so far, in nanoseconds: every thread's (the main thread, libuv's
 * pool, V8's GC helpers), from the scheduler's own accounting (`/proc/<pid>/task/<tid>/schedstat`,
 * nanoseconds on CPU). Per request, it is what the other processes on the machine do not change
 * much: throughput on a shared 2-core machine moves with whatever else runs, a server's CPU time
 * per request far less.
 */
function cpuNs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    let total = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    }
    return total;
  } catch {
    return undefined;
  }
}

/** The whole machine's CPU time so far, in ns: busy (every process and the kernel) and stolen by the hypervisor. */
function machineCpuNs(): { busy: number; steal: number } | undefined {
  try {
    const [, user, nice, system, , , irq, softirq, steal] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).map(Number);
    const busy = (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0);
    return { busy: busy * NS_PER_TICK, steal: (steal ?? 0) * NS_PER_TICK };
  } catch {
    return undefined;
  }
}

/**
 * What else ran on the machine during a round, in cores (1.00: one core busy throughout): the
 * machine's busy time less the server under load, PostgreSQL and the load generator, and the
 * time the hypervisor gave to other machines. What remains is everybody else (the idle server,
 * this script, the kernel's network work, other people's jobs): steady from round to round on a
 * quiet machine, so a round well above the others was disturbed.
 */
interface Disturbance {
  otherCores: number;
  stealCores: number;
}

function sampleMachine(): { machine: ReturnType<typeof machineCpuNs>; postgres: number; at: bigint } {
  return { machine: machineCpuNs(), postgres: postgresCpuNs(), at: process.hrtime.bigint() };
}

function disturbance(before: ReturnType<typeof sampleMachine>, after: ReturnType<typeof sampleMachine>, serverNs: number, loadMs: number): Disturbance | undefined {
  if (!before.machine || !after.machine) return undefined;
  const wallNs = Number(after.at - before.at);
  const ours = serverNs + (after.postgres - before.postgres) + loadMs * 1e6;
  return {
    otherCores: Math.max(0, after.machine.busy - before.machine.busy - ours) / wallNs,
    stealCores: (after.machine.steal - before.machine.steal) / wallNs,
  };
}

/** Rounds whose other work exceeds this (in cores) are named under the table as disturbed. */
const DISTURBED_CORES = 0.3;

// --- PostgreSQL ------------------------------------------------------------------------------

const LOCAL_ADMIN_URL = 'postgres://order_service:order_service@127.0.0.1:5432/postgres';
const BENCH_DB = 'order_service_bench';

async function canConnect(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 3 });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

function runScript(command: string, args: string[]): Promise<void> {
  return new Promise((resolveRun, reject) => {
    const proc = spawn(command, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
    proc.on('error', reject);
    proc.on('exit', (code) => (code === 0 ? resolveRun() : reject(new Error(`${command} ${args.join(' ')} exited with ${code}`))));
  });
}

/** DATABASE_URL as given, else a fresh throwaway database on the local cluster. */
async function postgresUrl(): Promise<string> {
  const given = process.env.DATABASE_URL;
  if (given && /^postgres(ql)?:\/\//.test(given)) return given;
  if (!(await canConnect(LOCAL_ADMIN_URL))) {
    console.log('no local PostgreSQL answering as order_service: running scripts/setup-postgres.sh');
    await runScript('bash', ['scripts/setup-postgres.sh']);
  }
  const admin = postgres(LOCAL_ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    // WITH (FORCE): a previous run killed hard may have left connections behind.
    await admin.unsafe(`drop database if exists ${BENCH_DB} with (force)`);
    await admin.unsafe(`create database ${BENCH_DB}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  cleanups.push(async () => {
    const again = postgres(LOCAL_ADMIN_URL, { max: 1, onnotice: () => {} });
    try {
      await again.unsafe(`drop database if exists ${BENCH_DB} with (force)`);
    } finally {
      await again.end({ timeout: 5 });
    }
  });
  return LOCAL_ADMIN_URL.replace(/\/postgres$/, `/${BENCH_DB}`);
}

// --- seeding through the service's REST API ----------------------------------------------------

const mint = (sub: string, role: 'customer' | 'admin'): Promise<string> =>
  new SignJWT({ role })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(sub)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(new TextEncoder().encode(JWT_SECRET));

interface Api {
  base: string;
  call: <T>(method: string, path: string, token?: string, body?: unknown) => Promise<T>;
}

function apiAt(base: string): Api {
  return {
    base,
    call: async <T>(method: string, path: string, token?: string, body?: unknown): Promise<T> => {
      const headers: Record<string, string> = {};
      if (token) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${base}/api/v1${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
      return JSON.parse(text) as T;
    },
  };
}

/** Runs `count` tasks, `width` at a time. */
async function parallel<T>(count: number, width: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array<T>(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, count) }, worker));
  return results;
}

interface Seed {
  productId: number;
  category: string;
  /** The two products every benchmark order holds (1 x A + 2 x B), with stock for everything. */
  itemA: number;
  itemB: number;
  orderTotal: number;
  reader: { id: number; token: string; orderId: number };
  writer: { id: number; token: string };
  payer: { id: number; token: string };
}

const PRODUCTS = 300;
const CATEGORIES = 10;
const READER_ORDERS = 300;

async function seed(api: Api, runId: string): Promise<Seed> {
  const admin = await mint('1', 'admin');
  const register = async (who: string) => {
    const user = await api.call<{ id: number }>('POST', '/users', undefined, {
      email: `bench-${who}-${runId}@example.com`,
      name: `Bench ${who}`,
      password: 'benchmark-password',
    });
    return { id: user.id, token: await mint(String(user.id), 'customer') };
  };
  const [reader, writer, payer] = [await register('reader'), await register('writer'), await register('payer')];
  const products = await parallel(PRODUCTS, 16, (i) =>
    api.call<{ id: number; price: number }>('POST', '/products', admin, {
      sku: `BENCH-${runId}-${i}`,
      name: `Benchmark product ${i}`,
      description: i % 2 === 0 ? `A product for the benchmark, number ${i}.` : null,
      category: `bench-${i % CATEGORIES}`,
      price: 500 + i,
      currency: 'USD',
      stock: 1_000_000_000,
    }),
  );
  const [a, b] = products;
  if (!a || !b) throw new Error('no products seeded');
  const items = [
    { product_id: a.id, quantity: 1 },
    { product_id: b.id, quantity: 2 },
  ];
  const orders = await parallel(READER_ORDERS, 16, () =>
    api.call<{ id: number }>('POST', '/orders', reader.token, { items, address: '1 Benchmark Road, Testville' }),
  );
  const middle = orders[Math.floor(orders.length / 2)];
  const product = products[Math.floor(products.length / 2)];
  if (!middle || !product) throw new Error('seeding failed');
  return {
    productId: product.id,
    category: `bench-${3 % CATEGORIES}`,
    itemA: a.id,
    itemB: b.id,
    orderTotal: a.price + 2 * b.price,
    reader: { ...reader, orderId: middle.id },
    writer,
    payer,
  };
}

/** Confirmed orders of the payer, one per payment: in bulk by SQL (PostgreSQL), else through REST. */
type PoolFiller = (count: number) => Promise<number[]>;

function sqlPoolFiller(url: string, s: Seed): PoolFiller {
  return async (count) => {
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      // Confirmed without reserving stock: paying reads only the status, lines and total.
      const ids = await sql<{ id: number }[]>`
        insert into orders (customer_id, address, status, currency)
        select ${s.payer.id}, '1 Benchmark Road, Testville', 'confirmed', 'USD' from generate_series(1, ${count})
        returning id`;
      await sql`
        insert into order_items (order_id, position, product_id, quantity, unit_price)
        select o.id, l.position, l.product_id, l.quantity, p.price
        from unnest(${sql.array(ids.map((r) => r.id))}::int[]) as o(id)
        cross join (values (0, ${s.itemA}::int, 1), (1, ${s.itemB}::int, 2)) as l(position, product_id, quantity)
        join products p on p.id = l.product_id`;
      await sql`analyze orders`;
      return ids.map((r) => r.id);
    } finally {
      await sql.end({ timeout: 5 });
    }
  };
}

function restPoolFiller(api: Api, s: Seed): PoolFiller {
  const items = [
    { product_id: s.itemA, quantity: 1 },
    { product_id: s.itemB, quantity: 2 },
  ];
  return (count) =>
    parallel(count, 16, async () => {
      const order = await api.call<{ id: number }>('POST', '/orders', s.payer.token, { items, address: '1 Benchmark Road, Testville' });
      await api.call('POST', `/orders/${order.id}/confirm`, s.payer.token, {});
      return order.id;
    });
}

// --- measuring ---------------------------------------------------------------------------------

interface CaseSpec {
  name: CaseName;
  label: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  payment: boolean;
}

function caseSpecs(s: Seed): CaseSpec[] {
  const json = { 'content-type': 'application/json' };
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const all: CaseSpec[] = [
    { name: 'product-read', label: 'GET /products/{id}', method: 'GET', path: `/api/v1/products/${s.productId}`, headers: {}, payment: false },
    { name: 'product-list', label: 'GET /products?category=', method: 'GET', path: `/api/v1/products?category=${s.category}`, headers: {}, payment: false },
    { name: 'order-read', label: 'GET /orders/{id} (JWT)', method: 'GET', path: `/api/v1/orders/${s.reader.orderId}`, headers: bearer(s.reader.token), payment: false },
    { name: 'order-list', label: 'GET /orders?limit=20 (JWT)', method: 'GET', path: '/api/v1/orders?limit=20', headers: bearer(s.reader.token), payment: false },
    {
      name: 'order-post',
      label: 'POST /orders (2 items)',
      method: 'POST',
      path: '/api/v1/orders',
      headers: { ...json, ...bearer(s.writer.token) },
      body: JSON.stringify({ items: [{ product_id: s.itemA, quantity: 1 }, { product_id: s.itemB, quantity: 2 }], address: '1 Benchmark Road, Testville' }),
      payment: false,
    },
    { name: 'payment-post', label: 'POST /payments (Idempotency-Key)', method: 'POST', path: '/api/v1/payments', headers: { ...json, ...bearer(s.payer.token) }, payment: true },
  ];
  return all.filter((c) => cases.includes(c.name));
}

interface Target {
  kind: 'service' | 'raw';
  base: string;
  /** The server's process, for its CPU time per request. */
  pid: number | undefined;
  /** Its inspector's address, when profiling (BENCH_PROFILE). */
  inspector?: string | undefined;
}

/** The inspector address a server started with `--inspect` printed. */
function inspectorUrl(child: Child): string | undefined {
  return /Debugger listening on (ws:\/\/\S+)/.exec(child.output.join(''))?.[1];
}

/** Profiles `target` until the returned function is called, which writes the profile (cpu-profiler.ts). */
async function profileWhile(target: Target, file: string): Promise<() => Promise<void>> {
  if (profileDir === undefined || target.inspector === undefined) return async () => {};
  mkdirSync(profileDir, { recursive: true });
  const profiler = spawn(process.execPath, ['--experimental-websocket', '--no-warnings', '--import', 'tsx', join(root, 'scripts/bench/cpu-profiler.ts'), target.inspector, join(profileDir, file)], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolveExit) => profiler.on('exit', (code) => resolveExit(code)));
  await new Promise<void>((resolveStarted, rejectStarted) => {
    profiler.stdout.on('data', (data: Buffer) => data.toString().includes('started') && resolveStarted());
    void exited.then((code) => rejectStarted(new Error(`the profiler of ${target.kind} exited (${code}) before it started`)));
  });
  return async () => {
    profiler.stdin.end();
    const code = await exited;
    if (code !== 0) throw new Error(`the profiler of ${target.kind} exited with ${code}`);
  };
}

/** A round's load figures, with the CPU time the server spent per request answered (µs). */
type RoundResult = LoadResult & { cpuUs: number | undefined; disturbance: Disturbance | undefined };

class Pool {
  private ids: number[] = [];
  /** The fastest payment rate seen so far (any server), for sizing the next top-up. */
  rate = 0;

  constructor(
    private readonly fill: PoolFiller,
    private readonly floorRate: number,
  ) {}

  async ensureFor(runSeconds: number): Promise<void> {
    const want = Math.ceil(Math.max(this.rate * 1.5, this.floorRate) * runSeconds) + connections * 4;
    if (this.ids.length < want) this.ids.push(...(await this.fill(want - this.ids.length)));
  }

  take(): number[] {
    return this.ids;
  }

  consumed(count: number): void {
    this.ids = this.ids.slice(count);
  }
}

let runCounter = 0;

async function load(target: Target, spec: CaseSpec, runSeconds: number, pool: Pool | undefined, s: Seed): Promise<LoadResult> {
  if (spec.payment && pool) await pool.ensureFor(runSeconds);
  const payload: LoadSpec = {
    url: target.base + spec.path,
    method: spec.method,
    headers: spec.headers,
    ...(spec.body === undefined ? {} : { body: spec.body }),
    connections,
    seconds: runSeconds,
    ...(spec.payment && pool ? { payments: { orderIds: pool.take(), amount: s.orderTotal, keyPrefix: `bench-${process.pid}-${++runCounter}` } } : {}),
  };
  const child = start(`load ${spec.name} ${target.kind}`, 'scripts/bench/load.ts', {}, JSON.stringify(payload));
  const code = await child.exited;
  const line = child.output.join('').trim().split('\n').pop() ?? '';
  if (code !== 0) throw new Error(`load generator failed (${code}) on ${spec.name} ${target.kind}:\n${child.output.join('').slice(-2000)}`);
  const result = JSON.parse(line) as LoadResult;
  if (pool) {
    pool.consumed(result.consumed);
    pool.rate = Math.max(pool.rate, result.rps);
  }
  return result;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

interface Row {
  label: string;
  raw: RoundResult[];
  service: RoundResult[];
}

const fmtRps = (r: RoundResult[]) => (r.length ? median(r.map((x) => x.rps)).toFixed(0) : '-');
const fmtLat = (r: RoundResult[]) => (r.length ? `${median(r.map((x) => x.p50))}/${median(r.map((x) => x.p99))}` : '-');
const cpuOf = (r: RoundResult[]) => r.flatMap((x) => (x.cpuUs === undefined ? [] : [x.cpuUs]));
const fmtCpu = (r: RoundResult[]) => (cpuOf(r).length ? median(cpuOf(r)).toFixed(0) : '-');

/**
 * `ratio`: service / raw req/s, the median of the rounds' ratios. `CPU ratio`: raw / service CPU
 * time per request (1.00: the service costs what the baseline does), the median of the rounds'.
 */
function table(title: string, rows: Row[]): string {
  const lines = [
    `\n${title}`,
    '',
    '| case | raw req/s | service req/s | ratio | raw p50/p99 ms | service p50/p99 ms | ratio range | raw CPU µs/req | service CPU µs/req | CPU ratio |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const row of rows) {
    const ratios = row.raw.length ? row.service.map((x, i) => x.rps / (row.raw[i]?.rps ?? Number.NaN)) : [];
    const ratio = ratios.length ? median(ratios).toFixed(2) : '-';
    const range = ratios.length ? `${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}` : '-';
    const cpuRatios = row.raw.length
      ? row.service.flatMap((x, i) => {
          const rawCpu = row.raw[i]?.cpuUs;
          return x.cpuUs === undefined || rawCpu === undefined ? [] : [rawCpu / x.cpuUs];
        })
      : [];
    const cpuRatio = cpuRatios.length ? median(cpuRatios).toFixed(2) : '-';
    lines.push(`| ${row.label} | ${fmtRps(row.raw)} | ${fmtRps(row.service)} | ${ratio} | ${fmtLat(row.raw)} | ${fmtLat(row.service)} | ${range} | ${fmtCpu(row.raw)} | ${fmtCpu(row.service)} | ${cpuRatio} |`);
  }
  const others = rows.flatMap((row) => [...row.raw, ...row.service].flatMap((x) => (x.disturbance ? [x.disturbance.otherCores] : [])));
  if (others.length) {
    const disturbed = rows.flatMap((row) =>
      (['service', 'raw'] as const).flatMap((kind) =>
        row[kind].flatMap((x, i) => (x.disturbance && x.disturbance.otherCores > DISTURBED_CORES ? [`${row.label} round ${i + 1} ${kind} (${x.disturbance.otherCores.toFixed(2)})`] : [])),
      ),
    );
    lines.push(
      '',
      `Other work on the machine during the rounds (besides the server under load, PostgreSQL and the load generator): median ${median(others).toFixed(2)} cores, most ${Math.max(...others).toFixed(2)}. ` +
        (disturbed.length ? `Rounds above ${DISTURBED_CORES} cores, to read with care: ${disturbed.join('; ')}.` : `No round above ${DISTURBED_CORES} cores.`),
    );
  }
  return lines.join('\n');
}

/** Non-2xx answers or socket errors make a figure worthless: stop and say so. */
function check(result: LoadResult, what: string): void {
  if (result.exhausted) console.warn(`  ! ${what}: the payment pool ran out; the run stopped early (${result.seconds.toFixed(1)} s)`);
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0 && !(result.exhausted && result.errors + result.timeouts === 0 && result.non2xx <= connections)) {
    throw new Error(`${what}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts of ${result.total} requests`);
  }
}

/** The service counts every request (in its memory) against this limit, which no run reaches. */
const RATE_LIMIT_MAX = '1000000000';

/**
 * Headers that differ by nature (time, per-request id, the connection) or by design: the baseline
 * does no rate limiting (issue 23: a cost only the service pays belongs in the service's column).
 */
const UNCOMPARED = /^(date|x-request-id|ratelimit-.*|connection|keep-alive|content-length)$/;

/**
 * The baseline must answer what the service answers, or the ratio compares different work: the
 * reads' bodies byte for byte and their headers by value; the writes' header names and field order.
 */
async function parity(targets: Target[], specs: CaseSpec[]): Promise<string[]> {
  const [service, raw] = targets;
  if (!service || !raw) return [];
  const problems: string[] = [];
  for (const spec of specs.filter((c) => c.method === 'GET')) {
    const [a, b] = await Promise.all([service, raw].map((t) => fetch(t.base + spec.path, { headers: spec.headers })));
    if (!a || !b) continue;
    const [bodyA, bodyB] = await Promise.all([a.text(), b.text()]);
    if (a.status !== b.status) problems.push(`${spec.name}: status ${a.status} vs raw ${b.status}`);
    if (bodyA !== bodyB) problems.push(`${spec.name}: bodies differ\n    service ${bodyA.slice(0, 200)}\n    raw     ${bodyB.slice(0, 200)}`);
    const names = new Set([...a.headers.keys(), ...b.headers.keys()].filter((n) => !UNCOMPARED.test(n)));
    for (const name of names) {
      if (a.headers.get(name) !== b.headers.get(name)) problems.push(`${spec.name}: header ${name}: "${a.headers.get(name)}" vs raw "${b.headers.get(name)}"`);
    }
  }
  for (const spec of specs.filter((c) => c.name === 'order-post')) {
    const [a, b] = await Promise.all([service, raw].map((t) => fetch(t.base + spec.path, { method: 'POST', headers: spec.headers, body: spec.body ?? '' })));
    if (!a || !b) continue;
    const keys = async (r: Response) => Object.keys(JSON.parse(await r.text()) as object).join(',');
    const [keysA, keysB] = await Promise.all([keys(a), keys(b)]);
    if (a.status !== b.status || keysA !== keysB) problems.push(`${spec.name}: ${a.status} {${keysA}} vs raw ${b.status} {${keysB}}`);
    const names = (r: Response) => [...r.headers.keys()].filter((n) => !UNCOMPARED.test(n)).sort().join(',');
    if (names(a) !== names(b)) problems.push(`${spec.name}: header names ${names(a)} vs raw ${names(b)}`);
  }
  return problems;
}

/** The service as `npm start` runs it, production settings, on `databaseUrl`; answers once healthy. */
async function startService(databaseUrl: string, dataDir: string): Promise<{ service: Child; base: string }> {
  const servicePort = await freePort();
  const service = start('service', SERVICE_BUNDLE, {
    // Production settings (no banner, no development secret); TRUST_PROXY: production refuses
    // plain HTTP otherwise, and this is plain HTTP on loopback.
    NODE_ENV: 'production',
    TRUST_PROXY: 'true',
    HOST: '127.0.0.1',
    PORT: String(servicePort),
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    JWT_SECRET,
    LOG_LEVEL: 'warn',
    // Rate limiting stays on the measured path, with a limit no run can reach.
    RATE_LIMIT_MAX,
    // The OAuth issuer, which production requires to be named.
    PUBLIC_URL: `http://127.0.0.1:${servicePort}`,
    // Stopped at once (the bench has no clients to drain): a shutdown delay longer than stop()'s
    // 5 s grace would end the service by SIGKILL.
    SHUTDOWN_DELAY_MS: '0',
    ...(process.env.BENCH_METRICS === '1' ? { METRICS_TOKEN: 'order-service-bench-metrics-token' } : {}),
    ...serviceEnv,
  }, undefined, [...START_FLAGS, ...serviceFlags, ...profileArgs()]);
  const base = `http://127.0.0.1:${servicePort}`;
  await waitHealthy(service, base);
  return { service, base };
}

async function measureBackend(backend: Backend): Promise<string> {
  const runId = `${Date.now().toString(36)}-${process.pid}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'order-service-bench-'));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const databaseUrl = backend === 'postgres' ? await postgresUrl() : 'memory://';
  const { service, base: serviceBase } = await startService(databaseUrl, dataDir);
  const targets: Target[] = [{ kind: 'service', base: serviceBase, pid: service.proc.pid, inspector: inspectorUrl(service) }];
  let raw: Child | undefined;
  if (backend === 'postgres') {
    const rawPort = await freePort();
    raw = start('raw', RAW_BUNDLE, { DATABASE_URL: databaseUrl, JWT_SECRET, PORT: String(rawPort) }, undefined, profileArgs());
    const rawBase = `http://127.0.0.1:${rawPort}`;
    await waitHealthy(raw, rawBase);
    targets.push({ kind: 'raw', base: rawBase, pid: raw.proc.pid, inspector: inspectorUrl(raw) });
  }

  const t0 = Date.now();
  const api = apiAt(serviceBase);
  const s = await seed(api, runId);
  const filler = backend === 'postgres' ? sqlPoolFiller(databaseUrl, s) : restPoolFiller(api, s);
  console.log(`${backend}: seeded ${PRODUCTS} products, a customer with ${READER_ORDERS} orders (${((Date.now() - t0) / 1000).toFixed(1)} s)`);

  const differences = await parity(targets, caseSpecs(s));
  if (targets.length > 1) {
    console.log(differences.length === 0 ? 'parity: the baseline answers the same bodies and headers (RateLimit-* aside: it does no rate limiting)' : 'parity differences:');
    for (const d of differences) console.log(`  ${d}`);
  }

  const rows: Row[] = [];
  let orderPostRate = 0;
  for (const spec of caseSpecs(s)) {
    const row: Row = { label: spec.label, raw: [], service: [] };
    // PostgreSQL pools come by SQL in bulk, so they can be generous; PGlite's through REST.
    const pool = spec.payment ? new Pool(filler, backend === 'postgres' ? 3000 : Math.max(200, orderPostRate)) : undefined;
    for (const target of targets) check(await load(target, spec, warmupSeconds, pool, s), `${spec.name} warm-up (${target.kind})`);
    for (let round = 1; round <= rounds; round++) {
      // Interleaved, and in turns (service first in odd rounds, raw first in even ones), so drift (a
      // noisy neighbour, table growth) and what a round leaves behind (GC debt, cache state) hit both.
      for (const target of round % 2 === 1 ? targets : [...targets].reverse()) {
        // The payment pool first: on PGlite it is filled through the service's own REST API,
        // which must not count as the round's CPU time.
        if (pool) await pool.ensureFor(seconds);
        const profiled = await profileWhile(target, `${backend}-${spec.name}-r${round}-${target.kind}.cpuprofile`);
        const machineBefore = sampleMachine();
        const cpuBefore = cpuNs(target.pid);
        const loaded = await load(target, spec, seconds, pool, s);
        const cpuAfter = cpuNs(target.pid);
        const machineAfter = sampleMachine();
        await profiled();
        check(loaded, `${spec.name} round ${round} (${target.kind})`);
        const serverNs = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
        const cpuUs = serverNs === undefined || loaded.total === 0 ? undefined : serverNs / 1000 / loaded.total;
        const disturbed = serverNs === undefined ? undefined : disturbance(machineBefore, machineAfter, serverNs, loaded.cpuMs);
        const result: RoundResult = { ...loaded, cpuUs, disturbance: disturbed };
        row[target.kind].push(result);
        const cpu = cpuUs === undefined ? '' : `, CPU ${cpuUs.toFixed(0)} µs/req`;
        const other = disturbed === undefined ? '' : `, other ${disturbed.otherCores.toFixed(2)} cores, steal ${disturbed.stealCores.toFixed(2)}`;
        // The database's side of a request (its statements, triggers, commits): local PostgreSQL only.
        const postgresNs = machineAfter.postgres - machineBefore.postgres;
        const postgres = postgresNs === 0 || loaded.total === 0 ? '' : `, postgres ${(postgresNs / 1000 / loaded.total).toFixed(0)} µs/req`;
        process.stdout.write(`  ${backend} ${spec.name} round ${round} ${target.kind}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms${cpu}${postgres}${other}\n`);
      }
    }
    if (spec.name === 'order-post') orderPostRate = median(row.service.map((x) => x.rps));
    rows.push(row);
  }

  const serviceRss = rssMb(service.proc.pid);
  const rawRss = rssMb(raw?.proc.pid);
  // And once V8 has had the idle time its memory reducer waits for (garbage the old generation
  // still held when the load stopped is then collected): the figure a quiet service settles at.
  await new Promise((resolveIdle) => setTimeout(resolveIdle, IDLE_SECONDS * 1000));
  const serviceIdleRss = rssMb(service.proc.pid);
  const rawIdleRss = rssMb(raw?.proc.pid);
  await stop(service);
  if (raw) await stop(raw);
  const title =
    backend === 'postgres'
      ? `PostgreSQL (${databaseUrl.replace(/\/\/[^@]*@/, '//')}): service vs raw baseline, medians of ${rounds} x ${seconds} s, ${connections} connections`
      : `PGlite in memory: service only (no baseline on PGlite), medians of ${rounds} x ${seconds} s, ${connections} connections`;
  const mb = (value: number | undefined) => `${value?.toFixed(0) ?? '?'} MB`;
  const rss =
    `RSS right after the load: service ${mb(serviceRss)}${raw ? `, raw ${mb(rawRss)}` : ''}; ` +
    `${IDLE_SECONDS} s later: service ${mb(serviceIdleRss)}${raw ? `, raw ${mb(rawIdleRss)}` : ''}`;
  return `${table(title, rows)}\n\n${rss}`;
}

// --- lists at scale (--orders N) -----------------------------------------------------------------

interface ListShape {
  label: string;
  path: string;
  token: string;
  /** The shape is one the baseline serves too (no filter, by page number): time it there as well. */
  raw?: boolean;
}

/**
 * Seeds `orderCount` orders in SQL (scripts/bench/seed-orders.ts), then times each list shape by
 * single requests in sequence (latency, not throughput: one at a time, from this process, over
 * keep-alive sockets), after a warm-up: p50, p99 and the rows answered. The shapes the baseline
 * serves (no filter, by page number) are timed on it too, request for request in turn, so the
 * table has a same-session reference for what HTTP, JSON and the SQL alone cost.
 */
/** Products seeded beside the orders for the product list's shapes. */
const PRODUCT_CATALOGUE = 100_000;

async function measureLists(orderCount: number): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'order-service-bench-'));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const databaseUrl = await postgresUrl();
  const { service, base } = await startService(databaseUrl, dataDir);
  const rawPort = await freePort();
  const raw = start('raw', RAW_BUNDLE, { DATABASE_URL: databaseUrl, JWT_SECRET, PORT: String(rawPort) });
  const rawBase = `http://127.0.0.1:${rawPort}`;
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    await waitHealthy(raw, rawBase);
    const products = await sql<{ id: number }[]>`
      insert into products (sku, name, category, price, currency, stock)
      select 'SCALE-' || n, 'Scale product ' || n, 'scale', 100 * n, 'USD', 1000000 from generate_series(1, 20) as n
      returning id`;
    const customers = Math.max(1, Math.round(orderCount / 2000));
    const seeded = await seedOrders(sql, { orders: orderCount, customers, productIds: products.map((p) => p.id), tag: `${Date.now().toString(36)}` });
    const [size] = await sql<{ orders: string; lines: string; bytes: string }[]>`
      select (select count(*) from orders) as orders, (select count(*) from order_items) as lines,
             pg_size_pretty(pg_total_relation_size('orders') + pg_total_relation_size('order_items')) as bytes`;
    console.log(`lists: seeded ${size?.orders} orders with ${size?.lines} lines (${size?.bytes} with indexes) for ${customers} customers in ${seeded.seconds.toFixed(1)} s`);
    // A catalogue of 100,000 products for the product list's filters and search: 50 categories,
    // prices spread over 1.00-999.99, one in 20 out of stock.
    const catalogueStarted = Date.now();
    await sql`
      insert into products (sku, name, description, category, price, currency, stock)
      select 'CAT-' || n, 'Catalogue item ' || n, 'Item number ' || n || ' of the catalogue, in colour ' || (n % 17),
             'cat-' || (n % 50), 100 + (n * 7919) % 99900, 'USD', case when n % 20 = 0 then 0 else 10 + n % 90 end
      from generate_series(1, ${PRODUCT_CATALOGUE}) as n`;
    await sql`analyze products`;
    console.log(`lists: seeded ${PRODUCT_CATALOGUE} products in ${((Date.now() - catalogueStarted) / 1000).toFixed(1)} s`);

    const customerId = seeded.customerIds[0] as number;
    const admin = await mint('1', 'admin');
    const customer = await mint(String(customerId), 'customer');
    // Cursors at the depth of the deep pages by number, made as the service makes them.
    const codec = new CursorCodec(JWT_SECRET);
    const at = async (offset: number, own: boolean) => {
      const [row] = await sql<{ created_at: Date; id: number }[]>`
        select created_at, id from orders ${own ? sql`where customer_id = ${customerId}` : sql``}
        order by created_at desc, id desc offset ${offset - 1} limit 1`;
      if (!row) throw new Error(`fewer than ${offset} orders`);
      return encodeURIComponent(codec.encode('orders:any:', { direction: 'after', page: offset / 20 + 1, key: [row.created_at.toISOString(), row.id] }));
    };
    const deepAdmin = Math.min(5000, Math.floor(orderCount / 20)) - 1;
    const deepCustomer = Math.min(100, Math.floor(orderCount / customers / 20)) - 1;
    const shapes: ListShape[] = [
      { label: 'admin: all', path: '/orders?limit=20', token: admin, raw: true },
      { label: 'admin: status=paid', path: '/orders?limit=20&status=paid', token: admin },
      { label: 'admin: status=active', path: '/orders?limit=20&status=active', token: admin },
      { label: `admin: page=${deepAdmin + 1} (offset)`, path: `/orders?limit=20&page=${deepAdmin + 1}`, token: admin, raw: true },
      { label: `admin: same depth by cursor`, path: `/orders?limit=20&cursor=${await at(deepAdmin * 20, false)}`, token: admin },
      { label: 'customer: all', path: '/orders?limit=20', token: customer, raw: true },
      { label: 'customer: status=paid', path: '/orders?limit=20&status=paid', token: customer },
      { label: 'customer: status=active', path: '/orders?limit=20&status=active', token: customer },
      { label: `customer: page=${deepCustomer + 1} (offset)`, path: `/orders?limit=20&page=${deepCustomer + 1}`, token: customer, raw: true },
      { label: 'customer: same depth by cursor', path: `/orders?limit=20&cursor=${await at(deepCustomer * 20, true)}`, token: customer },
      // Issue 25's filters and sorts (the seed's metadata: order n has erp_id ERP-<n>).
      { label: 'admin: customer_id', path: `/orders?limit=20&customer_id=${customerId}`, token: admin },
      { label: 'admin: created range (a day)', path: `/orders?limit=20&created_gte=${encodeURIComponent(new Date(Date.now() - 2 * 86_400_000).toISOString())}&created_lt=${encodeURIComponent(new Date(Date.now() - 86_400_000).toISOString())}`, token: admin },
      { label: 'admin: sort=-total', path: '/orders?limit=20&sort=-total', token: admin },
      { label: 'admin: sort=updated_at', path: '/orders?limit=20&sort=updated_at', token: admin },
      { label: 'admin: status=paid&sort=total', path: '/orders?limit=20&status=paid&sort=total', token: admin },
      { label: 'admin: metadata[erp_id]', path: `/orders?limit=20&metadata[erp_id]=ERP-${Math.ceil(orderCount / 2)}`, token: admin },
      { label: 'customer: sort=-total', path: '/orders?limit=20&sort=-total', token: customer },
      { label: 'products: all', path: '/products?limit=20', token: customer, raw: true },
      { label: 'products: category', path: '/products?limit=20&category=cat-7', token: customer, raw: true },
      { label: 'products: price range', path: '/products?limit=20&price_gte=5000&price_lte=5100', token: customer },
      { label: 'products: in_stock=false', path: '/products?limit=20&in_stock=false', token: customer },
      { label: 'products: sort=-price', path: '/products?limit=20&sort=-price', token: customer },
      { label: 'products: category, sort=price', path: '/products?limit=20&category=cat-7&sort=price', token: customer },
      { label: 'products: q, one match', path: '/products?limit=20&q=item%2099991', token: customer },
      { label: 'products: q, 11 matches', path: '/products?limit=20&q=item%201234', token: customer },
      { label: 'products: q with category', path: '/products?limit=20&q=item%201234&category=cat-34', token: customer },
      { label: 'products: q matching every product (documented slow)', path: '/products?limit=20&q=catalogue', token: customer },
    ];
    const requests = Math.max(50, rounds * 100);
    const lines = [`Lists at ${size?.orders} orders (PostgreSQL): single requests in sequence, ${requests} per shape after 20 warm-up`, ''];
    lines.push('| shape | p50 ms | p99 ms | baseline p50 ms | rows |', '|---|---|---|---|---|');
    /** One request's time in ms and the rows it answered. */
    const timed = async (at: string, shape: ListShape) => {
      const started = performance.now();
      const response = await fetch(`${at}/api/v1${shape.path}`, { headers: { authorization: `Bearer ${shape.token}` } });
      const body = (await response.json()) as { data?: unknown[] };
      const elapsed = performance.now() - started;
      if (!response.ok) throw new Error(`${shape.label} (${at}): ${response.status} ${JSON.stringify(body).slice(0, 300)}`);
      return { elapsed, rows: body.data?.length ?? 0 };
    };
    const percentile = (times: number[], p: number) => ([...times].sort((a, b) => a - b)[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0).toFixed(2);
    for (const shape of shapes) {
      const times: number[] = [];
      const rawTimes: number[] = [];
      let rows = 0;
      for (let i = 0; i < requests + 20; i++) {
        const own = await timed(base, shape);
        rows = own.rows;
        const reference = shape.raw ? await timed(rawBase, shape) : undefined;
        if (i < 20) continue;
        times.push(own.elapsed);
        if (reference) rawTimes.push(reference.elapsed);
      }
      const rawP50 = rawTimes.length ? percentile(rawTimes, 0.5) : '-';
      lines.push(`| ${shape.label} | ${percentile(times, 0.5)} | ${percentile(times, 0.99)} | ${rawP50} | ${rows} |`);
      console.log(`  ${shape.label}: p50 ${percentile(times, 0.5)} ms, p99 ${percentile(times, 0.99)} ms, baseline p50 ${rawP50} ms`);
    }
    lines.push('', `RSS after: service ${rssMb(service.proc.pid)?.toFixed(0) ?? '?'} MB`);
    return lines.join('\n');
  } finally {
    await sql.end({ timeout: 5 });
    await stop(service);
    await stop(raw);
  }
}

async function main(): Promise<void> {
  await buildServers();
  if (listOrders !== undefined) {
    console.log(`bench: lists at ${listOrders} orders on PostgreSQL`);
    console.log(await measureLists(listOrders));
    return;
  }
  console.log(`bench: ${backends.join(', ')}; cases ${cases.join(', ')}; ${rounds} rounds x ${seconds} s, ${connections} connections`);
  const reports: string[] = [];
  for (const backend of backends) reports.push(await measureBackend(backend));
  console.log(reports.join('\n'));
  console.log('\nratio = service / raw req/s (median of the per-round ratios); p50/p99 in ms; CPU ratio = raw / service CPU time per request (each server process, all its threads). Ratios mean more than absolute figures on a shared machine, and the CPU ratio moves least with what else runs on it.');
}

try {
  await main();
  await cleanup();
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  await cleanup();
  process.exit(1);
}
