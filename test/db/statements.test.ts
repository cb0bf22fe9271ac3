/**
 * Statements built once (server/db/statements.ts) against drizzle running the same query itself:
 * the same rows and results, on the pool and inside a transaction, and the same failure (drizzle's
 * DrizzleQueryError with the driver's error as its cause, which the error mapping reads), on
 * both databases.
 */
import { DrizzleQueryError, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../server/db/client.ts';
import { products } from '../../server/modules/products/products.table.ts';
import { statement } from '../../server/db/statements.ts';
import { isUniqueViolation } from '../../server/errors/db-errors.ts';
import { createTestDatabase } from '../helpers/db.ts';

let database: Database;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});

const productById = statement('statements_test_product', (db) =>
  db.select({ id: products.id, sku: products.sku, description: products.description, createdAt: products.createdAt }).from(products).where(eq(products.id, sql.placeholder('id'))),
);
const insertProduct = statement('statements_test_insert', (db) =>
  db.insert(products).values({
    sku: sql.placeholder('sku'),
    name: 'Statement test',
    category: 'test',
    price: sql.placeholder('price'),
    currency: 'USD',
    stock: 0,
  }),
);
const renameCategory = statement('statements_test_rename', (db) =>
  db.update(products).set({ category: sql`${sql.placeholder('to')}` }).where(eq(products.category, sql.placeholder('from'))),
);

describe('statement', () => {
  it('answers what drizzle answers for the same query: mapped rows, and a write without returning', async () => {
    const { db } = database;
    await insertProduct(db, { sku: 'STMT-1', price: 100 });
    await insertProduct(db, { sku: 'STMT-2', price: 200 });
    // A write's result (its row count: postgres.js `count`, PGlite `affectedRows`) as drizzle's own run gives it.
    const rowCount = (result: unknown) => (result as { count?: number }).count ?? (result as { affectedRows?: number }).affectedRows;
    expect(rowCount(await renameCategory(db, { from: 'test', to: 'tested' }))).toBe(2);
    expect(rowCount(await db.update(products).set({ category: 'test' }).where(eq(products.category, 'tested')))).toBe(2);
    const [row] = await db.select({ id: products.id }).from(products).where(eq(products.sku, 'STMT-1'));
    const ours = await productById(db, { id: row?.id });
    const theirs = await db.select({ id: products.id, sku: products.sku, description: products.description, createdAt: products.createdAt }).from(products).where(eq(products.id, row?.id ?? 0));
    expect(ours).toEqual(theirs);
    expect(Object.keys(ours[0] ?? {})).toEqual(['id', 'sku', 'description', 'createdAt']);
    expect(ours[0]?.createdAt).toBeInstanceOf(Date);
    expect(ours[0]?.description).toBeNull();
    expect(await productById(db, { id: -1 })).toEqual([]);
  });

  it('runs inside a transaction on its handle: what it writes is rolled back with it', async () => {
    const { db } = database;
    await expect(
      db.transaction(async (tx) => {
        await insertProduct(tx, { sku: 'STMT-TX', price: 300 });
        const seen = await tx.select({ id: products.id }).from(products).where(eq(products.sku, 'STMT-TX'));
        expect(seen).toHaveLength(1);
        await renameCategory(tx, { from: 'test', to: 'renamed' });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await db.select({ id: products.id }).from(products).where(eq(products.sku, 'STMT-TX'))).toEqual([]);
    expect(await db.select({ id: products.id }).from(products).where(eq(products.category, 'renamed'))).toEqual([]);
  });

  it('fails as drizzle fails: DrizzleQueryError, the driver error its cause (a duplicate SKU is a unique violation)', async () => {
    const { db } = database;
    await insertProduct(db, { sku: 'STMT-DUP', price: 1 });
    const failure = await insertProduct(db, { sku: 'STMT-DUP', price: 1 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(DrizzleQueryError);
    expect(isUniqueViolation(failure, 'products_sku_key')).toBe(true);
  });
});
