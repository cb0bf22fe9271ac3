/**
 * Third parties generate their client from `/api/openapi.json` with tools written by others.
 * This test does what they do: it generates clients from the live document with
 * openapi-typescript (types for openapi-fetch) and @hey-api/openapi-ts (an SDK) into a temporary
 * project outside this repository, type-checks a consumer with `tsc` (strict; every
 * `@ts-expect-error` must meet an error), and runs it against the listening service.
 *
 * The consumer patches an order by merge patch and by JSON Patch without casts, reads the health
 * check, reads a 304, narrows a 409's `allowed`, and does not compile with a wrong field type.
 * @hey-api/openapi-ts types an operation's body from one media type (hey-api/hey-api#2311): its
 * `ordersPatch` takes the merge patch, and a JSON Patch goes through its typed client with the
 * generated `JsonPatch` type.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createClient } from '@hey-api/openapi-ts';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const tsx = join(root, 'node_modules/tsx/dist/cli.mjs');

const tsconfig = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2022', 'DOM', 'DOM.Iterable'],
    types: [],
    strict: true,
    noUncheckedIndexedAccess: true,
    noEmit: true,
    skipLibCheck: true,
  },
  include: ['*.ts', 'generated/**/*.ts'],
};

/** A third party's code. Types come from the generated files only; no cast anywhere. */
const consumer = String.raw`
import createFetchClient from 'openapi-fetch';
import type { components, paths } from './generated/openapi-typescript/api.js';
import { client as heyClient } from './generated/hey-api/client.gen.js';
import { health, ordersCreate, ordersPatch, productsCreate, productsGet } from './generated/hey-api/sdk.gen.js';
import type { JsonPatch, OrderStatus, OrdersPatchErrors, OrdersPatchResponses } from './generated/hey-api/types.gen.js';

declare const process: { env: Record<string, string | undefined>; stdout: { write(text: string): void } };
const origin = process.env.SERVICE_ORIGIN ?? 'http://127.0.0.1:3000';
const admin = { Authorization: 'Bearer ' + (process.env.ADMIN_TOKEN ?? '') };
const customer = { Authorization: 'Bearer ' + (process.env.CUSTOMER_TOKEN ?? '') };

// openapi-fetch with openapi-typescript's paths: the base URL is the origin, the paths are whole.
const api = createFetchClient<paths>({ baseUrl: origin });
const MERGE = { 'Content-Type': 'application/merge-patch+json' } as const;
const JSON_PATCH = { 'Content-Type': 'application/json-patch+json' } as const;

type Status = components['schemas']['OrderStatus'];

async function withOpenapiFetch(productId: number): Promise<Record<string, unknown>> {
  const health = await api.GET('/api/health');
  const status: 'ok' | 'degraded' | 'unavailable' | undefined = health.data?.status;

  const created = await api.POST('/api/v1/orders', { body: { items: [{ product_id: productId, quantity: 2 }] }, headers: customer });
  const id = created.data?.id ?? 0;
  const merged = await api.PATCH('/api/v1/orders/{id}', {
    params: { path: { id } },
    body: { address: '2 Side St', discount_code: null },
    headers: { ...customer, ...MERGE },
  });
  const patched = await api.PATCH('/api/v1/orders/{id}', {
    params: { path: { id } },
    body: [
      { op: 'test', path: '/status', value: 'draft' },
      { op: 'replace', path: '/items/0/quantity', value: 3 },
      { op: 'copy', from: '/address', path: '/address' },
    ],
    headers: { ...customer, ...JSON_PATCH },
  });
  const total: number | undefined = patched.data?.total;

  // The list's metadata filter is a deepObject parameter: openapi-fetch sends metadata[erp_id]=...
  await api.PATCH('/api/v1/orders/{id}', { params: { path: { id } }, body: { metadata: { erp_id: 'ERP-GEN' } }, headers: { ...customer, ...MERGE } });
  const listed = await api.GET('/api/v1/orders', { params: { query: { metadata: { erp_id: 'ERP-GEN' }, sort: '-total' } }, headers: customer });
  const filtered = { code: listed.response.status, onlyThisOrder: listed.data?.data.map((order) => order.id).join() === String(id) };

  // A move the state machine refuses: 409 invalid-state-transition, narrowed by its type.
  const refused = await api.PATCH('/api/v1/orders/{id}', { params: { path: { id } }, body: { status: 'shipped' }, headers: { ...customer, ...MERGE } });
  let allowed: Status[] = [];
  if (refused.error?.type === '/problems/invalid-state-transition') allowed = refused.error.allowed;

  // A conditional read: 304 has no body, only the current ETag.
  const first = await api.GET('/api/v1/products/{id}', { params: { path: { id: productId } } });
  const etag = first.response.headers.get('etag') ?? '';
  const again = await api.GET('/api/v1/products/{id}', { params: { path: { id: productId }, header: { 'If-None-Match': etag } } });
  const notModified = again.response.status === 304 ? { status: 304, etag: again.response.headers.get('etag'), data: again.data ?? null } : { status: again.response.status };

  return { health: { code: health.response.status, status }, merged: { code: merged.response.status, address: merged.data?.address }, patched: { code: patched.response.status, total }, filtered, refused: { code: refused.response.status, allowed }, notModified };
}

async function withHeyApi(productId: number): Promise<Record<string, unknown>> {
  heyClient.setConfig({ baseUrl: origin });
  const checked = await health();
  const created = await ordersCreate({ body: { items: [{ product_id: productId, quantity: 1 }] }, headers: customer });
  const id = created.data?.id ?? 0;
  // The SDK's body is the merge patch (hey-api types one media type per operation)...
  const merged = await ordersPatch({ path: { id }, body: { address: '5 Oak St' }, headers: customer });
  // ...and a JSON Patch goes through the same typed client with the generated JsonPatch type.
  const operations: JsonPatch = [{ op: 'replace', path: '/address', value: '6 Elm St' }, { op: 'remove', path: '/discount_code' }];
  const patched = await heyClient.patch<OrdersPatchResponses, OrdersPatchErrors>({
    url: '/api/v1/orders/{id}',
    path: { id },
    body: operations,
    headers: { ...customer, ...JSON_PATCH },
  });
  const refused = await ordersPatch({ path: { id }, body: { status: 'completed' }, headers: customer });
  let allowed: OrderStatus[] = [];
  if (refused.error?.type === '/problems/invalid-state-transition') allowed = refused.error.allowed;
  const first = await productsGet({ path: { id: productId } });
  const again = await productsGet({ path: { id: productId }, headers: { 'If-None-Match': first.response.headers.get('etag') ?? '' } });
  return {
    health: { code: checked.response.status, status: checked.data?.status },
    merged: { code: merged.response.status, address: merged.data?.address },
    patched: { code: patched.response.status, address: patched.data?.address },
    refused: { code: refused.response.status, allowed },
    notModified: { status: again.response.status },
  };
}

/** Never called: each line must fail to compile. */
export async function wrongCalls(id: number): Promise<void> {
  // @ts-expect-error quantity is an integer, not a string
  await api.PATCH('/api/v1/orders/{id}', { params: { path: { id } }, body: { items: [{ product_id: 1, quantity: 'two' }] } });
  // @ts-expect-error a JSON Patch move needs from
  const moveWithoutFrom: components['schemas']['JsonPatch'] = [{ op: 'move', path: '/address' }];
  // @ts-expect-error there is no such operation as rename
  const unknownOp: JsonPatch = [{ op: 'rename', path: '/address', value: 'x' }];
  // @ts-expect-error a price is an integer, not a string
  await productsCreate({ body: { sku: 'A-1', name: 'Mug', category: 'kitchen', price: '9.00' } });
  // @ts-expect-error the order is named by an integer id
  await ordersPatch({ path: { id: 'seventeen' }, body: {} });
  // @ts-expect-error the health check is /api/health, not under /api/v1
  await api.GET('/api/v1/health');
  void unknownOp;
  void moveWithoutFrom;
}

const productId = Number(process.env.PRODUCT_ID);
const result = { openapiFetch: await withOpenapiFetch(productId), heyApi: await withHeyApi(productId) };
process.stdout.write(JSON.stringify(result));
`;

// The clients do not depend on the database: generate and check them once, in the PGlite project.
describe.skipIf(process.env.TEST_DB === 'postgres')('clients generated from /api/openapi.json by third-party tools', () => {
  let t: TestApp;
  let dir: string;
  let origin: string;

  beforeAll(async () => {
    t = await createTestApp();
    origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const served = await t.request({ method: 'GET', url: '/api/openapi.json' });
    expect(served.statusCode).toBe(200);

    dir = mkdtempSync(join(tmpdir(), 'generated-clients-'));
    mkdirSync(join(dir, 'generated/openapi-typescript'), { recursive: true });
    const input = join(dir, 'openapi.json');
    writeFileSync(input, served.body);
    // The project's packages (openapi-fetch, its types) without installing anything.
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'generated-clients-consumer', private: true, type: 'module' }));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
    writeFileSync(join(dir, 'consumer.ts'), consumer);

    const ast = await openapiTS(JSON.parse(served.body) as Parameters<typeof openapiTS>[0], { silent: true });
    writeFileSync(join(dir, 'generated/openapi-typescript/api.ts'), astToString(ast));
    await createClient({ input, output: join(dir, 'generated/hey-api'), logs: { level: 'silent', file: false } });
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('type-checks the consumer: no cast needed, and a wrong field type does not compile', async () => {
    const result = await run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: dir }).catch((error: { stdout?: string; stderr?: string }) => error);
    expect(`${result.stdout ?? ''}${result.stderr ?? ''}`).toBe('');
  }, 120_000);

  it('runs the consumer against the service: both clients call every path right and read what the document promises', async () => {
    const customer = await t.createUser();
    const product = await t.request({
      method: 'POST',
      url: '/api/v1/products',
      token: t.admin.token,
      payload: { sku: `GEN-${Date.now()}`, name: 'Mug', category: 'kitchen', price: 900, stock: 50 },
    });
    expect(product.statusCode, product.body).toBe(201);
    const { stdout } = await run(process.execPath, [tsx, join(dir, 'consumer.ts')], {
      cwd: dir,
      env: {
        ...process.env,
        SERVICE_ORIGIN: origin,
        ADMIN_TOKEN: t.admin.token,
        CUSTOMER_TOKEN: customer.token,
        PRODUCT_ID: String(product.json<{ id: number }>().id),
      },
    });
    const answer = JSON.parse(stdout) as Record<'openapiFetch' | 'heyApi', Record<string, Record<string, unknown>>>;
    expect(answer.openapiFetch).toEqual({
      health: { code: 200, status: 'ok' },
      merged: { code: 200, address: '2 Side St' },
      patched: { code: 200, total: 2700 },
      filtered: { code: 200, onlyThisOrder: true },
      refused: { code: 409, allowed: ['confirmed', 'cancelled'] },
      notModified: { status: 304, etag: expect.stringMatching(/^"/), data: null },
    });
    expect(answer.heyApi).toEqual({
      health: { code: 200, status: 'ok' },
      merged: { code: 200, address: '5 Oak St' },
      patched: { code: 200, address: '6 Elm St' },
      refused: { code: 409, allowed: ['confirmed', 'cancelled'] },
      notModified: { status: 304 },
    });
  }, 120_000);
});
