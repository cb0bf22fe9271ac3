/**
 * List cursors: an opaque, signed position in a list (docs/api.md#lists-and-paging). A cursor is
 * base64url JSON of the position, and an HMAC over it and the list's binding (the list and its
 * filters, sort and order), keyed by a secret every instance shares. So a cursor edited by hand,
 * cut short, or replayed on another list or with other filters is refused as a malformed request
 * (400) instead of answering some other page. How lists read a position is
 * server/modules/paging.ts.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../errors/problems.ts';

/** The deepest page a list reads by number, and a cursor may name. */
export const MAX_PAGE = 1_000_000;

/** A value of a sort key as a cursor holds it (instants as RFC 3339 text). */
export type KeyValue = string | number;

/** What a sort column holds: a cursor's value for it is checked against this before any SQL. */
export type KeyKind = 'integer' | 'bigint' | 'text' | 'instant';

/**
 * Where a cursor page starts: strictly after or before a row's key (the cursors pages answer),
 * or from or through it, the key's row included. The inclusive two serve a page that came back
 * empty (its rows left the filter, or were deleted): its way back, or on, must not skip the very
 * row its cursor named.
 */
export type CursorDirection = 'after' | 'before' | 'from' | 'through';

/** A cursor's position: the row key it names, how to read from it, and its page number. */
export interface Position {
  direction: CursorDirection;
  page: number;
  key: KeyValue[];
}

const DIRECTION_CODES: Record<CursorDirection, string> = { after: 'a', before: 'b', from: 'f', through: 't' };
const DIRECTIONS = new Map(Object.entries(DIRECTION_CODES).map(([direction, code]) => [code, direction as CursorDirection]));

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
