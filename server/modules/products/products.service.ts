import { and, eq, gte, ilike, isNull, lte, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { transaction, type UnitOfWork } from '../../db/unit-of-work.ts';
import { statement, statements } from '../../db/statements.ts';
import { products, productSearchText } from './products.table.ts';
import { DomainError } from '../../errors/problems.ts';
import { isUniqueViolation } from '../../errors/db-errors.ts';
import { parsePatched, patcherFor, type PatchLimits } from '../../lib/patch-documents.ts';
import { assertIfMatch } from '../../lib/preconditions.ts';
import type { Preconditions } from '../../trpc/context.ts';
import { iso, sameMetadata, type Page } from '../common.schemas.ts';
import { keyPlaceholders, keysetCondition, keysetOrder, keyValues, listPage, type CursorCodec, type PageRequest, type SortTerm } from '../paging.ts';
import { productEvents } from './products.events.ts';
import { PatchedProductDocument, Product, type ProductInput, type ProductListQuery, type ProductPatch, type ProductReplace } from './products.schemas.ts';

/** A product is a dozen members and at most 50 metadata pairs: far below these bounds (lib/patch-documents.ts). */
const PRODUCT_PATCH_LIMITS: PatchLimits = { operations: 200, nodes: 500, textChars: 64 * 1024, noun: 'product' };

/** The columns a product is read with: its representation, and whether it is archived. */
export const productColumns = {
  id: products.id,
  sku: products.sku,
  name: products.name,
  description: products.description,
  category: products.category,
  price: products.price,
  currency: products.currency,
  stock: products.stock,
  metadata: products.metadata,
  archivedAt: products.archivedAt,
  createdAt: products.createdAt,
  updatedAt: products.updatedAt,
};
type ProductRecord = Pick<typeof products.$inferSelect, keyof typeof productColumns>;

export function toProduct(row: ProductRecord): Product {
  return {
    id: row.id,
    sku: row.sku,
    name: row.name,
    description: row.description,
    category: row.category,
    price: row.price,
    currency: row.currency,
    stock: row.stock,
    metadata: row.metadata,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

const duplicateSku = (sku: string) =>
  new DomainError('duplicate-resource', `A product with sku "${sku}" already exists.`, {
    errors: [{ field: 'sku', message: 'already exists' }],
  });

const notFound = (id: number) => new DomainError('not-found', `Product ${id} does not exist.`);
const gone = (id: number) => new DomainError('gone', `Product ${id} was archived and is no longer available.`);

export async function createProduct({ db, work, input }: { db: Db; work?: UnitOfWork; input: ProductInput }): Promise<Product> {
  try {
    return await transaction(work ?? db, async (tx) => {
      const [row] = await tx
        .insert(products)
        .values({ ...input, description: input.description ?? null, metadata: input.metadata ?? {} })
        .returning(productColumns);
      if (!row) throw new Error('insert returned no row');
      const product = toProduct(row);
      await productEvents.record(tx, { type: 'product.created', object: product });
      return product;
    });
  } catch (error) {
    if (isUniqueViolation(error, 'products_sku_key')) throw duplicateSku(input.sku);
    throw error;
  }
}

const productById = statement('product_by_id', (db) =>
  db
    .select(productColumns)
    .from(products)
    .where(eq(products.id, sql.placeholder('id'))),
);

export async function getProduct({ db, id }: { db: Db; id: number }): Promise<Product> {
  const [row] = await productById(db, { id });
  if (!row) throw notFound(id);
  if (row.archivedAt) throw gone(id);
  return toProduct(row);
}

/** Each sort field: its column and its value in a cursor. */
const sortFields: Record<string, Omit<SortTerm<ProductRecord>, 'descending'>> = {
  name: { column: products.name, kind: 'text', read: (row) => row.name },
  price: { column: products.price, kind: 'integer', read: (row) => row.price },
  created_at: { column: products.createdAt, kind: 'instant', read: (row) => row.createdAt.toISOString() },
  id: { column: products.id, kind: 'integer', read: (row) => row.id },
};

/**
 * The sort as its distinct fields, first mention first: `name,-name,price` sorts as `name,price`
 * (a field sorted again changes no order). So the sorts, and the statements they make, are a
 * closed set, however long the parameter.
 */
function distinctSort(sort: string | undefined): string | undefined {
  if (sort === undefined) return undefined;
  const seen = new Set<string>();
  return sort
    .split(',')
    .filter((term) => {
      const field = term.replace('-', '');
      if (seen.has(field)) return false;
      seen.add(field);
      return true;
    })
    .join(',');
}

const termsBySort = new Map<string, SortTerm<ProductRecord>[]>();

/**
 * The order of a (distinct) sort, made total by the id (so pages never overlap or skip); made
 * once per sort (a closed set, like the statements).
 */
function sortTerms(sort: string | undefined): SortTerm<ProductRecord>[] {
  const key = sort ?? '';
  let terms = termsBySort.get(key);
  if (terms === undefined) {
    terms = orderOf(key);
    termsBySort.set(key, terms);
  }
  return terms;
}

function orderOf(sort: string): SortTerm<ProductRecord>[] {
  const terms = (sort || 'id').split(',').map((term) => {
    const descending = term.startsWith('-');
    const field = sortFields[descending ? term.slice(1) : term];
    if (field === undefined) throw new Error(`unknown sort field in ${term}`);
    return { ...field, descending };
  });
  if (!terms.some((term) => term.column === products.id)) terms.push({ ...(sortFields.id as Omit<SortTerm<ProductRecord>, 'descending'>), descending: false });
  return terms;
}

/** Which filters a list has: each present or not (`in_stock`: either way or not at all). */
interface FilterShape {
  q: boolean;
  category: boolean;
  priceGte: boolean;
  priceLte: boolean;
  inStock: 'any' | 'yes' | 'no';
}

const filterKey = (f: FilterShape): string => `${f.q ? 'q' : ''}${f.category ? 'c' : ''}${f.priceGte ? 'g' : ''}${f.priceLte ? 'l' : ''}-${f.inStock}`;

function parseFilterKey(key: string): FilterShape {
  const [present = '', inStock] = key.split('-') as [string, FilterShape['inStock']];
  return { q: present.includes('q'), category: present.includes('c'), priceGte: present.includes('g'), priceLte: present.includes('l'), inStock };
}

/**
 * One statement per shape: which filters (docs/api.md#product-search), each distinct sort (a
 * closed set), and from a page number or after or before a cursor's key. Values are bound;
 * `in_stock` is written into the statement (two cases), so its partial index applies.
 */
const productList = statements('product_list', (db, shape: string) => {
  const [filter, sort, direction] = shape.split(':') as [string, string, PageRequest['direction']];
  const terms = sortTerms(sort);
  const f = parseFilterKey(filter);
  const filters = [isNull(products.archivedAt)];
  if (f.q) filters.push(ilike(productSearchText(products), sql.placeholder('q')));
  if (f.category) filters.push(eq(products.category, sql.placeholder('category')));
  if (f.priceGte) filters.push(gte(products.price, sql.placeholder('priceGte')));
  if (f.priceLte) filters.push(lte(products.price, sql.placeholder('priceLte')));
  if (f.inStock !== 'any') filters.push(f.inStock === 'yes' ? sql`${products.stock} > 0` : sql`${products.stock} = 0`);
  if (direction !== 'first') filters.push(keysetCondition(terms, direction, keyPlaceholders(terms.length)));
  return db
    .select(productColumns)
    .from(products)
    .where(and(...filters))
    .orderBy(...keysetOrder(terms, direction, f.q ? unindexed : undefined))
    .limit(sql.placeholder('limit'))
    .offset(sql.placeholder('offset'));
});

/**
 * A search sorts by expressions no index holds (the same order: `id + 0` is `id`). The planner
 * estimates a substring's matches as if spread evenly, so with a plain order it walks the primary
 * key (or a sort's index) hoping to fill the page early, and reads the whole catalogue for a rare
 * text (220 ms at 100k products, docs/performance.md); this way it reads the trigram index's
 * matches and sorts those, costing what the search finds.
 */
function unindexed(term: SortTerm<ProductRecord>): SQL {
  if (term.kind === 'text') return sql`(${term.column} || '')`;
  if (term.kind === 'instant') return sql`(${term.column} + interval '0 seconds')`;
  return sql`(${term.column} + 0)`;
}

/** `q` as an ILIKE pattern that matches it as plain text anywhere: `%`, `_` and `\` stand for themselves. */
const containing = (q: string): string => `%${q.replace(/[\\%_]/g, '\\$&')}%`;

export async function listProducts({ db, query, cursors }: { db: Db; query: ProductListQuery; cursors: CursorCodec }): Promise<Page<Product>> {
  const sort = distinctSort(query.sort) ?? '';
  const terms = sortTerms(sort);
  const { q, category, price_gte: priceGte, price_lte: priceLte, in_stock: inStock } = query;
  // A cursor is good for the query that issued it: the same filters and sort. (Without the search
  // filters the binding is what it was before they came, so earlier cursors stay good.)
  const searched = [q, priceGte, priceLte, inStock].some((value) => value !== undefined);
  const binding = JSON.stringify(['products', category ?? null, sort, ...(searched ? [q ?? null, priceGte ?? null, priceLte ?? null, inStock ?? null] : [])]);
  const shape = filterKey({
    q: q !== undefined,
    category: category !== undefined,
    priceGte: priceGte !== undefined,
    priceLte: priceLte !== undefined,
    inStock: inStock === undefined ? 'any' : inStock ? 'yes' : 'no',
  });
  return listPage(
    { cursors, binding, terms, query },
    (page) =>
      productList(`${shape}:${sort}:${page.request.direction}`, db, {
        q: q === undefined ? undefined : containing(q),
        category,
        priceGte,
        priceLte,
        limit: page.limit,
        offset: page.offset,
        ...keyValues(page.request),
      }),
    toProduct,
  );
}

/** Locks the live product row for the rest of the transaction. */
async function lockLiveProduct(tx: UnitOfWork, id: number, preconditions: Preconditions): Promise<ProductRecord> {
  const [row] = await tx.select(productColumns).from(products).where(eq(products.id, id)).for('update');
  if (!row) throw notFound(id);
  if (row.archivedAt) throw gone(id);
  assertIfMatch(preconditions, Product, toProduct(row));
  return row;
}

/**
 * PUT and PATCH: `documentOf` gives the full writable document from the product as it is, read
 * under its lock (a PUT ignores it, a patch applies to it). Nothing changes when the document
 * says what is stored: no event, the same ETag.
 */
async function writeProduct(
  { db, id, preconditions }: { db: Db; id: number; preconditions: Preconditions },
  documentOf: (current: Product) => Omit<ProductReplace, 'id'>,
): Promise<Product> {
  let sku: string | undefined;
  try {
    return await transaction(db, async (tx) => {
      const current = await lockLiveProduct(tx, id, preconditions);
      const document = documentOf(toProduct(current));
      const { name, description, category, price, currency, stock } = document;
      sku = document.sku;
      // PUT replaces the metadata: omitted, it becomes empty.
      const metadata = document.metadata ?? {};
      const next = { sku, name, description: description ?? null, category, price, currency, stock };
      const unchanged = (Object.keys(next) as (keyof typeof next)[]).every((key) => current[key] === next[key]) && sameMetadata(current.metadata, metadata);
      if (unchanged) return toProduct(current);
      const [row] = await tx
        .update(products)
        .set({ ...next, metadata, updatedAt: new Date() })
        .where(eq(products.id, id))
        .returning(productColumns);
      if (!row) throw notFound(id);
      const product = toProduct(row);
      await productEvents.record(tx, { type: 'product.updated', object: product, previous: toProduct(current) });
      return product;
    });
  } catch (error) {
    if (sku !== undefined && isUniqueViolation(error, 'products_sku_key')) throw duplicateSku(sku);
    throw error;
  }
}

export function replaceProduct({ db, input, preconditions }: { db: Db; input: ProductReplace; preconditions: Preconditions }): Promise<Product> {
  return writeProduct({ db, id: input.id, preconditions }, () => input);
}

/** PATCH: the patch applies to the product's representation; the result must be a valid PUT body. */
export function patchProduct({ db, input, preconditions }: { db: Db; input: ProductPatch; preconditions: Preconditions }): Promise<Product> {
  const patch = patcherFor(input, PRODUCT_PATCH_LIMITS);
  return writeProduct({ db, id: input.id, preconditions }, (current) => parsePatched(PatchedProductDocument, patch(current)));
}

/** DELETE archives: orders keep referring to the product; reads answer 410, a second DELETE 404. */
export async function archiveProduct({ db, id, preconditions }: { db: Db; id: number; preconditions: Preconditions }): Promise<void> {
  await transaction(db, async (tx) => {
    const [row] = await tx.select(productColumns).from(products).where(eq(products.id, id)).for('update');
    if (!row || row.archivedAt) throw notFound(id);
    assertIfMatch(preconditions, Product, toProduct(row));
    await tx.update(products).set({ archivedAt: new Date() }).where(eq(products.id, id));
    await productEvents.record(tx, { type: 'product.archived', object: toProduct(row) });
  });
}
