/**
 * The service as its own process (`node --import tsx server/main.ts`, or the bundle `npm start`
 * runs), for the checks an in-process app cannot
 * make: several instances on one database, and a process killed with SIGKILL and restarted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { inject } from 'vitest';
import { TEST_JWT } from './app.ts';
import { dropDatabase, withDatabase } from './postgres-url.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Each start compiles the service with tsx: seconds, more on a busy machine. */
export const START_TIMEOUT_MS = 90_000;

export interface Service {
  child: ChildProcess;
  /** `http://127.0.0.1:<port>`, the port the service chose (PORT=0). */
  base: string;
  /** Everything it wrote to stdout and stderr so far (for failure messages). */
  output: () => string;
}

/**
 * The environment of a service process: the test JWT settings (so tokens the test mints are
 * accepted), any port, a rate limit no test reaches, no shutdown delay, and `database`
 * (DATABASE_URL or DATA_DIR).
 */
export function serviceEnv(database: { url: string } | { dataDir: string }, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    JWT_SECRET: TEST_JWT.secret,
    JWT_ISSUER: TEST_JWT.issuer,
    JWT_AUDIENCE: TEST_JWT.audience,
    RATE_LIMIT_MAX: '100000',
    LOG_LEVEL: 'info',
    // No load balancer to warn: SIGTERM drains at once.
    SHUTDOWN_DELAY_MS: '0',
    ...extra,
  };
  // An inherited DATABASE_URL would win over DATA_DIR: a PGlite service must not see one.
  if ('url' in database) env.DATABASE_URL = database.url;
  else {
    delete env.DATABASE_URL;
    env.DATA_DIR = database.dataDir;
  }
  return env;
}

/**
 * Starts the service and resolves once it listens (PORT=0: the port it logs). `node --import tsx`,
 * not the `tsx` binary: that one runs the service in a second node process, which a SIGKILL of
 * the first would leave running.
 */
export async function startService(env: NodeJS.ProcessEnv, command: { flags: string[]; bundle: string } | undefined = undefined): Promise<Service> {
  // `command`: a built bundle as `npm start` runs it, instead of the sources under tsx.
  const args = command ? [...command.flags, command.bundle] : ['--import', 'tsx', 'server/main.ts'];
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
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

const exited = (service: Service): boolean => service.child.exitCode !== null || service.child.signalCode !== null;

/** SIGTERM: the graceful stop (in-flight requests finish, the database closes). */
export async function stopService(service: Service): Promise<void> {
  if (exited(service)) return;
  const done = once(service.child, 'exit');
  service.child.kill('SIGTERM');
  await done;
}

/**
 * SIGKILL: the process ends where it is, nothing of it runs any more (no shutdown hook, no
 * rollback it sends itself); its database connections just drop.
 */
export async function killService(service: Service): Promise<void> {
  if (exited(service)) return;
  const done = once(service.child, 'exit');
  service.child.kill('SIGKILL');
  await done;
}

/** A copy of the migrated template database of this run (the global setup); `drop()` removes it. */
export async function createPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) throw new Error('TEST_DATABASE_URL is not set');
  const template = inject('postgresTemplate');
  const name = `${template}_${randomBytes(6).toString('hex')}`;
  const setup = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await setup.unsafe(`create database ${name} template ${template}`);
  await setup.end();
  return {
    url: withDatabase(serverUrl, name),
    drop: async () => {
      await dropDatabase(serverUrl, name);
    },
  };
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** One JSON request to a service process's REST API (`/api/v1` + `path`). */
export async function callService(base: string, method: string, path: string, token: string, body?: unknown, key?: string): Promise<HttpAnswer> {
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
}
