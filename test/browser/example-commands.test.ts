/**
 * `npm run example:storefront` and `npm run example:admin` as docs/examples.md tells a person to
 * run them: both at once (each used to pack client-sdk itself, whose prepack empties and rebuilds
 * client-sdk/dist, and one crashed with `ENOENT client-sdk/dist/...`); then the admin console
 * pointed at the storefront's service with ORDER_SERVICE_URL and the TOKEN its banner printed
 * (that service allowed the storefront's origin only, so the console's "Sign in" did nothing on
 * screen: a CORS failure, shown only in the browser's console).
 *
 * Runs in the pglite project only: the commands run the service on PGlite in memory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { browserTestsRun as runs, launchChromium, WAIT, watch } from '../helpers/browser.ts';
import { freePort } from '../helpers/ports.ts';
import { collectLines, killTree, lineOf, withFreePorts } from '../helpers/process-tree.ts';

const root = resolve(import.meta.dirname, '../..');

interface Command {
  /** The last attempt's process and lines (a port taken meanwhile makes a new attempt). */
  child: ChildProcess;
  lines: string[];
  /** The ports it was started with, once it is up. */
  ports: number[];
  /** The app's origin, from its `The app: <origin>` line, once it answers. */
  app: Promise<string>;
}

const commands: Command[] = [];

/**
 * `npm run example:<name>`'s script, with its settings from `envOf` given `portCount` free ports;
 * started again on new ones if a port was taken between freePort() and its bind.
 */
function start(script: string, portCount: number, envOf: (ports: number[]) => NodeJS.ProcessEnv): Command {
  const command = { lines: [] as string[], ports: [] as number[] } as Command;
  commands.push(command);
  command.app = withFreePorts(portCount, async (ports) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...envOf(ports) } });
    const lines: string[] = [];
    Object.assign(command, { child, lines, ports });
    collectLines(child, lines);
    const line = await lineOf(child, lines, (l) => l.startsWith('The app: '));
    const origin = line.slice('The app: '.length).trim();
    // Vite's dev server starts after that line (a taken port ends the command: a new attempt). Generous: the machine may be loaded.
    await expect
      .poll(
        () => {
          if (child.exitCode !== null) throw new Error(`the command ended (${child.exitCode}):\n${lines.join('\n')}`);
          return fetch(origin).then((r) => r.ok, () => false);
        },
        { timeout: 600_000, interval: 500 },
      )
      .toBe(true);
    return origin;
  });
  return command;
}

/** SIGINT, as Ctrl-C sends it: resolves with the exit code. */
async function stop(command: Command): Promise<number | null> {
  if (command.child.exitCode !== null || command.child.signalCode !== null) return command.child.exitCode;
  const exited = new Promise<number | null>((done) => command.child.once('exit', (code) => done(code)));
  command.child.kill('SIGINT');
  return exited;
}

afterAll(() => {
  for (const command of commands) killTree(command.child as ChildProcess | undefined);
});

describe.skipIf(!runs)('the example commands, as docs/examples.md runs them', () => {
  let storefront: Command;
  let storefrontService: string;
  /** The console's port in the second test: the storefront's command reads ADMIN_CONSOLE_PORT as a person's shell would give both. */
  let laterConsolePort: number;

  it('example:storefront and example:admin started at the same time both come up (neither crashes packing the client)', { timeout: 900_000 }, async () => {
    laterConsolePort = await freePort();
    storefront = start('scripts/example-storefront.ts', 2, ([servicePort, shopPort]) => ({ PORT: String(servicePort), STOREFRONT_PORT: String(shopPort), ADMIN_CONSOLE_PORT: String(laterConsolePort) }));
    const admin = start('scripts/example-admin.ts', 2, ([adminServicePort, adminPort]) => ({ PORT: String(adminServicePort), ADMIN_CONSOLE_PORT: String(adminPort) }));
    const [shop, console] = await Promise.all([storefront.app, admin.app]);
    expect(shop).toBe(`http://127.0.0.1:${storefront.ports[1]}`);
    expect(console).toBe(`http://127.0.0.1:${admin.ports[1]}`);
    storefrontService = `http://127.0.0.1:${storefront.ports[0]}`;
    // Only one console at a time is needed from here on.
    expect(await stop(admin)).toBe(0);
  });

  it("the admin console pointed at the storefront's service with its banner's TOKEN signs in there", { timeout: 300_000 }, async () => {
    const token = storefront.lines.map((line) => /export TOKEN=(\S+)/.exec(line)?.[1]).find(Boolean);
    expect(token, storefront.lines.join('\n')).toBeDefined();
    const adminLine = storefront.lines.find((line) => line.includes("The shop's admin: ")) ?? '';
    const [, email = '', password = ''] = /The shop's admin: (\S+) \/ (\S+)/.exec(adminLine) ?? [];

    // Its port is the one the storefront's service allows (CORS): a new attempt would take it again.
    const console = start('scripts/example-admin.ts', 0, () => ({ ORDER_SERVICE_URL: storefrontService, TOKEN: token, ADMIN_CONSOLE_PORT: String(laterConsolePort) }));
    const origin = await console.app;

    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const problems = watch(page);
      await page.goto(origin);
      await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => url.origin === storefrontService && url.pathname === '/oauth/authorize', WAIT);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => url.origin === origin, WAIT);
      // Signed in, and reading the storefront's service: its sample products are there.
      await page.getByRole('button', { name: 'Sign out' }).waitFor(WAIT);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Products' }).click();
      await page.getByRole('link', { name: 'Kettle' }).waitFor(WAIT);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
    expect(await stop(console)).toBe(0);
    expect(await stop(storefront)).toBe(0);
  });
});
