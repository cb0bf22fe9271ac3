/**
 * CONTRACT section 8: "Across any number of service instances on one database the operation runs
 * at most once per key." Two real service processes on one PostgreSQL database; 20 concurrent
 * payments with one key, split across both. PostgreSQL only: PGlite is one process's database.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { count, eq } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { openDatabase, type Database } from '../../server/db/client.ts';
import { payments } from '../../server/db/schema.ts';
import { createUserRow, TEST_JWT, type TestUser } from '../helpers/app.ts';
import { onPostgres } from '../helpers/db.ts';
import { withDatabase } from '../helpers/postgres-url.ts';
import { productInput } from '../helpers/products.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const START_TIMEOUT_MS = 90_000;
const CONCURRENT = 20;

interface Service {
  child: ChildProcess;
  base: string;
  output: () => string;
}

/** Starts `tsx server/main.ts` and resolves once it listens (PORT=0: the port it logs). */
async function startService(env: NodeJS.ProcessEnv): Promise<Service> {
  const child = spawn(`${ROOT}node_modules/.bin/tsx`, ['server/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start:\n${output}`)), START_TIMEOUT_MS);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (found?.[1]) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited (${code}) before it listened:\n${output}`));
    });
  });
  return { child, base, output: () => output };
}

async function stopService(service: Service): Promise<void> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return;
  const exited = once(service.child, 'exit');
  service.child.kill('SIGTERM');
  await exited;
}

describe.skipIf(!onPostgres)('one idempotency key across two service processes on one database (CONTRACT section 8)', () => {
  const services: Service[] = [];
  const tokens = new TokenService(TEST_JWT);
  let serverUrl: string;
  let name: string;
  let database: Database;
  let admin: TestUser;
  let customer: TestUser;

  beforeAll(async () => {
    serverUrl = process.env.TEST_DATABASE_URL ?? '';
    if (!serverUrl) throw new Error('TEST_DATABASE_URL is not set');
    const template = inject('postgresTemplate');
    name = `${template}_${randomBytes(6).toString('hex')}`;
    const setup = postgres(serverUrl, { max: 1, onnotice: () => {} });
    await setup.unsafe(`create database ${name} template ${template}`);
    await setup.end();
    const url = withDatabase(serverUrl, name);
    database = await openDatabase({ url, dataDir: '' });
    admin = await createUserRow(database.db, tokens, 'admin');
    customer = await createUserRow(database.db, tokens, 'customer');

    const env = {
      ...process.env,
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_URL: url,
      JWT_SECRET: TEST_JWT.secret,
      JWT_ISSUER: TEST_JWT.issuer,
      JWT_AUDIENCE: TEST_JWT.audience,
      RATE_LIMIT_MAX: '100000',
      LOG_LEVEL: 'info',
    };
    // One after the other: each compiles the service at start, and migrations run once at a time.
    for (let i = 0; i < 2; i++) services.push(await startService(env));
  }, 2 * START_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    await Promise.all(services.map(stopService));
    await database?.close();
    const cleanup = postgres(serverUrl, { max: 1, onnotice: () => {} });
    await cleanup.unsafe(`drop database if exists ${name} with (force)`);
    await cleanup.end();
  });

  const call = async (base: string, method: string, path: string, token: string, body?: unknown, key?: string) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };

  it(`${CONCURRENT} concurrent payments with one key, half to each process: exactly one 201, the rest 200 replays of it, one payment row`, async () => {
    const [one, two] = services;
    if (!one || !two) throw new Error('services missing');
    const product = await call(one.base, 'POST', '/products', admin.token, productInput({ price: 1250, stock: 100 }));
    expect(product.status).toBe(201);
    const order = await call(two.base, 'POST', '/orders', customer.token, { items: [{ product_id: product.body.id, quantity: 2 }], address: '1 Main St, Springfield' });
    expect(order.status).toBe(201);
    expect((await call(one.base, 'POST', `/orders/${String(order.body.id)}/confirm`, customer.token)).status).toBe(200);

    const key = `pay-${randomBytes(8).toString('hex')}`;
    const body = { order_id: order.body.id, amount: order.body.total, method: 'card' };
    const answers = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) => call((i % 2 === 0 ? one : two).base, 'POST', '/payments', customer.token, body, key)),
    );

    const statuses = answers.map((a) => a.status).sort((a, b) => a - b);
    expect(statuses, JSON.stringify(answers.map((a) => a.body))).toEqual([...Array.from({ length: CONCURRENT - 1 }, () => 200), 201]);
    const created = answers.find((a) => a.status === 201);
    if (!created) throw new Error('no 201');
    for (const replay of answers.filter((a) => a.status === 200)) {
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toEqual(created.body);
      expect(replay.headers.get('location')).toBe(created.headers.get('location'));
      expect(replay.headers.get('etag')).toBe(created.headers.get('etag'));
    }
    const [rows] = await database.db.select({ n: count() }).from(payments).where(eq(payments.orderId, Number(order.body.id)));
    expect(rows?.n).toBe(1);
    const paid = await call(two.base, 'GET', `/orders/${String(order.body.id)}`, customer.token);
    expect(paid.body.status).toBe('paid');
  }, 60_000);
});
