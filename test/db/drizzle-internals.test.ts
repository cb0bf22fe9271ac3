/**
 * The tripwire of server/db/drizzle-internals.ts, our one reach into drizzle-orm's internals: a
 * query prepared on one handle and remade on a transaction's handle must answer what drizzle's
 * own `.prepare()` on that handle answers (mapped rows, the write's effect inside the
 * transaction), on both drivers; an upgrade that changes what the file reads fails here by name.
 */
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Db } from '../../server/db/client.ts';
import { transaction } from '../../server/db/unit-of-work.ts';
import { prepareOn, recipeOf, sessionOf, type PreparedQuery } from '../../server/db/drizzle-internals.ts';
import { products } from '../../server/modules/products/products.table.ts';
import { createTestDatabase } from '../helpers/db.ts';

let database: Database;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});

const selectById = (db: Db) =>
  db.select({ id: products.id, sku: products.sku, price: products.price, createdAt: products.createdAt }).from(products).where(eq(products.id, sql.placeholder('id')));
const insertOne = (db: Db) =>
  db.insert(products).values({ sku: sql.placeholder('sku'), name: 'Seam test', category: 'seam', price: 250, currency: 'USD', stock: 1 }).returning({ id: products.id });

describe('drizzle internals we rely on (server/db/drizzle-internals.ts)', () => {
  it('a query prepared on the pool, remade on a transaction, answers what drizzle prepares there', async () => {
    const { db } = database;
    const insertRecipe = recipeOf(insertOne(db).prepare('seam_insert'), 'seam_insert');
    const selectRecipe = recipeOf(selectById(db).prepare('seam_select'), 'seam_select');
    expect(selectRecipe.query.sql).toMatch(/select .* from "products"/i);

    await expect(
      transaction(db, async (tx) => {
        const [created] = (await prepareOn(sessionOf(tx), insertRecipe).execute({ sku: 'SEAM-1' })) as { id: number }[];
        expect(created?.id).toBeTypeOf('number');
        const ours = await prepareOn(sessionOf(tx), selectRecipe).execute({ id: created?.id });
        const theirs = await selectById(tx).prepare('seam_select_tx').execute({ id: created?.id });
        expect(ours).toEqual(theirs);
        expect(ours).toEqual([{ id: created?.id, sku: 'SEAM-1', price: 250, createdAt: expect.any(Date) }]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    // The remade insert ran in the transaction: rolled back with it.
    expect(await db.select({ id: products.id }).from(products).where(eq(products.sku, 'SEAM-1'))).toEqual([]);
  });

  it('a handle or a prepared query without what the file reads fails naming the seam', () => {
    expect(() => sessionOf({} as Db)).toThrow(/drizzle-orm's internals changed.*server\/db\/drizzle-internals\.ts/);
    expect(() => recipeOf({ execute: async () => [] } as PreparedQuery, 'x')).toThrow(/drizzle-orm's internals changed.*server\/db\/drizzle-internals\.ts/);
  });
});
