import { z } from 'zod';
import { createSchema } from 'zod-openapi';
import { PATCH_FORMATS, type JsonPatchOperation } from '../lib/patch-documents.ts';

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
/** The most units of a product one order line may hold (docs/api.md#field-rules). */
export const MAX_QUANTITY = 10_000;
/** The most lines an order may have (docs/api.md#field-rules bounds quantities; this bounds the lines). */
export const MAX_LINES = 100;
/** A line's total at most (price x quantity), and an order's: exact integers, below 2^53. */
export const MAX_LINE_TOTAL = MAX_PRICE * MAX_QUANTITY;
export const MAX_ORDER_TOTAL = MAX_LINE_TOTAL * MAX_LINES;

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
export const IdParam = z.strictObject({ id: Id });

/**
 * A query parameter that takes several of a closed set of values: on REST repeated or
 * comma-separated (docs/api.md#list-parameters; the document says `style: form, explode: true`),
 * in the typed client an array of at least one (REST cannot send an empty list: `expand=` is an
 * empty value). Duplicates are allowed (and mean nothing more); `max` bounds the input however the
 * values repeat.
 */
export const queryList = <const T extends readonly [string, ...string[]]>(values: T, max: number, meta: { description: string; example: T[number][] }) =>
  z
    .array(z.enum(values))
    .min(1)
    .max(max)
    .optional()
    .meta({ ...meta, param: { style: 'form', explode: true } });

export const Timestamp = z.iso.datetime().meta({ description: 'RFC 3339 UTC timestamp.', example: '2026-01-31T12:00:00.000Z' });
export const Currency = z
  .string()
  .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as USD')
  .meta({ description: 'ISO 4217 currency code.', example: 'USD' });

/** A `_links` member: where a client can go next, and how (docs/api.md#order-states). */
export const Link = z
  .object({ href: z.string().meta({ description: 'Path of the target, under /api/v1.' }), method: z.enum(['GET', 'POST']) })
  .meta({ id: 'Link' });

export { MAX_PAGE } from '../lib/cursors.ts';
import { MAX_PAGE } from '../lib/cursors.ts';
export const MAX_LIMIT = 100;
const Page = z.int().min(1).max(MAX_PAGE);
const Limit = z.int().min(1).max(MAX_LIMIT);

/** Cursors are short (a sort key and a signature); anything longer is not one. */
export const MAX_CURSOR_LENGTH = 1024;

export const PageQuery = {
  page: Page.optional().meta({ description: `Page number, 1-${MAX_PAGE} (default 1), read by offset; for deep paging follow \`next_cursor\` instead. Not with \`cursor\`.` }),
  limit: Limit.default(20).meta({ description: `Page size, 1-${MAX_LIMIT} (default 20).` }),
  cursor: z
    .string()
    .max(MAX_CURSOR_LENGTH)
    .optional()
    .meta({
      description:
        'Where the page starts: the `next_cursor` or `prev_cursor` of a page of the same query (same filters and sort), unchanged. Keyset paging: no row repeated or skipped when rows are added between requests, and as fast deep down as on page 1 where an index holds the order. Any other value is 400 (longer than 1024 characters, 422).',
    }),
};

const Cursor = z.string().nullable();

export const listOf = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item).max(MAX_LIMIT),
    page: Page.meta({ description: 'The page number; along cursors, counted from the page the first cursor came from.' }),
    limit: Limit,
    has_more: z.boolean().meta({ description: 'Whether a next page exists (`next_cursor` and the Link header name it).' }),
    next_cursor: Cursor.meta({ description: 'The `cursor` of the next page, or null on the last page.' }),
    prev_cursor: Cursor.meta({ description: 'The `cursor` of the previous page, or null on the first page (and on a page by number past the end).' }),
  });

/** A page of `items` as the service answers it, for examples. */
export const pageExample = <T>(items: T[]): Page<T> => ({ data: items, page: 1, limit: 20, has_more: false, next_cursor: null, prev_cursor: null });

export interface Page<T> {
  data: T[];
  page: number;
  limit: number;
  has_more: boolean;
  next_cursor: string | null;
  prev_cursor: string | null;
}

const READ_ONLY = 'Read-only: ignored when sent back (GET-modify-PUT), whatever its value.';

/**
 * A read-only field of a representation in a PUT body: accepted whatever its value (so
 * GET-modify-PUT works) and ignored. Callers' types and the OpenAPI document give it the type it
 * has in the representation, marked `readOnly` (generators leave it out of request bodies).
 */
export const readOnly = <T extends z.ZodType>(schema: T) => {
  // A timestamp's `format: date-time` says what it is; Zod's equivalent `pattern` beside it only
  // makes fuzzers (schemathesis) discard most strings they draw for a field the service ignores.
  const rendered: Record<string, unknown> = { ...createSchema(schema, { io: 'output' }).schema };
  if (rendered.format === 'date-time') delete rendered.pattern;
  return z
    .custom<z.output<T>>()
    .meta({
      readOnly: true,
      description: READ_ONLY,
      override: ({ jsonSchema }) => {
        Object.assign(jsonSchema, rendered, { readOnly: true, description: READ_ONLY });
      },
    })
    .optional();
};

export const iso = (date: Date): string => date.toISOString();

/**
 * Examples for the OpenAPI document, one per request or response schema: a request a client may
 * send as it is, or a representation as the service answers it. Typed by the schema, and every
 * one is validated against its schema in the document's tests.
 */
export const examples = z.registry<{ value: unknown }>();

/** Registers `value` as the example request of `schema` (its input type). */
export function requestExample<T extends z.ZodType>(schema: T, value: z.input<T>): T {
  examples.add(schema, { value });
  return schema;
}

/** Registers `value` as the example answer of `schema` (its output type). */
export function responseExample<T extends z.ZodType>(schema: T, value: z.output<T>): T {
  examples.add(schema, { value });
  return schema;
}

/** Bounds of `metadata` (docs/api.md#metadata), Stripe's. */
export const METADATA_LIMITS = { keys: 50, keyLength: 40, valueLength: 500 } as const;
const METADATA_KEY = new RegExp(`^[A-Za-z0-9_.-]{1,${METADATA_LIMITS.keyLength}}$`);
const METADATA_KEY_MESSAGE = `a key must be 1-${METADATA_LIMITS.keyLength} characters of A-Z, a-z, 0-9, _, . and -`;

export const MetadataKey = z.string().regex(METADATA_KEY, METADATA_KEY_MESSAGE);

const MetadataValue = text(0, METADATA_LIMITS.valueLength, { multiline: true });

/**
 * A resource's own key-value data: at most 50 keys, each with a string value of at most 500
 * characters. More keys, a longer key or value, or a value that is no string: 422 naming
 * `metadata` or `metadata.<key>`. (A `__proto__` key is dropped, as Zod drops it from every record;
 * REST refuses it in any body already.)
 */
/** The record and its bounds, without a name: the filter of a list takes it inline (metadataFilter). */
const metadataRecord = () =>
  z
    .record(MetadataKey, MetadataValue, { error: (issue) => (issue.code === 'invalid_key' ? METADATA_KEY_MESSAGE : undefined) })
    .refine((value) => Object.keys(value).length <= METADATA_LIMITS.keys, `must have at most ${METADATA_LIMITS.keys} keys`);

const maxKeys = ({ jsonSchema }: { jsonSchema: Record<string, unknown> }): void => {
  jsonSchema.maxProperties = METADATA_LIMITS.keys;
};

export const Metadata = metadataRecord().meta({
  id: 'Metadata',
  description: `Your own key-value data: at most ${METADATA_LIMITS.keys} keys of 1-${METADATA_LIMITS.keyLength} characters (A-Z, a-z, 0-9, _, . and -), string values of at most ${METADATA_LIMITS.valueLength} characters. Set on create; a merge patch merges it (a key set to null is removed); PUT replaces it.`,
  example: { erp_id: 'ERP-1042', gift_note: 'Happy birthday!' },
  override: maxKeys,
});

/**
 * A list's metadata filter: pairs every match holds. A query parameter of `style: deepObject`
 * on REST (`metadata[erp_id]=ERP-1042`), an object on /trpc; the same bounds as metadata.
 */
export const metadataFilter = (description: string) =>
  metadataRecord()
    .optional()
    // No example on a filter: the docs page fills it in (docs/api.md#the-openapi-document); the
    // description shows one.
    .meta({ description, example: undefined, param: { style: 'deepObject', explode: true }, override: maxKeys });
export type Metadata = z.infer<typeof Metadata>;

/** A merge patch's metadata: a key set to `null` is removed, `null` for the whole removes every key. */
export type MetadataMergePatch = Record<string, string | null> | null;

/** The schema of a merge patch's metadata, for the OpenAPI document of a PATCH that takes metadata alone. */
export const MetadataMergePatch = z
  .record(MetadataKey, MetadataValue.nullable())
  .nullable()
  .optional()
  .meta({
    description: `Keys to set (string values of at most ${METADATA_LIMITS.valueLength} characters); a key set to null is removed, the others are kept; \`null\` removes every key. At most ${METADATA_LIMITS.keys} keys after the merge.`,
    example: { erp_id: 'ERP-1042', gift_note: null },
  });

/**
 * The input of a PATCH procedure (docs/api.md#writes): the resource's id, the format its
 * Content-Type named and the patch document. The document is typed for callers (`MergePatch`
 * or JSON Patch operations) and checked by the service (lib/patch-documents.ts), which takes it
 * as `unknown`: a malformed document is 400 and a result that is no valid resource 422, which a
 * schema here could not tell apart.
 */
export const patchInput = <MergePatch extends object>() =>
  z.strictObject({
    id: Id,
    format: z.enum(PATCH_FORMATS).meta({ description: 'merge-patch (RFC 7396) or json-patch (RFC 6902).' }),
    document: z
      .custom<MergePatch | JsonPatchOperation[]>()
      .transform((document): unknown => document)
      .meta({ description: 'The patch document: an object (merge-patch) or an array of operations (json-patch).' }),
  });

/** The same keys with the same values, in any order: whether a write changes a resource's metadata. */
export function sameMetadata(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && b[key] === a[key]);
}
