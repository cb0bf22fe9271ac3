/**
 * `npm run demo` (scripts/demo.ts) stopped or failing before it is ready: a SIGTERM while it packs
 * the client leaves no process and no temporary directory behind (it used to exit at once, leaving
 * tsc or npm running and examples/.client-build-* and the pack directory on disk), and a service
 * that dies at start has its own one-line reason printed (the demo exited on the service's 'exit',
 * before its stderr had drained, and said only "service ended (exit 1)").
 *
 * Runs in the pglite project only, beside the demo's other tests (test/browser/demo.test.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { browserTestsRun as runs } from '../helpers/browser.ts';
import { collectLines, descendants, killTree, lineOf, running, withFreePorts } from '../helpers/process-tree.ts';

const root = resolve(import.meta.dirname, '../..');
const PACKING = 'Packing @order-service/client once and installing it into both examples...';

const started: ChildProcess[] = [];
const cleanUp: (() => void)[] = [];

afterAll(() => {
  for (const child of started) killTree(child);
  for (const step of cleanUp) step();
});

/** The demo on these ports, with a TMPDIR of its own (its pack directory goes there), until its packing line. */
async function demoPacking(tmp: string): Promise<{ demo: ChildProcess; lines: string[]; port: number }> {
  return withFreePorts(3, async ([port = 0, storefrontPort, adminPort]) => {
    const lines: string[] = [];
    const demo = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TMPDIR: tmp, PORT: String(port), STOREFRONT_PORT: String(storefrontPort), ADMIN_CONSOLE_PORT: String(adminPort) },
    });
    started.push(demo);
    collectLines(demo, lines);
    await lineOf(demo, lines, (line) => line === PACKING);
    return { demo, lines, port };
  });
}

const exitOf = (child: ChildProcess) =>
  new Promise<number | null>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) done(child.exitCode);
    else child.once('exit', (code) => done(code));
  });

/** Where a process runs (its working directory), or undefined once it has ended. */
function cwdOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return undefined;
  }
}

function privateTmp(): string {
  const tmp = mkdtempSync(join(tmpdir(), 'demo-stop-test-'));
  cleanUp.push(() => rmSync(tmp, { recursive: true, force: true }));
  return tmp;
}

/** The demo's own temporary directories in `tmp` (tsx keeps its cache there too). */
const packDirectories = (tmp: string) => readdirSync(tmp).filter((name) => name.startsWith('order-service-demo-'));

describe.skipIf(!runs)('npm run demo stopped or failing before it is ready', () => {
  it('SIGTERM while it packs the client ends tsc and npm and removes its temporary directories (regression: it exited at once, leaving them)', { timeout: 600_000 }, async () => {
    const tmp = privateTmp();
    const { demo, lines } = await demoPacking(tmp);
    const pid = demo.pid ?? -1;
    // The packing's step under way: tsc or npm pack, working in the client's build copy.
    let buildCopy: string | undefined;
    await expect
      .poll(
        () => {
          buildCopy = descendants(pid)
            .map(cwdOf)
            .find((cwd) => cwd?.includes('/examples/.client-build-'));
          return buildCopy;
        },
        { timeout: 300_000, interval: 50 },
      )
      .toBeDefined();
    expect(packDirectories(tmp)).toHaveLength(1);
    const under = descendants(pid);
    expect(under.length).toBeGreaterThan(0);

    demo.kill('SIGTERM');
    expect(await exitOf(demo), lines.join('\n')).toBe(0);
    await expect.poll(() => under.filter(running), { timeout: 60_000 }).toEqual([]);
    expect(existsSync(buildCopy ?? ''), buildCopy).toBe(false);
    expect(packDirectories(tmp)).toEqual([]);
  });

  it("a service that dies at start has its own reason printed (regression: only 'service ended (exit 1)')", { timeout: 600_000 }, async () => {
    const { demo, lines, port } = await demoPacking(privateTmp());
    // Taken after the demo checked it, as another program may: the service cannot listen.
    const squatter: Server = createServer();
    await new Promise<void>((done, fail) => {
      squatter.once('error', fail);
      squatter.listen(port, '127.0.0.1', done);
    });
    cleanUp.push(() => squatter.close());
    const code = await exitOf(demo);
    // The child's lines are read until its pipes close, which may be after its exit event.
    await expect.poll(() => lines.some((line) => line.startsWith('[service] Cannot listen on')), { timeout: 30_000 }).toBe(true);
    expect(code, lines.join('\n')).toBe(1);
    expect(lines.find((line) => line.startsWith('[service] '))).toBe(`[service] Cannot listen on 127.0.0.1:${port} (PORT): the address is in use by another process, perhaps an instance still draining; stop it or wait for it, or set PORT.`);
  });
});
