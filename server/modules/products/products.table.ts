/**
 * The products table, beside its module (drizzle.config.ts reads every `<name>.table.ts`;
 * docs/architecture.md#adding-a-module).
 */
import { sql, type SQLWrapper } from 'drizzle-orm';
import { check, index, integer, pgTable, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { metadata, timestamps } from '../../db/columns.ts';

/**
 * What a product search (`q`, docs/api.md#product-search) reads: name, SKU and description in one
 * text, a line break between them (a search term has none, so it never spans two fields). The
 * list's condition and its trigram index are written with this same expression, as the planner
 * uses an expression index only for the expression it was built on.
 */
export const productSearchText = (t: { name: SQLWrapper; sku: SQLWrapper; description: SQLWrapper }) =>
  sql`(${t.name} || chr(10) || ${t.sku} || chr(10) || coalesce(${t.description}, ''))`;

export const products = pgTable(
  'products',
  {
    id: serial('id').primaryKey(),
    sku: text('sku').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    category: text('category').notNull(),
    price: integer('price').notNull(),
    currency: text('currency').notNull().default('USD'),
    stock: integer('stock').notNull().default(0),
    archivedAt: timestamp('archived_at', { withTimezone: true, precision: 3 }),
    metadata: metadata(),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('products_sku_key').on(t.sku),
    index('products_category_idx').on(t.category),
    // Filters (docs/api.md#product-search), over live products as the list reads them: a search
    // by pg_trgm (a case-insensitive substring is found by its trigrams: PostgreSQL's extension,
    // and PGlite's, loaded where it is created), a category or the out-of-stock few in id order.
    index('products_search_trgm_idx')
      .using('gin', sql`${productSearchText(t)} gin_trgm_ops`)
      .where(sql`${t.archivedAt} is null`),
    index('products_category_id_idx').on(t.category, t.id).where(sql`${t.archivedAt} is null`),
    index('products_out_of_stock_idx').on(t.id).where(sql`${t.archivedAt} is null and ${t.stock} = 0`),
    // The list's single-field sorts over live products (the list's own filter), each ending with id
    // ascending as the list does, so `-price` is `price desc, id asc`: an index per direction
    // (`desc` as ORDER BY means it, nulls first), which a page reads in order instead of sorting
    // the whole catalogue.
    ...(['name', 'price', 'createdAt'] as const).flatMap((field) => {
      const name = `products_${field === 'createdAt' ? 'created' : field}`;
      const live = sql`${t.archivedAt} is null`;
      return [index(`${name}_idx`).on(t[field], t.id).where(live), index(`${name}_desc_idx`).on(t[field].desc().nullsFirst(), t.id).where(live)];
    }),
    check('products_stock_nonnegative', sql`${t.stock} >= 0`),
    check('products_price_nonnegative', sql`${t.price} >= 0`),
  ],
);
