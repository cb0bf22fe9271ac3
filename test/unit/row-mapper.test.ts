/**
 * The statements' row mapper (server/db/statements.ts) against drizzle's own `mapResultRow`: the
 * same objects for the same driver rows, for every kind of selected field the services use (table
 * columns of each type, SQL expressions with and without a decoder, aliased SQL, nested objects),
 * null values included. The whole suite runs the real statements on both databases besides.
 */
import * as drizzleOrm from 'drizzle-orm';
import { count, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import { describe, expect, it } from 'vitest';
import { orders, payments, products } from '../../server/db/schema.ts';
import { rowMapper } from '../../server/db/statements.ts';

const db = drizzle.mock();

// drizzle's own row mapper: exported by the package, left out of its type declarations (internal).
const { mapResultRow } = drizzleOrm as unknown as {
  mapResultRow(fields: { path: string[]; field: unknown }[], row: unknown[], joinsNotNullableMap: Record<string, boolean> | undefined): Record<string, unknown>;
};

type Fields = { path: string[]; field: unknown }[];

/** What drizzle keeps on a prepared query (what statements.ts reads too). */
const preparedOf = (query: { prepare(name: string): unknown }) =>
  query.prepare('row_mapper_test') as { fields: Fields; joinsNotNullableMap?: Record<string, boolean> };
const fieldsOf = (query: { prepare(name: string): unknown }) => preparedOf(query).fields;

/** Our mapper for a query as statements.ts makes it, which must exist for these queries. */
const mapperOf = (fields: Fields, joinsNotNullableMap?: Record<string, boolean>) => {
  const mapper = rowMapper(fields, joinsNotNullableMap);
  if (mapper === undefined) throw new Error('no row mapper');
  return mapper;
};

/** Both mappers on the same rows, each given the query's join map as statements.ts passes it. */
const compare = (query: { prepare(name: string): unknown }, rows: unknown[][]) => {
  const { fields, joinsNotNullableMap } = preparedOf(query);
  const ours = mapperOf(fields, joinsNotNullableMap)(rows);
  const drizzles = rows.map((row) => mapResultRow(fields, row, joinsNotNullableMap));
  expect(ours).toEqual(drizzles);
  // The same keys in the same order: key order reaches the JSON the services build from rows.
  ours.forEach((object, i) => expect(Object.keys(object)).toEqual(Object.keys(drizzles[i] as object)));
  return ours;
};

describe('rowMapper', () => {
  it('maps table columns as drizzle does: integers, text, timestamps (with time zone), bigint numbers, nulls', () => {
    const query = db.select({ id: products.id, sku: products.sku, description: products.description, price: products.price, archivedAt: products.archivedAt, createdAt: products.createdAt }).from(products);
    const rows = [
      [7, 'SKU-7', 'A mug', 1999, null, '2026-11-25 08:29:18.123+00'],
      ['8', 'SKU-8', null, '250', '2026-01-31 12:00:00+00', '2026-01-31T12:00:00.000Z'],
    ];
    const [first] = compare(query, rows);
    expect(first?.createdAt).toBeInstanceOf(Date);
    expect((first?.createdAt as Date).toISOString()).toBe('2026-11-25T08:29:18.123Z');
    compare(db.select({ amount: payments.amount, orderId: payments.orderId }).from(payments), [
      ['123456789012', 3],
      [42, '4'],
    ]);
  });

  it('maps SQL expressions: with mapWith, without a decoder, aliased, and aggregate helpers', () => {
    const query = db
        .select({
          total: sql<number>`sum(${orders.id})`.mapWith(Number),
          raw: sql<string>`'x'`,
          named: sql<number>`1`.mapWith(Number).as('named'),
          n: count(),
        })
        .from(orders);
    compare(query, [
      ['15', 'x', '1', '3'],
      [null, null, null, '0'],
    ]);
  });

  it('nests objects along the selection paths, of one table or of tables a join never leaves missing', () => {
    const nested = db.select({ order: { id: orders.id, status: orders.status, updatedAt: orders.updatedAt }, lines: sql<number>`2`.mapWith(Number) }).from(orders);
    expect(fieldsOf(nested).some(({ path }) => path.length > 1)).toBe(true);
    compare(nested, [
      [1, 'paid', '2026-11-25 08:29:18.123+00', '2'],
      [2, 'draft', null, null],
    ]);
    const innerJoin = db.select({ order: { id: orders.id }, payment: { id: payments.id, amount: payments.amount } }).from(orders).innerJoin(payments, sql`${payments.orderId} = ${orders.id}`);
    compare(innerJoin, [[1, 5, '1999']]);
  });

  it('maps a flat left join, a missing side as nulls', () => {
    const flatJoin = db.select({ id: orders.id, amount: payments.amount }).from(orders).leftJoin(payments, sql`${payments.orderId} = ${orders.id}`);
    compare(flatJoin, [
      [1, '1999'],
      [2, null],
    ]);
  });

  it('maps no rows to no objects', () => {
    expect(mapperOf(fieldsOf(db.select({ id: products.id }).from(products)))([])).toEqual([]);
  });

  it("serves every selection but one nesting a left join's columns (drizzle nulls that object)", () => {
    const single = preparedOf(db.select({ id: products.id }).from(products));
    // drizzle names the selected table in the map even without a join.
    expect(single.joinsNotNullableMap).toBeDefined();
    expect(rowMapper(single.fields, single.joinsNotNullableMap)).toBeDefined();
    const nestedJoin = preparedOf(db.select({ order: orders, payment: payments }).from(orders).leftJoin(payments, sql`${payments.orderId} = ${orders.id}`));
    expect(rowMapper(nestedJoin.fields, nestedJoin.joinsNotNullableMap)).toBeUndefined();
  });
});
