/**
 * A start on a port another process holds (docs/operations.md#health-readiness-and-stopping): a
 * restart while the old instance is still draining used to die with Node's raw `EADDRINUSE` stack
 * (issue 36 item 16). It says so in one line naming the port and the variable, and exits 1.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceEnv, START_TIMEOUT_MS } from '../helpers/service-process.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The service under tsx with `extra` in its environment, until it exits: its exit code and output. */
async function runService(extra: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: ROOT,
    // In memory: the database plays no part, and nothing is left behind.
    env: serviceEnv({ url: 'memory://' }, extra),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), START_TIMEOUT_MS);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

describe('a start on a port in use (an instance still draining)', () => {
  let holder: Server;
  let busyPort: number;

  beforeAll(async () => {
    holder = createServer();
    holder.listen(0, '127.0.0.1');
    await once(holder, 'listening');
    const address = holder.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    busyPort = address.port;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => holder.close(() => resolve()));
  });

  it('PORT taken: one line naming the port, no stack, exit 1', { timeout: START_TIMEOUT_MS + 10_000 }, async () => {
    const { code, stdout, stderr } = await runService({ PORT: String(busyPort) });
    expect(code, stdout + stderr).toBe(1);
    const lines = stderr.trim().split('\n');
    expect(lines, stderr).toHaveLength(1);
    expect(lines[0]).toContain(`127.0.0.1:${busyPort}`);
    expect(lines[0]).toContain('PORT');
    expect(stderr + stdout).not.toMatch(/^\s+at /m);
    expect(stdout).not.toContain('Server listening');
  });

  it('METRICS_PORT taken: the same, naming METRICS_PORT', { timeout: START_TIMEOUT_MS + 10_000 }, async () => {
    const { code, stdout, stderr } = await runService({ METRICS_PORT: String(busyPort) });
    expect(code, stdout + stderr).toBe(1);
    const lines = stderr.trim().split('\n');
    expect(lines, stderr).toHaveLength(1);
    expect(lines[0]).toContain(`127.0.0.1:${busyPort}`);
    expect(lines[0]).toContain('METRICS_PORT');
    expect(stderr + stdout).not.toMatch(/^\s+at /m);
  });
});
