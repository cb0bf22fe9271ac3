/**
 * Debian's nginx in front of service processes, with the repository's own configuration
 * (deploy/nginx.conf, the file docs/operations.md shows): its instance addresses and its listening
 * port replaced by a test's, inside an `http` block of the test's own, in a directory of its own
 * (`npm test` installs nginx when missing and it may: scripts/ensure-test-tools.sh).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { until } from './waits.ts';

/** The repository's nginx configuration. */
export const NGINX_CONF = fileURLToPath(new URL('../../deploy/nginx.conf', import.meta.url));

/** Debian installs it in /usr/sbin, which an unprivileged user's PATH may lack. */
const binary = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';
export const hasNginx = spawnSync(binary, ['-v']).status === 0;

const START_TIMEOUT_MS = 30_000;

/** One line of the access log (the test's own format, beside the repository's configuration). */
export interface AccessLogEntry {
  /** The X-Test-Id request header, which a test sets to find its requests. */
  testId: string;
  method: string;
  uri: string;
  status: number;
  /** Every instance nginx tried, in order (`127.0.0.1:port`). */
  upstreams: string[];
  /** The status each of them gave (nginx writes 502 for a connection it could not make or lost). */
  upstreamStatuses: string[];
  requestId: string;
  /** When nginx logged it, in seconds since the epoch (milliseconds in the fraction). */
  msec: number;
}

export interface Nginx {
  /** `http://127.0.0.1:<port>` */
  base: string;
  child: ChildProcess;
  accessLog(): AccessLogEntry[];
  errorLog(): string;
  /** Fast shutdown (SIGTERM), then the directory goes. A second call does nothing. */
  stop(): Promise<void>;
}

/**
 * deploy/nginx.conf with `instances` in place of its three example addresses and `port` in place of
 * `listen 80`; throws when the file no longer has exactly those (so the test and the docs cannot
 * drift apart unnoticed).
 */
export function nginxConfigFor(instances: string[], port: number): string {
  let text = readFileSync(NGINX_CONF, 'utf8');
  const examples = ['127.0.0.1:3001', '127.0.0.1:3002', '127.0.0.1:3003'];
  if (instances.length !== examples.length) throw new Error(`deploy/nginx.conf names ${examples.length} instances`);
  const replaceOnce = (from: string, to: string) => {
    const found = text.split(from).length - 1;
    if (found !== 1) throw new Error(`deploy/nginx.conf: expected "${from}" once, found it ${found} times`);
    text = text.replace(from, to);
  };
  examples.forEach((example, i) => replaceOnce(`server ${example} `, `server ${instances[i] ?? ''} `));
  replaceOnce('listen 80;', `listen 127.0.0.1:${port};`);
  return text;
}

export async function startNginx(options: { instances: string[]; port: number }): Promise<Nginx> {
  const dir = mkdtempSync(join(tmpdir(), 'order-service-nginx-'));
  for (const temp of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, temp));
  writeFileSync(join(dir, 'order-service.conf'), nginxConfigFor(options.instances, options.port));
  const logFormat = [
    `"testId":"$http_x_test_id"`,
    `"method":"$request_method"`,
    `"uri":"$request_uri"`,
    `"status":"$status"`,
    `"upstreams":"$upstream_addr"`,
    `"upstreamStatuses":"$upstream_status"`,
    `"requestId":"$request_id"`,
    `"msec":"$msec"`,
  ].join(',');
  // One process (no master, no workers): it runs as the user who starts it, root or not.
  writeFileSync(
    join(dir, 'nginx.conf'),
    `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
events { worker_connections 1024; }
http {
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  log_format test escape=json '{${logFormat}}';
  access_log ${dir}/access.log test;
  include ${dir}/order-service.conf;
}
`,
  );
  const child = spawn(binary, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const read = (file: string) => (existsSync(join(dir, file)) ? readFileSync(join(dir, file), 'utf8') : '');
  await waitForPort(options.port, child, () => `${output}${read('error.log')}`);
  let stopped = false;
  return {
    base: `http://127.0.0.1:${options.port}`,
    child,
    accessLog: () =>
      read('access.log')
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const raw = JSON.parse(line) as Record<string, string>;
          const list = (value: string | undefined) => (value ? value.split(/\s*,\s*|\s+:\s+/).filter((part) => part !== '' && part !== '-') : []);
          return {
            testId: raw.testId ?? '',
            method: raw.method ?? '',
            uri: raw.uri ?? '',
            status: Number(raw.status),
            upstreams: list(raw.upstreams),
            upstreamStatuses: list(raw.upstreamStatuses),
            requestId: raw.requestId ?? '',
            msec: Number(raw.msec),
          };
        }),
    errorLog: () => read('error.log'),
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves once something accepts connections on `port`; rejects if nginx exits first. */
async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  await until(
    `nginx to listen on ${port}`,
    async () => {
      if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}) before it listened:\n${output()}`);
      return new Promise<boolean>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        socket.once('connect', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      });
    },
    { timeoutMs: START_TIMEOUT_MS, intervalMs: 50 },
  ).catch((error: unknown) => {
    throw error instanceof Error && error.message.startsWith('nginx exited') ? error : new Error(`nginx did not listen on ${port}:\n${output()}`);
  });
}
