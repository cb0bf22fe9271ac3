/**
 * The exported test harness (server/testing.ts): procedures called without HTTP, as a developer
 * would in a vitest test. Same auth and rules as over HTTP; failures are TRPCErrors whose cause
 * is the DomainError naming the problem.
 */
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { products } from '../../server/modules/products/products.table.ts';
import { createTestCaller, createTestHarness, type TestHarness } from '../../server/testing.ts';
import { createTestDatabase, onPostgres } from '../helpers/db.ts';
import { expectDomainError as rejection } from '../helpers/problems.ts';

const product = (overrides: Partial<{ sku: string; category: string; price: number; stock: number }> = {}) => ({
  sku: `H-${randomBytes(4).toString('hex')}`,
  name: 'Mug',
  category: 'kitchen',
  price: 900,
  stock: 5,
  ...overrides,
});

describe('a harness shares one database between callers of different roles', () => {
  let harness: TestHarness;

  beforeAll(async () => {
    // On the postgres project the harness runs on that server's per-file database instead.
    harness = await createTestHarness(onPostgres ? { database: await createTestDatabase() } : {});
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('an admin creates a product that an anonymous caller then reads and lists', async () => {
    const category = `cat-${randomBytes(3).toString('hex')}`;
    const created = await harness.caller({ role: 'admin' }).products.create(product({ category }));
    expect(created).toMatchObject({ category, price: 900, stock: 5, currency: 'USD' });

    const anonymous = harness.caller(null);
    expect(await anonymous.products.get({ id: created.id })).toEqual(created);
    const page = await anonymous.products.list({ category });
    expect(page.data.map((p) => p.id)).toEqual([created.id]);
  });

  it('a customer may not create a product: FORBIDDEN, cause forbidden', async () => {
    await rejection(harness.caller({ role: 'customer', userId: 2 }).products.create(product()), 'FORBIDDEN', 'forbidden');
  });

  it('an anonymous caller of an authenticated procedure: UNAUTHORIZED, cause unauthorized', async () => {
    await rejection(harness.caller(null).orders.list({}), 'UNAUTHORIZED', 'unauthorized');
  });

  it('a service caller acts by its scopes', async () => {
    const created = await harness.caller({ role: 'service', scopes: ['products:write'] }).products.create(product());
    expect(created.id).toBeGreaterThan(0);
    await rejection(harness.caller({ role: 'service', scopes: ['orders:read'] }).products.create(product()), 'FORBIDDEN', 'insufficient-scope');
  });

  it('invalid input is UNPROCESSABLE_CONTENT whose cause names each field', async () => {
    const domain = await rejection(
      harness.caller({ role: 'admin' }).products.create(product({ sku: '', price: -5 })),
      'UNPROCESSABLE_CONTENT',
      'validation-error',
    );
    expect(domain.errors?.map((e) => e.field).sort()).toEqual(['price', 'sku']);
  });

  it('createUser makes a real customer whose caller orders for itself, unseen by another customer', async () => {
    const mug = await harness.caller({ role: 'admin' }).products.create(product({ stock: 10 }));
    const { user, caller: ada } = await harness.createUser({ name: 'Ada' });
    expect(user).toMatchObject({ name: 'Ada', role: 'customer' });

    const order = await ada.orders.create({ items: [{ product_id: mug.id, quantity: 2 }] });
    expect(order).toMatchObject({ customer_id: user.id, status: 'draft', total: 1800 });
    expect(await ada.orders.get({ id: order.id })).toEqual(order);

    const { caller: bob } = await harness.createUser();
    await rejection(bob.orders.get({ id: order.id }), 'NOT_FOUND', 'not-found');
  });

  it('createUser makes an admin when asked', async () => {
    const { user, caller } = await harness.createUser({ role: 'admin' });
    expect(user.role).toBe('admin');
    const page = await caller.users.list({ limit: 100 });
    expect(page.data.map((u) => u.id)).toContain(user.id);
  });

  it('preconditions stand in for If-Match: a stale one is PRECONDITION_FAILED', async () => {
    const admin = harness.caller({ role: 'admin' });
    const created = await admin.products.create(product());
    const stale = harness.caller({ role: 'admin' }, { preconditions: { ifMatch: ['"stale"'] } });
    await rejection(stale.products.delete({ id: created.id }), 'PRECONDITION_FAILED', 'precondition-failed');
  });

  it('db gives the test direct access to the same rows', async () => {
    const created = await harness.caller({ role: 'admin' }).products.create(product());
    const [row] = await harness.db.select({ sku: products.sku }).from(products).where(eq(products.id, created.id));
    expect(row?.sku).toBe(created.sku);
  });
});

// These open in-memory PGlite databases whatever the project: once is enough.
describe.skipIf(onPostgres)('createTestCaller and close', () => {
  it('createTestCaller gives one caller on a fresh in-memory database, and its harness', async () => {
    const { caller, harness } = await createTestCaller({ role: 'admin' });
    try {
      expect(harness.database.kind).toBe('pglite');
      expect((await caller.products.list({})).data).toEqual([]);
      const created = await caller.products.create(product());
      expect(await harness.caller(null).products.get({ id: created.id })).toEqual(created);
    } finally {
      await harness.close();
    }
  });

  it('close() closes the database', async () => {
    const harness = await createTestHarness();
    expect(await harness.database.ping()).toBe(true);
    await harness.close();
    expect(await harness.database.ping()).toBe(false);
  });
});
