/**
 * What an invalid request costs the service, against a valid request of the same size (issue 21):
 * the service in a process of its own (`node --import tsx server/main.ts`, in-memory PGlite), each
 * body sent one at a time on both doors (REST and `/trpc`), and per request the server's CPU time
 * (every thread's, from `/proc/<pid>/task/<tid>/schedstat`), the wall time and the answer's size.
 * Then a flood: the worst body several times a second while `/api/health` is probed, to show how
 * long the instance stays busy and how slow it answers meanwhile.
 *
 *   npx tsx scripts/error-cost.ts
 *
 * Options (environment): ERROR_COST_REPEAT (requests per case, 8), ERROR_COST_CASES (comma list
 * of case names, default all), ERROR_COST_FLOOD (`rate x seconds` of the flood, `10x15`; `0` skips it).
 * Linux only (/proc). Bodies stay under the default BODY_LIMIT (1 MiB).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TokenService } from '../server/auth/tokens.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const JWT = { secret: 'order-service-error-cost-secret-not-for-production-0123', issuer: 'order-service', audience: 'order-service-api' };

const repeat = Number(process.env.ERROR_COST_REPEAT ?? 8);
const wantedCases = (process.env.ERROR_COST_CASES ?? '').split(',').map((s) => s.trim()).filter(Boolean);
const [floodRate = 10, floodSeconds = 15] = (process.env.ERROR_COST_FLOOD ?? '10x15').split('x').map(Number);

// --- the service ---------------------------------------------------------------------------------

async function startService(): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_URL: 'memory://',
      JWT_SECRET: JWT.secret,
      JWT_ISSUER: JWT.issuer,
      JWT_AUDIENCE: JWT.audience,
      // Far above what this script sends: the point is the cost of what the limit lets through.
      RATE_LIMIT_MAX: '1000000',
      // As deployed: one line per request, written to a pipe this process drains.
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const base = await new Promise<string>((resolveBase, reject) => {
    const read = (chunk: Buffer) => {
      if (output.length < 100_000) output += chunk.toString();
      const found = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (found?.[1]) resolveBase(found[1]);
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => reject(new Error(`the service exited (${code}):\n${output}`)));
  });
  return { child, base };
}

/** CPU time the process has used so far (every thread), in nanoseconds. */
function cpuNs(pid: number): number {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return total;
}

// --- bodies --------------------------------------------------------------------------------------

/** The issue's body: 70,000 unknown fields beside valid ones (0.76 MB). */
const unknownFields = (count: number, valid: Record<string, unknown>): string => {
  const extra: string[] = [];
  for (let i = 0; i < count; i++) extra.push(`"k${String(i).padStart(5, '0')}":1`);
  return `{${JSON.stringify(valid).slice(1, -1)},${extra.join(',')}}`;
};

/** `items` of `count` copies of `item`: every one invalid in its own ways. */
const manyItems = (count: number, item: string, extra: Record<string, unknown> = {}): string =>
  `{${Object.keys(extra).length ? `${JSON.stringify(extra).slice(1, -1)},` : ''}"items":[${new Array<string>(count).fill(item).join(',')}]}`;

/** A valid JSON body of exactly `size` bytes: `valid` with insignificant white space. */
const padded = (valid: unknown, size: number): string => {
  const text = JSON.stringify(valid);
  return `{${' '.repeat(Math.max(0, size - text.length))}${text.slice(1)}`;
};

let serial = 0;
const newUser = () => ({ email: `cost-${process.pid}-${++serial}@example.com`, name: 'Cost Check', password: 'correct-horse-battery' });

interface Case {
  name: string;
  what: string;
  door: 'rest' | 'trpc';
  method: 'POST' | 'PATCH';
  path: string;
  contentType?: string;
  token?: string;
  body: () => string;
}

interface Setup {
  admin: string;
  customer: string;
  productId: number;
  orderId: number;
}

/** The `/trpc` form of a single call, or of a batch of `count` identical calls. */
const trpcBatch = (procedure: string, input: string, count: number) => ({
  path: `/trpc/${new Array<string>(count).fill(procedure).join(',')}?batch=1`,
  body: `{${Array.from({ length: count }, (_, i) => `"${i}":${input}`).join(',')}}`,
});

function cases(setup: Setup): Case[] {
  const users70k = unknownFields(70_000, newUser());
  const usersMax = unknownFields(95_000, newUser());
  // 1 MiB of `{}` items: each lacks product_id and quantity.
  const emptyItems = manyItems(340_000, '{}');
  // The most unknown fields within 1,000 members an object: 100 items of 900 each (0.9 MB).
  const item900 = unknownFields(900, { product_id: setup.productId, quantity: 1 });
  const itemsUnknown = `{"items":[${new Array<string>(100).fill(item900).join(',')}]}`;
  // The most a parse can cost within the bounds: 340,000 empty objects in arrays of 999, as the
  // value of one unknown field (validation refuses its name and never looks inside).
  const emptyObjects = `{${JSON.stringify(newUser()).slice(1, -1)},"x":[${new Array<string>(340).fill(`[${new Array<string>(999).fill('{}').join(',')}]`).join(',')}]}`;
  const order = { items: [{ product_id: setup.productId, quantity: 1 }] };
  const order100 = { items: Array.from({ length: 100 }, () => ({ product_id: setup.productId, quantity: 1 })) };
  const list: Case[] = [
    { name: 'users-70k-unknown', what: '70,000 unknown fields (the issue)', door: 'rest', method: 'POST', path: '/api/v1/users', body: () => users70k },
    { name: 'users-valid-same-size', what: 'a valid user, padded to the same size', door: 'rest', method: 'POST', path: '/api/v1/users', body: () => padded(newUser(), users70k.length) },
    { name: 'users-95k-unknown', what: '95,000 unknown fields (1 MiB)', door: 'rest', method: 'POST', path: '/api/v1/users', body: () => usersMax },
    {
      name: 'users-340k-empty-objects',
      what: 'an unknown field holding 340,000 empty objects',
      door: 'rest',
      method: 'POST',
      path: '/api/v1/users',
      body: () => emptyObjects,
    },
    {
      name: 'users-long-unknown-key',
      what: 'one unknown field with a 1,000,000-character name',
      door: 'rest',
      method: 'POST',
      path: '/api/v1/users',
      body: () => `{"${'k'.repeat(1_000_000)}":1}`,
    },
    { name: 'orders-340k-empty-items', what: '340,000 items `{}` (2 issues each)', door: 'rest', method: 'POST', path: '/api/v1/orders', token: setup.customer, body: () => emptyItems },
    { name: 'orders-100-items-900-unknown', what: '100 items of 900 unknown fields', door: 'rest', method: 'POST', path: '/api/v1/orders', token: setup.customer, body: () => itemsUnknown },
    { name: 'orders-valid-same-size', what: 'a valid order, padded to the same size', door: 'rest', method: 'POST', path: '/api/v1/orders', token: setup.customer, body: () => padded(order, itemsUnknown.length) },
    {
      name: 'orders-valid-100-items-same-size',
      what: 'a valid order of 100 items, padded to the same size',
      door: 'rest',
      method: 'POST',
      path: '/api/v1/orders',
      token: setup.customer,
      body: () => padded(order100, itemsUnknown.length),
    },
    {
      name: 'orders-merge-patch-items',
      what: 'merge patch: 100 items of 900 unknown fields',
      door: 'rest',
      method: 'PATCH',
      path: `/api/v1/orders/${setup.orderId}`,
      contentType: 'application/merge-patch+json',
      token: setup.customer,
      body: () => itemsUnknown,
    },
  ];
  const trpc70k = trpcBatch('users.create', users70k, 1);
  const trpcItems = trpcBatch('orders.create', itemsUnknown, 1);
  // 100 calls (the most a batch may carry), each 9 KB of unknown fields.
  const batchUnknown = trpcBatch('users.create', unknownFields(900, newUser()), 100);
  const batchOrders = trpcBatch('orders.create', '{}', 100);
  list.push(
    { name: 'trpc-users-70k-unknown', what: '70,000 unknown fields (the issue)', door: 'trpc', method: 'POST', path: trpc70k.path, body: () => trpc70k.body },
    {
      name: 'trpc-users-valid-same-size',
      what: 'a valid user, padded to the same size',
      door: 'trpc',
      method: 'POST',
      path: trpc70k.path,
      body: () => trpcBatch('users.create', padded(newUser(), users70k.length), 1).body,
    },
    { name: 'trpc-orders-100-items-900-unknown', what: '100 items of 900 unknown fields', door: 'trpc', method: 'POST', path: trpcItems.path, token: setup.customer, body: () => trpcItems.body },
    { name: 'trpc-batch-100-unknown', what: 'batch of 100 calls x 900 unknown fields', door: 'trpc', method: 'POST', path: batchUnknown.path, body: () => batchUnknown.body },
    {
      name: 'trpc-batch-100-valid-orders',
      what: 'batch of 100 valid orders, padded to the same size',
      door: 'trpc',
      method: 'POST',
      path: batchOrders.path,
      token: setup.customer,
      body: () => trpcBatch('orders.create', padded(order, Math.floor(batchUnknown.body.length / 100) - 8), 100).body,
    },
  );
  return wantedCases.length ? list.filter((c) => wantedCases.includes(c.name)) : list;
}

// --- requests ------------------------------------------------------------------------------------

async function send(base: string, c: Pick<Case, 'method' | 'path' | 'contentType' | 'token'>, body: string): Promise<{ status: number; bytes: number; text: string }> {
  const res = await fetch(base + c.path, {
    method: c.method,
    headers: { 'content-type': c.contentType ?? 'application/json', ...(c.token ? { authorization: `Bearer ${c.token}` } : {}) },
    body,
  });
  const text = await res.text();
  return { status: res.status, bytes: Buffer.byteLength(text), text };
}

async function json(base: string, method: string, path: string, token: string | undefined, body: unknown): Promise<Record<string, unknown>> {
  const answer = await send(base, { method: method as Case['method'], path, token }, JSON.stringify(body));
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text.slice(0, 300)}`);
  return JSON.parse(answer.text) as Record<string, unknown>;
}

async function arrange(base: string): Promise<Setup> {
  const tokens = new TokenService({ ...JWT, accessTokenTtlSeconds: 3600 });
  await tokens.ready();
  const admin = await tokens.mint({ sub: '1', role: 'admin', name: 'Cost admin' });
  const product = await json(base, 'POST', '/api/v1/products', admin, { sku: `COST-${process.pid}`, name: 'Mug', category: 'kitchen', price: 900, stock: 1_000_000_000 });
  const user = await json(base, 'POST', '/api/v1/users', undefined, newUser());
  const customer = await tokens.mint({ sub: String(user.id), role: 'customer', name: 'Cost Check' });
  const order = await json(base, 'POST', '/api/v1/orders', customer, { items: [{ product_id: product.id, quantity: 1 }] });
  return { admin, customer, productId: Number(product.id), orderId: Number(order.id) };
}

const ms = (ns: number) => (ns / 1e6).toFixed(1);
const kb = (bytes: number) => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(2)} MB` : `${(bytes / 1e3).toFixed(1)} kB`);
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

async function measure(base: string, pid: number, c: Case): Promise<string> {
  // Warm-up: JIT, and the first call of each path.
  for (let i = 0; i < 2; i++) await send(base, c, c.body());
  const cpu: number[] = [];
  const wall: number[] = [];
  let last = { status: 0, bytes: 0, errors: '' };
  let sent = 0;
  for (let i = 0; i < repeat; i++) {
    const body = c.body();
    sent = Buffer.byteLength(body);
    const before = cpuNs(pid);
    const started = process.hrtime.bigint();
    const answer = await send(base, c, body);
    wall.push(Number(process.hrtime.bigint() - started));
    cpu.push(cpuNs(pid) - before);
    last = { status: answer.status, bytes: answer.bytes, errors: describeErrors(answer.text) };
  }
  return `| ${c.door} | ${c.name}: ${c.what} | ${kb(sent)} | ${last.status} | ${kb(last.bytes)} | ${last.errors} | ${ms(median(cpu))} | ${ms(median(wall))} |`;
}

/** How many field errors the answer lists (summed over a batch), and the total it reports. */
function describeErrors(text: string): string {
  let listed = 0;
  let total = 0;
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      if (typeof record.status === 'number' && typeof record.type === 'string') {
        if (Array.isArray(record.errors)) listed += record.errors.length;
        if (typeof record.errors_total === 'number') total += record.errors_total;
        return;
      }
      Object.values(record).forEach(visit);
    }
  };
  try {
    visit(JSON.parse(text));
  } catch {
    return '?';
  }
  return total ? `${listed} of ${total}` : String(listed);
}

/** `rate` worst bodies a second for `seconds`, with `/api/health` probed every 250 ms. */
async function flood(base: string, pid: number, c: Case, rate: number, seconds: number): Promise<string> {
  const body = c.body();
  const before = cpuNs(pid);
  const started = Date.now();
  const attacks: Promise<unknown>[] = [];
  const health: number[] = [];
  const probes: Promise<unknown>[] = [];
  // A probe every 250 ms whether or not the last one was answered: a stuck one delays no other.
  const prober = setInterval(() => {
    const t0 = Date.now();
    probes.push(fetch(`${base}/api/health`).then(async (r) => {
      await r.arrayBuffer();
      health.push(Date.now() - t0);
    }));
  }, 250);
  for (let i = 0; i < rate * seconds; i++) {
    const due = started + (i * 1000) / rate;
    await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
    attacks.push(send(base, c, body).catch(() => undefined));
  }
  await Promise.all(attacks);
  const drained = (Date.now() - started) / 1000;
  clearInterval(prober);
  await Promise.all(probes);
  const cpu = (cpuNs(pid) - before) / 1e9;
  const sorted = [...health].sort((a, b) => a - b);
  const p = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return `flood ${c.door} ${c.name}: ${rate}/s for ${seconds} s -> last answer after ${drained.toFixed(1)} s, server CPU ${cpu.toFixed(1)} s, /api/health p50 ${p(0.5)} ms, p99 ${p(0.99)} ms (${health.length} probes)`;
}

const { child, base } = await startService();
const pid = child.pid ?? 0;
try {
  const setup = await arrange(base);
  const all = cases(setup);
  console.log(`error cost, ${repeat} requests per case; CPU = the server process's, all threads, median per request\n`);
  console.log('| door | case | body | status | answer | errors listed | CPU ms | wall ms |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const c of all) console.log(await measure(base, pid, c));
  const worst = all.find((c) => c.name === 'users-70k-unknown');
  if (worst && floodRate > 0 && floodSeconds > 0) console.log(`\n${await flood(base, pid, worst, floodRate, floodSeconds)}`);
} finally {
  child.kill('SIGTERM');
}
