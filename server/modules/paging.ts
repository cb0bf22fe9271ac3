/**
 * Keyset pagination for every list: a list's order is a total order of sort terms ending in a
 * unique column, and a cursor names a position in it (the sort key of a row), so the next page is
 * "the rows after this key", which an index answers in the same time on page 1 and page 50,000,
 * and which neither repeats nor skips a row when rows are inserted between two requests (paging
 * by offset does both). `page`/`limit` stay accepted (docs/api.md#lists-and-paging): a page by number is still read by
 * offset, and its answer carries cursors onwards.
 *
 * A cursor is opaque to clients, signed and read by server/lib/cursors.ts.
 */
import { and, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { AnyPgColumn, PgSelect } from 'drizzle-orm/pg-core';
import { DomainError } from '../errors/problems.ts';
import { MAX_PAGE, type CursorCodec, type CursorDirection, type KeyKind, type KeyValue } from '../lib/cursors.ts';
import type { Page } from './common.schemas.ts';

export type { CursorCodec };

/** One term of a list's order; the last term of every list is a unique column. */
export interface SortTerm<Row> {
  column: AnyPgColumn;
  kind: KeyKind;
  descending: boolean;
  read: (row: Row) => KeyValue;
}

/**
 * Newest first: `createdAt` descending, then a unique column descending (`kind`, read by `read`)
 * breaking ties, so pages never overlap. The order of every list but users, orders and products.
 */
export function newestFirst<Row extends { createdAt: Date }>(createdAt: AnyPgColumn, unique: AnyPgColumn, kind: KeyKind, read: (row: Row) => KeyValue): SortTerm<Row>[] {
  return [
    { column: createdAt, kind: 'instant', descending: true, read: (row) => row.createdAt.toISOString() },
    { column: unique, kind, descending: true, read },
  ];
}

/** Where a page starts: by number (offset), or at a row's key (a cursor). */
export type PageRequest =
  | { direction: 'first'; page: number; limit: number }
  | { direction: CursorDirection; page: number; limit: number; key: KeyValue[] };

/** Read backwards (the rows before the key, nearest first), then reversed. */
const isBackwards = (direction: PageRequest['direction']) => direction === 'before' || direction === 'through';

/** What a list query says about paging (`page` and `cursor` exclude each other). */
export interface PagingQuery {
  page?: number | undefined;
  limit: number;
  cursor?: string | undefined;
}

/**
 * The page a query asks for. `binding` names the list and everything that selects or orders its
 * rows (never the page or the limit): a cursor is good only for the query that issued it.
 */
function readPageRequest<Row>(codec: CursorCodec, binding: string, terms: readonly SortTerm<Row>[], query: PagingQuery): PageRequest {
  if (query.cursor === undefined) return { direction: 'first', page: query.page ?? 1, limit: query.limit };
  if (query.page !== undefined) {
    throw new DomainError('validation-error', 'Give either page or cursor, not both.', {
      errors: [{ field: 'page', message: 'must be omitted when cursor is given (the cursor says where the page starts)' }],
    });
  }
  const position = codec.decode(
    binding,
    query.cursor,
    terms.map((term) => term.kind),
  );
  return { ...position, limit: query.limit };
}

/** What a list's query needs to fetch the page asked for (`listPage`). */
export interface PageWindow {
  request: PageRequest;
  /** The rows beyond the cursor's key (none for a page by number): one more filter of the list's query. */
  readonly beyond: SQL | undefined;
  /** The list's order, backwards for a page before a key. */
  readonly orderBy: SQL[];
  /** One row more than the page: it tells whether there is more. */
  limit: number;
  offset: number;
  /** `select` (a `$dynamic()` select of the list's rows) narrowed by `filter` and this window, run. */
  rowsOf<Q extends PgSelect>(select: Q, filter?: SQL): Promise<Awaited<Q>>;
}

/**
 * A list's page, the one way every list pages: reads the page the query asks for (a cursor bound
 * to `binding`, or a page number), has `fetch` read its rows in the window given (most lists
 * through `window.rowsOf`; a list of prepared statements from `window.request`), and answers them
 * mapped with `map`, with cursors to the pages on either side.
 */
export async function listPage<Row, T>(
  options: { cursors: CursorCodec; binding: string; terms: SortTerm<Row>[]; query: PagingQuery },
  fetch: (window: PageWindow) => Promise<Row[]>,
  map: (row: Row) => T,
): Promise<Page<T>> {
  const { cursors, binding, terms, query } = options;
  const request = readPageRequest(cursors, binding, terms, query);
  const window: PageWindow = {
    request,
    ...limitOffset(request),
    // Built only when asked for: the lists of prepared statements bind the key instead.
    get beyond() {
      return request.direction === 'first' ? undefined : keysetCondition(terms, request.direction, request.key);
    },
    get orderBy() {
      return keysetOrder(terms, request.direction);
    },
    async rowsOf<Q extends PgSelect>(select: Q, filter?: SQL): Promise<Awaited<Q>> {
      // A dynamic select answers itself from each call, so the rows are the select's own.
      const windowed: Q = select.where(and(filter, this.beyond)).orderBy(...this.orderBy).limit(this.limit).offset(this.offset);
      return await windowed;
    },
  };
  return pageOf({ codec: cursors, binding, terms, request }, await fetch(window), map);
}

/** The comparison that selects rows beyond the key in `direction`, strict or not. */
const opFor = (term: { descending: boolean }, direction: CursorDirection, strict: boolean) => {
  const greater = !isBackwards(direction) !== term.descending;
  return `${greater ? '>' : '<'}${strict ? '' : '='}`;
};

/**
 * The rows beyond a key in the list's order: strictly (`after`, `before`) or with the key's row
 * (`from`, `through`). `values` are the key's values, or placeholders for them in a statement
 * built once. One direction for every term compares the rows as a whole (`(a, b) < ($1, $2)`),
 * which PostgreSQL answers as one index range; mixed directions bound the first term and spell
 * the rest out.
 */
export function keysetCondition<Row>(terms: SortTerm<Row>[], direction: CursorDirection, values: unknown[]): SQL {
  const columns = terms.map((term) => term.column);
  const first = terms[0];
  if (first === undefined) throw new Error('a list order has at least one term');
  const inclusive = direction === 'from' || direction === 'through';
  if (terms.every((term) => term.descending === first.descending)) {
    return sql`(${sql.join(columns, sql`, `)}) ${sql.raw(opFor(first, direction, !inclusive))} (${sql.join(
      values.map((value) => sql`${value}`),
      sql`, `,
    )})`;
  }
  const chain = (i: number): SQL => {
    const term = terms[i] as SortTerm<Row>;
    const last = i === terms.length - 1;
    const beyond = sql`${term.column} ${sql.raw(opFor(term, direction, !(last && inclusive)))} ${values[i]}`;
    return last ? beyond : sql`(${beyond} or (${term.column} = ${values[i]} and ${chain(i + 1)}))`;
  };
  return sql`${first.column} ${sql.raw(opFor(first, direction, false))} ${values[0]} and ${chain(0)}`;
}

/** The list's order; read backwards for a page before a key (its rows are reversed after). */
/** `sortKey`: what each term sorts by, its column unless told (an expression of it: products.service.ts). */
export function keysetOrder<Row>(terms: SortTerm<Row>[], direction: PageRequest['direction'], sortKey: (term: SortTerm<Row>) => SQLWrapper = (term) => term.column): SQL[] {
  const backwards = isBackwards(direction);
  return terms.map((term) => (term.descending !== backwards ? sql`${sortKey(term)} desc` : sql`${sortKey(term)} asc`));
}

/** Placeholders `k0`, `k1`, ... for a key's values in a statement built once. */
export const keyPlaceholders = (count: number) => Array.from({ length: count }, (_, i) => sql.placeholder(`k${i}`));

/** The values of `keyPlaceholders` for a request (none for a page by number). */
export function keyValues(request: PageRequest): Record<string, unknown> {
  return request.direction === 'first' ? {} : Object.fromEntries(request.key.map((value, i) => [`k${i}`, value]));
}

/** LIMIT and OFFSET of a request: one extra row tells whether there is more. */
function limitOffset(request: PageRequest): { limit: number; offset: number } {
  return { limit: request.limit + 1, offset: request.direction === 'first' ? (request.page - 1) * request.limit : 0 };
}

const clampPage = (page: number) => Math.min(MAX_PAGE, Math.max(1, page));

/**
 * The page from the rows fetched for `request` (`limit + 1` of them, in the list's order, or
 * backwards for a page before a key), with cursors to the pages on either side.
 */
function pageOf<Row, T>(
  options: { codec: CursorCodec; binding: string; terms: SortTerm<Row>[]; request: PageRequest },
  rows: Row[],
  map: (row: Row) => T,
): Page<T> {
  const { codec, binding, terms, request } = options;
  const more = rows.length > request.limit;
  const shown = rows.slice(0, request.limit);
  const backwards = isBackwards(request.direction);
  if (backwards) shown.reverse();
  const first = shown[0];
  const last = shown.at(-1);
  const keyOf = (row: Row) => terms.map((term) => term.read(row));
  const cursor = (direction: CursorDirection, key: KeyValue[] | undefined, page: number) =>
    key === undefined ? null : codec.encode(binding, { direction, page: clampPage(page), key });
  const from = request.direction === 'first' ? undefined : request.key;
  // Read back to the start: that is page 1, whatever the count along the way said.
  const page = backwards && !more ? 1 : request.page;

  let next: string | null;
  let prev: string | null;
  if (backwards) {
    // This page lies before a row that was shown: there is a next page, from that row on (the
    // row itself included when this page came back empty: it may be all that is left).
    next = last !== undefined ? cursor('after', keyOf(last), page + 1) : cursor('from', from, page + 1);
    prev = more && first !== undefined ? cursor('before', keyOf(first), page - 1) : null;
  } else {
    next = more && last !== undefined ? cursor('after', keyOf(last), page + 1) : null;
    // A page at a key has that key's row before it (included on the way back when this page came
    // back empty); a page by number has pages before it.
    if (first !== undefined) prev = request.direction !== 'first' || page > 1 ? cursor('before', keyOf(first), page - 1) : null;
    else prev = cursor('through', from, page - 1);
  }
  return { data: shown.map(map), page, limit: request.limit, has_more: next !== null, next_cursor: next, prev_cursor: prev };
}
