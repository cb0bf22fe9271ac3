import { z } from 'zod';

export const MAX_INT = 2_147_483_647;

/**
 * The largest stock a product may hold. An order reserves at most 100 lines x 10,000 units of a
 * product, so releasing a reservation onto a full stock stays far below MAX_INT (PostgreSQL
 * integer); the release also caps at this bound, so no sequence of writes can overflow.
 */
export const MAX_STOCK = 1_000_000_000;
/**
 * The largest price in minor units (10,000,000.00 in a two-decimal currency): a line (x 10,000)
 * and an order total (100 lines) stay exact integers in JavaScript (below 2^53).
 */
export const MAX_PRICE = 1_000_000_000;

// C0 controls, DEL and C1 controls (\p{Cc}): invisible, they spoof what a reader sees (ESC starts
// terminal escape sequences) and PostgreSQL text cannot hold NUL. Written as ranges, not \p{...},
// so the pattern in the OpenAPI document is one every JSON Schema tool understands.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const SINGLE_LINE = /^[^\x00-\x1F\x7F-\x9F]*$/;
// Multi-line text keeps tab, line feed and carriage return, and refuses every other control.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const MULTI_LINE = /^[^\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F]*$/;
// An unpaired UTF-16 surrogate (JSON allows "\ud800") has no UTF-8 encoding: storing it would
// silently turn it into U+FFFD, so the value read back would differ from the one written.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Text a client sends: bounded, without control characters (single-line; `multiline` allows tab,
 * LF and CR) and without lone surrogates. 422 names the field otherwise.
 */
export const text = (min: number, max: number, options: { multiline?: boolean } = {}) =>
  z
    .string()
    .min(min)
    .max(max)
    .regex(
      options.multiline ? MULTI_LINE : SINGLE_LINE,
      options.multiline ? 'must not contain control characters other than tab and line breaks' : 'must not contain control characters',
    )
    .refine((value) => !LONE_SURROGATE.test(value), 'must not contain unpaired UTF-16 surrogates');

export const Id = z.int().min(1).max(MAX_INT).meta({ description: 'Identifier assigned by the service.', example: 17 });
export const IdParam = z.object({ id: Id });

export const Timestamp = z.iso.datetime().meta({ description: 'RFC 3339 UTC timestamp.', example: '2026-01-31T12:00:00.000Z' });
export const Currency = z
  .string()
  .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as USD')
  .meta({ description: 'ISO 4217 currency code.', example: 'USD' });

export const PageQuery = {
  page: z.int().min(1).max(1_000_000).default(1).meta({ description: 'Page number, from 1.' }),
  limit: z.int().min(1).max(100).default(20).meta({ description: 'Page size, 1-100 (default 20).' }),
};

export const listOf = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    page: z.int(),
    limit: z.int(),
    has_more: z.boolean(),
  });

export interface Page<T> {
  data: T[];
  page: number;
  limit: number;
  has_more: boolean;
}

/** Builds a page from `limit + 1` fetched rows (the extra row only says there is more). */
export function toPage<Row, T>(rows: Row[], page: number, limit: number, map: (row: Row) => T): Page<T> {
  return { data: rows.slice(0, limit).map(map), page, limit, has_more: rows.length > limit };
}

/** A read-only field of a representation: accepted in a PUT body (so GET-modify-PUT works) and ignored. */
export const ReadOnly = z.unknown().optional().meta({ description: 'Read-only; ignored when sent.' });

export const iso = (date: Date): string => date.toISOString();
