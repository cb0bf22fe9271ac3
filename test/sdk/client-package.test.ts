/**
 * The published client as a front end gets it: `npm pack` of client-sdk (which builds it),
 * installed from the tarball into a fresh project outside this repository, type-checked by
 * `tsc` (wrong inputs must not compile), then run against a listening service.
 *
 * Runs in the pglite project only: the package, not the database, is under test, and packing,
 * installing and compiling twice would only slow CI down.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERSON_SCOPES } from '../../server/auth/policy.ts';
import { createTestApp, TEST_PASSWORD, type TestApp } from '../helpers/app.ts';
import { insertClient } from '../helpers/oauth.ts';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const sdkDir = join(root, 'client-sdk');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const versionOf = (name: string): string => (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
const trpcVersion = (JSON.parse(readFileSync(join(root, 'node_modules/@trpc/client/package.json'), 'utf8')) as { version: string }).version;
const sdkManifest = JSON.parse(readFileSync(join(sdkDir, 'package.json'), 'utf8')) as { name: string; version: string };
/** The file `npm pack` names the package: `@order-service/client` 0.1.0 is order-service-client-0.1.0.tgz. */
const packedFileName = (): string => `${sdkManifest.name.replace(/^@/, '').replace('/', '-')}-${sdkManifest.version}.tgz`;

/** A front end's code: every `@ts-expect-error` must meet an error, or tsc fails. */
const consumerSource = String.raw`
import {
  clientCredentials,
  createOrderServiceClient,
  idempotent,
  isProblem,
  memoryTokenStore,
  OrderServiceError,
  refreshingToken,
  sessionStorageTokenStore,
  SignInError,
  signInWithPassword,
  startSignIn,
  TokenRefreshError,
  type Problem,
  type RouterInputs,
  type RouterOutputs,
} from '@order-service/client';
import type { components, paths } from '@order-service/client/rest';
import { EventSource } from 'eventsource';

type NewProduct = paths['/api/v1/products']['post']['requestBody']['content']['application/json'];
type OrderStatus = RouterOutputs['orders']['get']['status'];

declare const process: { env: Record<string, string | undefined> };
const url = process.env.ORDER_SERVICE_URL ?? '';
const token = process.env.ORDER_SERVICE_TOKEN ?? '';

let requests = 0;
/** The Idempotent-Replayed header of every answer, in order. */
const replayed: (string | null)[] = [];
const countingFetch: typeof fetch = async (input, init) => {
  requests += 1;
  const response = await fetch(input, init);
  replayed.push(response.headers.get('idempotent-replayed'));
  return response;
};
const admin = createOrderServiceClient({ url, getToken: async () => token, fetch: countingFetch });
const anonymous = createOrderServiceClient({ url, fetch: countingFetch });

/** Never called: each line must fail to compile. */
export async function wrongInputs(): Promise<void> {
  // @ts-expect-error price is an integer of minor units, not a string
  await admin.products.create.mutate({ sku: 'A-1', name: 'Mug', category: 'kitchen', price: '9.00' });
  // @ts-expect-error sku is required
  await admin.products.create.mutate({ name: 'Mug', category: 'kitchen', price: 900 });
  // @ts-expect-error no such procedure
  await admin.products.destroy.mutate({ id: 1 });
  // @ts-expect-error create is a mutation, not a query
  await admin.products.create.query({ sku: 'A-1', name: 'Mug', category: 'kitchen', price: 900 });
  // @ts-expect-error an order item names product_id and quantity
  await admin.orders.create.mutate({ items: [{ product: 1, quantity: 1 }] });
  // @ts-expect-error an idempotency key is a string
  await admin.products.create.mutate({ sku: 'A-1', name: 'Mug', category: 'kitchen', price: 900 }, idempotent(42));
  // @ts-expect-error token and getToken exclude each other
  createOrderServiceClient({ url, token, getToken: () => token });
  // @ts-expect-error a scope is a list of scope names
  await signInWithPassword({ url, clientId: 'app', username: 'a@example.com', password: 'x', scope: 'orders:read' });
  // @ts-expect-error the browser flow needs the redirect URI registered with the client
  await startSignIn({ url, clientId: 'app' });
  // A browser app's whole sign-in state, kept across the redirect (compiles; not run here: no sessionStorage in Node).
  const browserStore = sessionStorageTokenStore();
  createOrderServiceClient({ url, getToken: refreshingToken({ url, clientId: 'app', store: browserStore }) });
  const product = await anonymous.products.get.query({ id: 1 });
  // @ts-expect-error outputs are typed: price is a number
  const price: string = product.price;
  // @ts-expect-error REST types: a product's body has no such field
  const body: NewProduct = { sku: 'A-1', name: 'Mug', category: 'kitchen', price: 900, colour: 'red' };
  void price;
  void body;
  // @ts-expect-error a JSON Patch move names where from
  await admin.orders.patch.mutate({ id: 1, format: 'json-patch', document: [{ op: 'move', path: '/address' }] });
  // @ts-expect-error a subscription's order_id is a number
  admin.orders.onChange.subscribe({ order_id: '1' }, {});
  // @ts-expect-error a merge patch's quantity is an integer
  await admin.orders.patch.mutate({ id: 1, format: 'merge-patch', document: { items: [{ product_id: 1, quantity: 'two' }] } });
  try {
    await admin.orders.get.query({ id: 1 });
  } catch (error) {
    if (isProblem(error, 'not-found')) {
      // @ts-expect-error a not-found problem carries no allowed list
      const allowed: OrderStatus[] = error.problem.allowed;
      void allowed;
    }
  }
}

const input: RouterInputs['products']['create'] = { sku: 'SDK-' + Date.now(), name: 'Mug', category: 'kitchen-sdk', price: 900, stock: 3 };
const created: RouterOutputs['products']['create'] = await admin.products.create.mutate(input);

// Two queries made together travel in one request (httpBatchLink).
const before = requests;
const [list, one] = await Promise.all([
  anonymous.products.list.query({ category: 'kitchen-sdk' }),
  anonymous.products.get.query({ id: created.id }),
]);
const batchedRequests = requests - before;

async function problemOf(call: () => Promise<unknown>): Promise<{ problem: Problem; instance: boolean; status: number; code: string | undefined } | string> {
  try {
    await call();
    return 'no error';
  } catch (error) {
    if (!isProblem(error)) return 'not a problem: ' + String(error);
    return { problem: error.problem, instance: error instanceof OrderServiceError, status: error.status, code: error.data?.code };
  }
}

// A front end's burst: 50 order reads and 50 product lists at once (the client splits them into
// batches the service accepts; batches of ten once failed on the server's path length limit).
const adminId = Number(process.env.ORDER_SERVICE_ADMIN_ID);
const order = await admin.orders.create.mutate({ customer_id: adminId, items: [{ product_id: created.id, quantity: 1 }] });
const beforeBurst = requests;
const burst = await Promise.allSettled([
  ...Array.from({ length: 50 }, () => admin.orders.get.query({ id: order.id })),
  ...Array.from({ length: 50 }, () => anonymous.products.list.query({ category: 'kitchen-sdk' })),
]);
const burstResult = {
  fulfilled: burst.filter((r) => r.status === 'fulfilled').length,
  rejected: burst.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : [])).slice(0, 3),
  requests: requests - beforeBurst,
};

const invalid = await problemOf(() => admin.products.create.mutate({ sku: '', name: 'Mug', category: 'kitchen', price: -5 }));
const anonymousWrite = await problemOf(() => anonymous.products.create.mutate({ sku: 'A-2', name: 'Mug', category: 'kitchen', price: 900 }));
const restProduct: components['schemas']['Product'] = created;

// A retried creation with one idempotency key: one product, the retry answered from the first.
const key = 'sdk-' + Date.now();
const kettle = { sku: 'SDK-K-' + Date.now(), name: 'Kettle', category: 'kitchen-sdk-keyed', price: 2500 };
const firstKeyed = await admin.products.create.mutate(kettle, idempotent(key));
const firstReplayed = replayed.at(-1);
const retried = await admin.products.create.mutate(kettle, idempotent(key));
const retryReplayed = replayed.at(-1);
// Keyed calls made together each travel alone (never batched under one key).
const beforeKeyedPair = requests;
const keyedPair = await Promise.all([admin.products.create.mutate(kettle, idempotent(key)), admin.products.create.mutate(kettle, idempotent(key))]);
const keyedPairRequests = requests - beforeKeyedPair;
const keyedList = await anonymous.products.list.query({ category: 'kitchen-sdk-keyed' });
const mismatch = await problemOf(() => admin.products.create.mutate({ ...kettle, price: 2600 }, idempotent(key)));
const idempotency = {
  ids: [firstKeyed.id, retried.id, ...keyedPair.map((p) => p.id)],
  firstReplayed,
  retryReplayed,
  keyedPairRequests,
  listed: keyedList.data.length,
  mismatch,
};

// List queries need no input at all.
const everything = await anonymous.products.list.query();

// Patch documents are typed both ways; a refused move narrows to its allowed statuses.
const draft = await admin.orders.create.mutate({ customer_id: adminId, items: [{ product_id: created.id, quantity: 1 }] });
const merged = await admin.orders.patch.mutate({ id: draft.id, format: 'merge-patch', document: { address: '2 Side St', discount_code: null } });
const patched = await admin.orders.patch.mutate({
  id: draft.id,
  format: 'json-patch',
  document: [
    { op: 'test', path: '/status', value: 'draft' },
    { op: 'replace', path: '/items/0/quantity', value: 2 },
  ],
});
let allowed: OrderStatus[] = [];
let current: OrderStatus | undefined;
try {
  await admin.orders.patch.mutate({ id: draft.id, format: 'merge-patch', document: { status: 'shipped' } });
} catch (error) {
  if (isProblem(error, 'invalid-state-transition')) {
    allowed = error.problem.allowed;
    current = error.problem.current_status;
  }
}
const typed = { everything: everything.page, merged: merged.address, patched: patched.total === created.price * 2, allowed, current };

// Signing in with the password grant (a first-party app), then calling with the stored sign-in;
// a wrong password is a SignInError.
const store = memoryTokenStore();
const signInOptions = { url, clientId: process.env.ORDER_SERVICE_CLIENT_ID ?? '', store };
const signedIn = await signInWithPassword({ ...signInOptions, username: process.env.ORDER_SERVICE_ADMIN_EMAIL ?? '', password: process.env.ORDER_SERVICE_ADMIN_PASSWORD ?? '' });
const asSignedIn = createOrderServiceClient({ url, getToken: refreshingToken(signInOptions), fetch: countingFetch });
const ownOrders = await asSignedIn.orders.list.query();
const wrongPassword = await signInWithPassword({ ...signInOptions, username: 'nobody@example.com', password: 'wrong' }).catch((error: unknown) => error);
const signIn = {
  scope: signedIn.scope,
  listed: Array.isArray(ownOrders.data),
  wrong: wrongPassword instanceof SignInError ? wrongPassword.error : String(wrongPassword),
  refreshErrorIsClientError: new TokenRefreshError(400, 'invalid_grant') instanceof Error,
};

// Live updates through the packed client (the eventsource package as its EventSource): an order's
// events after the last one seen, then the live ones; an anonymous subscription is a problem.
const watching = createOrderServiceClient({ url, getToken: async () => token, EventSource });
const watched = await admin.orders.create.mutate({ customer_id: adminId, items: [{ product_id: created.id, quantity: 1 }], address: '1 Main St' });
const [watchedCreated] = (await admin.events.listForOrder.query({ id: watched.id })).data;
async function heardUntil(stopType: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const types: string[] = [];
    const timer = setTimeout(() => reject(new Error('no ' + stopType + ' within 30 s: ' + types.join(','))), 30_000);
    const subscription = watching.orders.onChange.subscribe(
      { order_id: watched.id, ...(watchedCreated ? { lastEventId: watchedCreated.id } : {}) },
      {
        onData: ({ id, data }) => {
          const event: RouterOutputs['events']['get'] = data;
          types.push(event.type + (id === event.id ? '' : ' (id differs)'));
          if (event.type !== stopType) return;
          clearTimeout(timer);
          subscription.unsubscribe();
          resolve(types);
        },
        onError: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      },
    );
  });
}
const heard = heardUntil('order.confirmed');
await admin.orders.confirm.mutate({ id: watched.id });
const anonymousLive = await new Promise<string>((resolve) => {
  const subscription = createOrderServiceClient({ url, EventSource }).orders.onChange.subscribe(undefined, {
    onError: (error) => {
      subscription.unsubscribe();
      resolve(isProblem(error, 'unauthorized') ? error.problem.type : 'not a problem: ' + String(error));
    },
  });
});
const noEventSource = await new Promise<string>((resolve) => {
  createOrderServiceClient({ url, token }).orders.onChange.subscribe(undefined, { onError: (error) => resolve(String(error.message)) });
});
const live = { heard: await heard, anonymousLive, noEventSource };

// A back end as itself: client credentials of a confidential client, the token kept between calls.
const backEndToken = clientCredentials({ url, clientId: process.env.ORDER_SERVICE_BACKEND_ID ?? '', clientSecret: process.env.ORDER_SERVICE_BACKEND_SECRET ?? '' });
const backEnd = createOrderServiceClient({ url, getToken: backEndToken });
const backEndOrders = await backEnd.orders.list.query();
const backEndClaims = JSON.parse(atob((await backEndToken()).split('.')[1]?.replace(/-/g, '+').replace(/_/g, '/') ?? '')) as { role: string };
const service = { listed: backEndOrders.data.length > 0, role: backEndClaims.role };

console.log(JSON.stringify({ service, live, signIn, created, listed: list.data.map((p) => p.sku), one, batchedRequests, burstResult, invalid, anonymousWrite, restProduct, idempotency, typed }));
`;

const consumerConfig = (moduleResolution: 'NodeNext' | 'Bundler') => ({
  compilerOptions: {
    target: 'ES2022',
    module: moduleResolution === 'NodeNext' ? 'NodeNext' : 'ESNext',
    moduleResolution,
    // tRPC's own declarations name Disposable (TypeScript's esnext.disposable library).
    lib: ['ES2022', 'DOM', 'ESNext.Disposable'],
    types: [],
    strict: true,
    // The strictest settings a front end may use: a custom fetch must still need no cast.
    exactOptionalPropertyTypes: true,
    // Check the package's declarations too, not only the consumer.
    skipLibCheck: false,
    ...(moduleResolution === 'NodeNext' ? { outDir: 'out' } : { noEmit: true }),
  },
  files: ['consumer.ts'],
});

/** The README's TypeScript examples, each a module of its own. */
const readmeExamples = [...readFileSync(join(sdkDir, 'README.md'), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => `${match[1]}\nexport {};\n`);

/** What the README's examples take from the app around them (its own state and UI). */
const readmeAppGlobals = `
declare const client: import('@order-service/client').OrderServiceClient;
declare const url: string;
declare const clientId: string;
declare const redirectUri: string;
declare const token: string;
declare const accessToken: string;
declare const email: string;
declare const password: string;
declare const clientSecret: string;
declare const id: number;
declare const order_id: number;
declare const amount: number;
declare const form: import('@order-service/client').RouterInputs['products']['create'];
declare function showFieldError(field: string, message: string): void;
declare function showError(message: string | undefined): void;
declare function signIn(): void;
declare function askForScope(scope: string): void;
`;

/** Every module specifier in the installed package's files. */
function specifiers(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !/\.(js|d\.ts)$/.test(entry.name)) continue;
    const text = readFileSync(join(entry.parentPath, entry.name), 'utf8');
    for (const match of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"]([^'"]+)['"]/g)) found.push(match[1] as string);
  }
  return found;
}

describe('the client package manifest', () => {
  it('pins @trpc/client and its @trpc/server peer to the one version @trpc/client itself requires', () => {
    const manifest = JSON.parse(readFileSync(join(sdkDir, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
    };
    const client = JSON.parse(readFileSync(join(root, 'node_modules/@trpc/client/package.json'), 'utf8')) as {
      version: string;
      peerDependencies: Record<string, string>;
    };
    expect(manifest.dependencies['@trpc/client']).toBe(client.version);
    expect(manifest.peerDependencies['@trpc/server']).toBe(client.peerDependencies['@trpc/server']);
  });
});

/**
 * Each tsc run of a consumer takes seconds alone and over a minute on a loaded 2-core machine (the
 * whole suite beside it, the storefront's own tsc and chromium included): a bound no passing run meets.
 */
const TSC_TIMEOUT_MS = 180_000;

describe.skipIf(process.env.TEST_DB === 'postgres')('the packed @order-service/client, installed in a fresh project', () => {
  let project: string;
  let packedFiles: string[];
  /** Where `npm run client:pack` wrote the package. */
  let tarball: string;

  beforeAll(async () => {
    project = mkdtempSync(join(tmpdir(), 'order-service-client-'));
    // As the README says to: `npm run client:pack` (npm pack of client-sdk, whose prepack builds
    // dist: router types from the server, compile, self-containment check) writes the tarball
    // into client-sdk/, and the front end depends on it there.
    const { stdout } = await run('npm', ['run', '--silent', 'client:pack', '--', '--json'], { cwd: root, maxBuffer: 16 << 20 });
    // The build's own lines come first; npm's JSON report starts at a line of its own.
    const [packed] = JSON.parse(stdout.slice(stdout.search(/^\[\s*$/m))) as { filename: string; files: { path: string }[] }[];
    if (!packed) throw new Error(`npm pack printed no package: ${stdout}`);
    packedFiles = packed.files.map((f) => f.path).sort();
    tarball = join(sdkDir, packed.filename);

    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({
        name: 'consumer',
        private: true,
        type: 'module',
        dependencies: {
          // What `npm install <the tarball's path>` records.
          [sdkManifest.name]: `file:${tarball}`,
          '@trpc/client': trpcVersion,
          '@trpc/server': trpcVersion,
          // What the README's examples import beside the package.
          'openapi-fetch': versionOf('openapi-fetch'),
          '@opentelemetry/api': versionOf('@opentelemetry/api'),
          // The EventSource subscriptions take in Node (the README's example too).
          eventsource: versionOf('eventsource'),
        },
      }),
    );
    // Peers are listed above; --legacy-peer-deps keeps npm from adding TypeScript as tRPC's peer.
    await run('npm', ['install', '--prefer-offline', '--legacy-peer-deps', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: project,
    });
    writeFileSync(join(project, 'consumer.ts'), consumerSource);
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(consumerConfig('NodeNext')));
    writeFileSync(join(project, 'tsconfig.bundler.json'), JSON.stringify(consumerConfig('Bundler')));
    readmeExamples.forEach((example, index) => writeFileSync(join(project, `readme-${index}.ts`), example));
    writeFileSync(join(project, 'app-globals.d.ts'), readmeAppGlobals);
    const readmeConfig = consumerConfig('Bundler');
    writeFileSync(
      join(project, 'tsconfig.readme.json'),
      JSON.stringify({ ...readmeConfig, files: ['app-globals.d.ts', ...readmeExamples.map((_, index) => `readme-${index}.ts`)] }),
    );
  }, 600_000);

  afterAll(() => {
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it("the README's first lines say how to install it today (issue 36 item 10: not on the registry): the tarball `npm run client:pack` writes, with its tRPC pair", () => {
    const readme = readFileSync(join(sdkDir, 'README.md'), 'utf8');
    const beforeFirstSection = readme.slice(0, readme.indexOf('\n## '));
    const install = /```sh\n([\s\S]*?)```/.exec(beforeFirstSection)?.[1] ?? '';
    expect(install).toMatch(/^npm run client:pack\b/m);
    const tarballInstall = new RegExp(`^npm install \\S*client-sdk/${packedFileName().replace(/\./g, '\\.')} @trpc/client@${trpcVersion} @trpc/server@${trpcVersion}$`, 'm');
    expect(install).toMatch(tarballInstall);
    expect(existsSync(tarball)).toBe(true);
  });

  it('is ready to publish: `npm publish --dry-run` passes, with public access, and would send the built files', async () => {
    // dist was just built by the pack above; CI runs it with the build (.ci/run).
    const { stdout, stderr } = await run('npm', ['publish', '--dry-run', '--ignore-scripts', '--json'], { cwd: sdkDir, maxBuffer: 16 << 20 });
    const report = (JSON.parse(stdout) as Record<string, { files: { path: string }[] }>)[sdkManifest.name];
    expect(report?.files.map((f) => f.path)).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'README.md', 'package.json']));
    // A scoped package is published restricted (paid, private) unless its manifest says public.
    expect(stderr).toMatch(/with tag latest and public access \(dry-run\)/);
  });

  it('ships only the built files, its README and its manifest', () => {
    expect(packedFiles).toContain('dist/index.js');
    expect(packedFiles).toContain('dist/index.d.ts');
    expect(packedFiles).toContain('dist/app-router.d.ts');
    expect(packedFiles).toContain('dist/rest-types.d.ts');
    expect(packedFiles).toContain('README.md');
    expect(packedFiles.filter((f) => !f.startsWith('dist/'))).toEqual(['README.md', 'package.json']);
  });

  it('imports nothing but @trpc/client, @trpc/server and oauth4webapi: no path into the server', () => {
    const installed = join(project, 'node_modules', sdkManifest.name, 'dist');
    const external = specifiers(installed).filter((s) => !s.startsWith('./'));
    expect(new Set(external)).toEqual(new Set(['@trpc/client', '@trpc/server', '@trpc/server/observable', 'oauth4webapi']));
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules', sdkManifest.name, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(Object.keys(manifest.dependencies as object).sort()).toEqual(['@trpc/client', 'oauth4webapi']);
  });

  it('type-checks a consumer with tsc, and wrong inputs do not compile (NodeNext and bundler resolution)', async () => {
    for (const config of ['tsconfig.json', 'tsconfig.bundler.json']) {
      const result = await run(process.execPath, [tsc, '-p', config], { cwd: project }).catch((error: { stdout: string }) => error);
      expect(result.stdout, `tsc -p ${config}`).toBe('');
    }
  }, TSC_TIMEOUT_MS);

  it("the README's TypeScript examples compile against the package as written (strict, exactOptionalPropertyTypes)", async () => {
    expect(readmeExamples.length).toBeGreaterThanOrEqual(10);
    const result = await run(process.execPath, [tsc, '-p', 'tsconfig.readme.json'], { cwd: project }).catch((error: { stdout: string }) => error);
    expect(result.stdout).toBe('');
  }, TSC_TIMEOUT_MS);

  describe('against a listening service', () => {
    let service: TestApp;
    let output: Record<string, unknown>;

    beforeAll(async () => {
      service = await createTestApp();
      const address = await service.app.listen({ port: 0, host: '127.0.0.1' });
      const app = await insertClient(service.db);
      const backEnd = await insertClient(service.db, { confidential: true, firstParty: false, grantTypes: ['client_credentials'], redirectUris: [] });
      const { stdout } = await run(process.execPath, [join('out', 'consumer.js')], {
        cwd: project,
        env: {
          PATH: process.env.PATH,
          ORDER_SERVICE_URL: address,
          ORDER_SERVICE_TOKEN: service.admin.token,
          ORDER_SERVICE_ADMIN_ID: String(service.admin.id),
          ORDER_SERVICE_CLIENT_ID: app.client.client_id,
          ORDER_SERVICE_BACKEND_ID: backEnd.client.client_id,
          ORDER_SERVICE_BACKEND_SECRET: backEnd.secret,
          ORDER_SERVICE_ADMIN_EMAIL: service.admin.email,
          ORDER_SERVICE_ADMIN_PASSWORD: TEST_PASSWORD,
        },
      });
      output = JSON.parse(stdout) as Record<string, unknown>;
    }, 300_000);

    afterAll(async () => {
      await service?.close();
    });

    it('subscribes to orders.onChange (eventsource as its EventSource): the events after the last one seen, then the live confirmation; anonymous is 401; without an EventSource it says what to pass', () => {
      expect(output.live).toEqual({
        heard: ['order.confirmed'],
        anonymousLive: '/problems/unauthorized',
        noEventSource: expect.stringContaining('Subscriptions need an EventSource class') as unknown,
      });
    });

    it('calls as a back end with clientCredentials (a confidential client): a service token, orders listed', () => {
      expect(output.service).toEqual({ listed: true, role: 'service' });
    });

    it('signs in with the password grant (asking for the customer scopes by default), calls with the stored sign-in; a wrong password is a SignInError', () => {
      expect(output.signIn).toEqual({ scope: PERSON_SCOPES.customer.join(' '), listed: true, wrong: 'invalid_grant', refreshErrorIsClientError: true });
    });

    it('creates a product as an admin and reads it back, two queries in one request', () => {
      const created = output.created as { id: number; sku: string; price: number };
      expect(created).toMatchObject({ name: 'Mug', category: 'kitchen-sdk', price: 900, stock: 3, currency: 'USD' });
      expect(output.listed).toEqual([created.sku]);
      expect(output.one).toEqual(created);
      expect(output.batchedRequests).toBe(1);
    });

    it('answers 100 parallel calls (50 order reads, 50 product lists), batched in requests the service accepts', () => {
      const burst = output.burstResult as { fulfilled: number; rejected: string[]; requests: number };
      expect(burst.rejected).toEqual([]);
      expect(burst.fulfilled).toBe(100);
      // Batched, not one request per call: at most 50 calls travel in one request.
      expect(burst.requests).toBeGreaterThanOrEqual(2);
      expect(burst.requests).toBeLessThan(20);
    });

    it('receives invalid input as an OrderServiceError carrying the 422 problem', () => {
      expect(output.invalid).toMatchObject({
        instance: true,
        status: 422,
        code: 'UNPROCESSABLE_CONTENT',
        problem: { type: '/problems/validation-error', status: 422, title: 'Validation failed' },
      });
      const fields = (output.invalid as { problem: { errors: { field: string }[] } }).problem.errors.map((e) => e.field);
      expect(fields.sort()).toEqual(['price', 'sku']);
    });

    it('idempotent(key): a retried creation answers the first result (same id, Idempotent-Replayed: true), once in the database; keyed calls are never batched; another input is 422', () => {
      const idempotency = output.idempotency as { ids: number[]; firstReplayed: string | null; retryReplayed: string | null; keyedPairRequests: number; listed: number; mismatch: unknown };
      expect(new Set(idempotency.ids).size).toBe(1);
      expect(idempotency.firstReplayed).toBeNull();
      expect(idempotency.retryReplayed).toBe('true');
      expect(idempotency.keyedPairRequests).toBe(2);
      expect(idempotency.listed).toBe(1);
      expect(idempotency.mismatch).toMatchObject({ instance: true, status: 422, problem: { type: '/problems/idempotency-key-mismatch' } });
    });

    it('receives a write without a token as a 401 problem', () => {
      expect(output.anonymousWrite).toMatchObject({ instance: true, status: 401, problem: { type: '/problems/unauthorized' } });
    });

    it('lists without an input, patches with typed documents both ways, and narrows a refused move to its allowed statuses', () => {
      expect(output.typed).toEqual({ everything: 1, merged: '2 Side St', patched: true, allowed: ['confirmed', 'cancelled'], current: 'draft' });
    });
  });
});
