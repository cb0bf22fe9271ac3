/**
 * Keyset pagination for every list: a list's order is a total order of sort terms ending in a
 * unique column, and a cursor names a position in it (the sort key of a row), so the next page is
 * "the rows after this key", which an index answers in the same time on page 1 and page 50,000,
 * and which neither repeats nor skips a row when rows are inserted between two requests (paging
 * by offset does both). `page`/`limit` stay accepted (docs/api.md#lists-and-paging): a page by number is still read by
 * offset, and its answer carries cursors onwards.
 *
 * A cursor is opaque to clients: base64url JSON of the position, and an HMAC over it and the
 * list's binding (the list and its filters, sort and order), keyed by a secret every instance
 * shares. So a cursor edited by hand, cut short, or replayed on another list or with other
 * filters is refused as a malformed request (400) instead of answering some other page.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { DomainError } from '../errors/problems.ts';
import { MAX_PAGE, type Page } from './common.schemas.ts';

/** A value of a sort key as a cursor holds it (instants as RFC 3339 text). */
export type KeyValue = string | number;

/** What a sort column holds: a cursor's value for it is checked against this before any SQL. */
export type KeyKind = 'integer' | 'bigint' | 'text' | 'instant';

/** One term of a list's order; the last term of every list is a unique column. */
export interface SortTerm<Row> {
  column: AnyPgColumn;
  kind: KeyKind;
  descending: boolean;
  read: (row: Row) => KeyValue;
}

/**
 * Where a cursor page starts: strictly after or before a row's key (the cursors pages answer),
 * or from or through it, the key's row included. The inclusive two serve a page that came back
 * empty (its rows left the filter, or were deleted): its way back, or on, must not skip the very
 * row its cursor named.
 */
export type CursorDirection = 'after' | 'before' | 'from' | 'through';

/** Where a page starts: by number (offset), or at a row's key (a cursor). */
export type PageRequest =
  | { direction: 'first'; page: number; limit: number }
  | { direction: CursorDirection; page: number; limit: number; key: KeyValue[] };

interface Position {
  direction: CursorDirection;
  page: number;
  key: KeyValue[];
}

const DIRECTION_CODES: Record<CursorDirection, string> = { after: 'a', before: 'b', from: 'f', through: 't' };
const DIRECTIONS = new Map(Object.entries(DIRECTION_CODES).map(([direction, code]) => [code, direction as CursorDirection]));

/** Read backwards (the rows before the key, nearest first), then reversed. */
const isBackwards = (direction: PageRequest['direction']) => direction === 'before' || direction === 'through';

const INT4 = 2_147_483_647;
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const isRealInstant = (text: string) => {
  const time = Date.parse(text);
  return !Number.isNaN(time) && new Date(time).toISOString() === text;
};
const fitsKind: Record<KeyKind, (value: unknown) => boolean> = {
  integer: (value) => typeof value === 'number' && Number.isInteger(value) && Math.abs(value) <= INT4,
  // A bigint column read as a number (drizzle's mode 'number'): exact up to 2^53.
  bigint: (value) => typeof value === 'number' && Number.isSafeInteger(value),
  text: (value) => typeof value === 'string',
  // The form the service writes, and a real date (Date would roll 31 February into March).
  instant: (value) => typeof value === 'string' && RFC3339_UTC.test(value) && isRealInstant(value),
};

const VERSION = 'v1';
const MAC_BYTES = 16;

/** Signs and reads cursors; every instance of one deployment must use the same key. */
export class CursorCodec {
  private readonly key: Buffer;

  constructor(secret: string | Buffer) {
    this.key = createHmac('sha256', secret).update('order-service list cursors').digest();
  }

  encode(binding: string, position: Position): string {
    const body = Buffer.from(JSON.stringify([DIRECTION_CODES[position.direction], position.page, position.key])).toString('base64url');
    return `${body}.${this.mac(binding, body)}`;
  }

  /** The position a cursor names, or a 400 for anything this list did not issue. */
  decode(binding: string, cursor: string, kinds: readonly KeyKind[]): Position {
    const [body, mac, ...rest] = cursor.split('.');
    if (body === undefined || mac === undefined || rest.length > 0 || !isBase64url(body)) throw badCursor();
    // The signature's text, not its decoded bytes: base64url's last character carries spare
    // bits, and a cursor differing in them is another text, so an edited one.
    const given = Buffer.from(mac);
    const expected = Buffer.from(this.mac(binding, body));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw badCursor();
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      throw badCursor();
    }
    // Signed by this service, but perhaps by an older version with another order: checked anyway.
    if (!Array.isArray(parsed) || parsed.length !== 3) throw badCursor();
    const [code, page, key] = parsed as unknown[];
    const direction = typeof code === 'string' ? DIRECTIONS.get(code) : undefined;
    if (direction === undefined) throw badCursor();
    if (!Number.isInteger(page) || (page as number) < 1 || (page as number) > MAX_PAGE) throw badCursor();
    // Each value of the column's kind, so no cursor reaches the database with a value it refuses.
    if (!Array.isArray(key) || key.length !== kinds.length || !kinds.every((kind, i) => fitsKind[kind](key[i]))) throw badCursor();
    return { direction, page: page as number, key: key as KeyValue[] };
  }

  private mac(binding: string, body: string): string {
    return createHmac('sha256', this.key).update(`${VERSION}\n${binding}\n${body}`).digest().subarray(0, MAC_BYTES).toString('base64url');
  }
}

/**
 * The codec of an app or caller not given a secret (tests, scripts): a key of this process's own,
 * so its cursors cannot be forged, and good only within the process. Instances that share a
 * database are given the deployment's secret (`main.ts`: JWT_SECRET).
 */
export const processCursors = new CursorCodec(randomBytes(32));

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const isBase64url = (text: string) => BASE64URL.test(text);

const badCursor = () =>
  new DomainError('malformed-request', 'The cursor is not one this list issued for these parameters: follow the next_cursor or prev_cursor of a page of the same query.', {
    errors: [{ field: 'cursor', message: 'must be a next_cursor or prev_cursor this list answered, unchanged, with the same filters and sort' }],
  });

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
export function readPageRequest<Row>(codec: CursorCodec, binding: string, terms: readonly SortTerm<Row>[], query: PagingQuery): PageRequest {
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
export function keysetOrder<Row>(terms: SortTerm<Row>[], direction: PageRequest['direction']): SQL[] {
  const backwards = isBackwards(direction);
  return terms.map((term) => (term.descending !== backwards ? sql`${term.column} desc` : sql`${term.column} asc`));
}

/** Placeholders `k0`, `k1`, ... for a key's values in a statement built once. */
export const keyPlaceholders = (count: number) => Array.from({ length: count }, (_, i) => sql.placeholder(`k${i}`));

/** The values of `keyPlaceholders` for a request (none for a page by number). */
export function keyValues(request: PageRequest): Record<string, unknown> {
  return request.direction === 'first' ? {} : Object.fromEntries(request.key.map((value, i) => [`k${i}`, value]));
}

/** LIMIT and OFFSET of a request: one extra row tells whether there is more. */
export function limitOffset(request: PageRequest): { limit: number; offset: number } {
  return { limit: request.limit + 1, offset: request.direction === 'first' ? (request.page - 1) * request.limit : 0 };
}

const clampPage = (page: number) => Math.min(MAX_PAGE, Math.max(1, page));

/**
 * The page from the rows fetched for `request` (`limit + 1` of them, in the list's order, or
 * backwards for a page before a key), with cursors to the pages on either side.
 */
export function pageOf<Row, T>(
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
