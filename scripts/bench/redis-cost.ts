/**
 * What counting in Redis costs a read (issue 23): the built service (`npm run build`) in one
 * process per variant, all on one PostgreSQL database, one with its counters in memory and the
 * others with `REDIS_URL` (a redis-server this script starts on loopback), measured in interleaved
 * rounds on `GET /api/v1/products/{id}`:
 *
 *   - latency alone: requests one at a time over a kept-alive connection, p50 and p99;
 *   - under load: autocannon, 16 connections, req/s, p50 and the server's CPU time per request.
 *
 *   node --import tsx scripts/bench/redis-cost.ts
 *
 * Options (environment): COST_ROUNDS (6), COST_SECONDS (3), COST_SEQUENTIAL (300 requests a round),
 * COST_VARIANTS (comma list of `name=bundle[:redis]`, default `memory=dist/server/main.mjs,redis=dist/server/main.mjs:redis`;
 * a bundle built from an older commit, copied beside it, compares another way of counting),
 * DATABASE_URL (a role that may create databases; default the local cluster's order_service_test).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import postgres from 'postgres';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const rounds = Number(process.env.COST_ROUNDS ?? 6);
const seconds = Number(process.env.COST_SECONDS ?? 3);
const sequential = Number(process.env.COST_SEQUENTIAL ?? 300);
const adminUrl = process.env.DATABASE_URL ?? 'postgres://order_service:order_service@127.0.0.1:5432/order_service_test';
const variants = (process.env.COST_VARIANTS ?? 'memory=dist/server/main.mjs,redis=dist/server/main.mjs:redis').split(',').map((spec) => {
  const [name, rest] = spec.split('=');
  const [bundle, redis] = (rest ?? '').split(':');
  if (!name || !bundle) throw new Error(`COST_VARIANTS: bad entry ${spec}`);
  return { name, bundle, redis: redis === 'redis' };
});

const freePort = (): Promise<number> =>
  new Promise((resolvePort, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });

const children: ChildProcess[] = [];
/** `ready`: resolves once the output matches it; without, at once (the caller polls). */
function launch(command: string, args: string[], env: NodeJS.ProcessEnv, ready?: RegExp): Promise<ChildProcess> {
  const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  if (!ready) return Promise.resolve(child);
  let output = '';
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} did not start:\n${output}`)), 60_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) {
        clearTimeout(timer);
        resolveStart(child);
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => reject(new Error(`${command} exited (${code}):\n${output}`)));
  });
}

/** The process's CPU time (user + system, every thread) in µs. */
function cpuUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
function get(url: string): Promise<number> {
  return new Promise((resolveGet, reject) => {
    const started = process.hrtime.bigint();
    const req = httpRequest(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`${url}: ${res.statusCode}`));
        else resolveGet(Number(process.hrtime.bigint() - started) / 1e6);
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] ?? Number.NaN;
};
const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
};

const dbName = `order_service_redis_cost_${process.pid}`;
const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
await admin.unsafe(`create database ${dbName}`);
const url = new URL(adminUrl);
url.pathname = `/${dbName}`;
try {
  const redisPort = await freePort();
  await launch('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], process.env, /Ready to accept connections/);
  const targets: { name: string; base: string; pid: number }[] = [];
  for (const variant of variants) {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      TRUST_PROXY: 'true',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: url.toString(),
      JWT_SECRET: 'redis-cost-secret-that-is-at-least-32-bytes',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '1000000000',
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      ...(variant.redis ? { REDIS_URL: `redis://127.0.0.1:${redisPort}` } : {}),
    };
    const child = await launch(process.execPath, ['--max-semi-space-size=8', '--heap-growing-percent=30', variant.bundle], env);
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${base}/api/health`)).ok) break;
      } catch {
        // Not yet.
      }
      if (i > 200) throw new Error(`${variant.name} is not healthy`);
      await new Promise((r) => setTimeout(r, 100));
    }
    targets.push({ name: variant.name, base, pid: child.pid ?? 0 });
  }
  const db = postgres(url.toString(), { max: 1, onnotice: () => {} });
  const [product] = await db<{ id: number }[]>`insert into products (sku, name, category, price, stock) values ('COST-1', 'cost', 'bench', 100, 1) returning id`;
  await db.end();
  const path = `/api/v1/products/${product?.id}`;

  const seq: Record<string, number[]> = {};
  const load: Record<string, { rps: number; p50: number; cpu: number }[]> = {};
  for (const t of targets) {
    seq[t.name] = [];
    load[t.name] = [];
    // Warm-up: JIT, pools, the Redis connection.
    for (let i = 0; i < 200; i++) await get(t.base + path);
    await autocannon({ url: t.base + path, connections: 16, duration: 1 });
  }
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? targets : [...targets].reverse();
    for (const t of order) for (let i = 0; i < sequential; i++) seq[t.name]?.push(await get(t.base + path));
    for (const t of order) {
      const before = cpuUs(t.pid);
      const result = await autocannon({ url: t.base + path, connections: 16, duration: seconds });
      const cpu = (cpuUs(t.pid) - before) / result.requests.total;
      load[t.name]?.push({ rps: result.requests.average, p50: result.latency.p50, cpu });
      console.log(`round ${round} ${t.name}: ${result.requests.average.toFixed(0)} req/s, p50 ${result.latency.p50} ms, CPU ${cpu.toFixed(0)} µs/req`);
    }
  }
  console.log('\n| variant | one at a time p50 / p99 ms | under load req/s | under load p50 ms | CPU µs/req |');
  console.log('|---|---|---|---|---|');
  for (const t of targets) {
    const s = seq[t.name] ?? [];
    const l = load[t.name] ?? [];
    console.log(
      `| ${t.name} | ${quantile(s, 0.5).toFixed(3)} / ${quantile(s, 0.99).toFixed(3)} | ${median(l.map((x) => x.rps)).toFixed(0)} | ${median(l.map((x) => x.p50))} | ${median(l.map((x) => x.cpu)).toFixed(0)} |`,
    );
  }
} finally {
  for (const child of children) child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 1000));
  await admin.unsafe(`drop database if exists ${dbName} with (force)`);
  await admin.end();
  agent.destroy();
}
