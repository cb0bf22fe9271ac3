/**
 * `npm run demo`: the storefront and the admin console on one service, in one command
 * (docs/examples.md#the-demo). It packs the client once and installs it into both examples;
 * starts the service on PGlite in memory (nothing is kept: every demo starts from the same seed)
 * with both examples' origins allowed (CORS); seeds a catalogue, a customer and an admin, whose
 * generated passwords it prints once; registers both examples' OAuth clients; serves both with
 * Vite's dev server; and prints the three URLs. Ctrl-C (SIGINT) or SIGTERM stops the processes it
 * started, and nothing else, at any step (the packing's tsc and npm too), removes its temporary
 * directories, then exits; a process that ignores SIGTERM gets SIGKILL after 10 s or at a second
 * Ctrl-C (CommandProcesses in scripts/examples.ts).
 *
 *   npm run demo        # service http://127.0.0.1:3000, storefront :5173, admin console :5174
 *   PORT=3100 STOREFRONT_PORT=5273 ADMIN_CONSOLE_PORT=5274 npm run demo
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import {
  ADMIN_CONSOLE,
  adminToken,
  CommandProcesses,
  ensurePortFree,
  exampleOrigin,
  examplePort,
  generatedPassword,
  installExample,
  packClient,
  registerExampleClient,
  seedProducts,
  startDevServer,
  startService,
  STOREFRONT,
  waitFor,
  type Example,
} from './examples.ts';

const host = '127.0.0.1';
/** The line a script (test/browser/demo.test.ts) waits for: everything is up once it is printed. */
const READY_LINE = 'The demo is ready. Ctrl-C stops it.';

/** Each child's lines, prefixed with its name, so three processes' output can be told apart. */
function prefixed(child: ChildProcess, name: string): void {
  for (const stream of [child.stdout, child.stderr]) {
    if (stream) createInterface({ input: stream }).on('line', (line) => console.log(`[${name}] ${line}`));
  }
}

const processes = new CommandProcesses();
const stopping = (): boolean => processes.stopping;

/** Tracks a long-running child (the service, a dev server) and prints its lines under its name. */
function started(child: ChildProcess, name: string): ChildProcess {
  processes.add(child, name);
  prefixed(child, name);
  // One of the three ending on its own ends the demo: half a demo is a confusing one. On 'close',
  // not 'exit': its output has drained by then, so its own last line (why it ended) is printed.
  child.once('close', (code, signal) => {
    if (stopping()) return;
    console.error(`${name} ended (${signal ?? `exit ${code}`}); stopping the demo.`);
    processes.stop(1);
  });
  return child;
}

process.on('SIGINT', () => processes.stop(0));
process.on('SIGTERM', () => processes.stop(0));

/** A customer who signs up through the API (no token needed), as the storefront's sign-up page would. */
async function createCustomer(serviceUrl: string, customer: { email: string; name: string; password: string }): Promise<void> {
  const response = await fetch(`${serviceUrl}/api/v1/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(customer) });
  if (!response.ok) throw new Error(`creating the demo's customer failed: ${response.status} ${await response.text()}`);
}

async function main(): Promise<void> {
  const servicePort = Number(process.env.PORT ?? STOREFRONT.defaultServicePort);
  const examples: Example[] = [STOREFRONT, ADMIN_CONSOLE];
  // A busy port would stop the demo only after the packing: say so at once.
  await ensurePortFree(host, servicePort, 'PORT');
  for (const example of examples) await ensurePortFree(host, examplePort(example), example.portVariable);

  console.log('Packing @order-service/client once and installing it into both examples...');
  const packDir = processes.temporaryDirectory(mkdtempSync(join(tmpdir(), 'order-service-demo-')));
  try {
    const tarball = await packClient(packDir, processes);
    await Promise.all(examples.map((example) => installExample(example, tarball, processes)));
  } finally {
    processes.removeTemporary(packDir);
  }
  if (stopping()) return;

  console.log(`Starting the service on PGlite in memory at http://${host}:${servicePort}...`);
  const admin = { email: 'admin@example.com', password: generatedPassword() };
  const customer = { email: 'customer@example.com', name: 'Demo customer', password: generatedPassword() };
  const service = await startService({ host, port: servicePort, admin, stdio: 'pipe', onSpawn: (child) => started(child, 'service') });
  if (stopping()) return;
  const token = await adminToken(service.serviceUrl, admin.email, admin.password);
  const asAdmin = { serviceUrl: service.serviceUrl, token };
  await seedProducts(asAdmin);
  await createCustomer(service.serviceUrl, customer);

  const origins = new Map(examples.map((example) => [example, exampleOrigin(example, host)]));
  const servers: { origin: string; child: ChildProcess }[] = [];
  for (const [example, origin] of origins) {
    const clientId = await registerExampleClient(example, asAdmin, `${origin}/callback`);
    if (stopping()) return;
    const child = started(startDevServer(example, origin, { serviceUrl: service.serviceUrl, clientId }, 'pipe'), example === STOREFRONT ? 'storefront' : 'admin');
    servers.push({ origin, child });
  }
  await Promise.all(servers.map(({ origin, child }) => waitFor(origin, 600_000, child)));
  if (stopping()) return;

  console.log(
    [
      '',
      'order-service demo: one service, the storefront and the admin console (PGlite in memory: nothing is kept)',
      `  Service:        ${service.serviceUrl}  (API docs: ${service.serviceUrl}/api/docs)`,
      `  Storefront:     ${origins.get(STOREFRONT)}`,
      `  Admin console:  ${origins.get(ADMIN_CONSOLE)}`,
      `  Customer:       ${customer.email} / ${customer.password}  (sign in at the storefront, or create an account)`,
      `  Admin:          ${admin.email} / ${admin.password}  (sign in at the admin console)`,
      READY_LINE,
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  // Stopping aborts the step under way: its failure is the stop's, not news.
  if (stopping()) return;
  console.error(error instanceof Error ? error.message : error);
  processes.stop(1);
});
