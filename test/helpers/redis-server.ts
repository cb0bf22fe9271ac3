/**
 * A redis-server of a test's own on a free loopback port, without persistence (Debian's package;
 * `npm test` installs it when missing and it may: scripts/ensure-test-tools.sh).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from './ports.ts';

export const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

export interface RedisServer {
  url: string;
  child: ChildProcess;
  /** SIGTERM, and waits for the process to exit (a second call does nothing). */
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;

export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), START_TIMEOUT_MS);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (/Ready to accept connections/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}) before it was ready:\n${output}`));
    });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
