import { hash } from 'node:crypto';
import type { z } from 'zod';

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
};

/** Array indices sort first, ascending, as the engine orders an object's own keys. */
const ARRAY_INDEX = /^(?:0|[1-9]\d*)$/;
const isArrayIndex = (key: string): boolean => ARRAY_INDEX.test(key) && Number(key) < 2 ** 32 - 1;

/** A plain object's keys in canonical order: sorted by code unit, array indices first (numerically). */
function sortedKeys(object: object): string[] {
  const keys = Object.keys(object).sort();
  if (!keys.some(isArrayIndex)) return keys;
  const indices = keys.filter(isArrayIndex).sort((a, b) => Number(a) - Number(b));
  return [...indices, ...keys.filter((key) => !isArrayIndex(key))];
}

/**
 * One value's JSON text, or undefined where JSON.stringify drops the value (undefined, functions,
 * symbols). JSON.stringify's rules, `toJSON` first; plain objects with their keys sorted.
 */
function write(key: string, input: unknown): string | undefined {
  let value = input;
  if ((typeof value === 'object' && value !== null) || typeof value === 'bigint') {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') value = (toJSON as (key: string) => unknown).call(value, key);
  }
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'bigint':
      return JSON.stringify(value);
    case 'object':
      break;
    default:
      return undefined;
  }
  if (value === null) return 'null';
  if (value instanceof Number || value instanceof String || value instanceof Boolean || value instanceof BigInt) return JSON.stringify(value);
  if (Array.isArray(value)) {
    const parts = new Array<string>(value.length);
    for (let index = 0; index < value.length; index++) parts[index] = write(String(index), value[index]) ?? 'null';
    return `[${parts.join(',')}]`;
  }
  const record = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const member of isPlainObject(value) ? sortedKeys(value) : Object.keys(value)) {
    const text = write(member, record[member]);
    if (text !== undefined) parts.push(`${JSON.stringify(member)}:${text}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * JSON with every object's members in sorted order, at every depth: one text per value, however
 * its keys were ordered when it was built. Otherwise JSON.stringify's rules hold (`toJSON`,
 * undefined members dropped). The fingerprint of an idempotent request's input
 * (server/trpc/idempotency.ts): the same body with its keys in another order is the same request.
 * Written out rather than through a JSON.stringify replacer that copies and sorts every object:
 * the same text (test/unit/etag.test.ts compares them), at a fraction of the cost.
 */
export function canonicalJson(value: unknown): string {
  return write('', value) as string;
}

/** A strong entity tag of exactly these bytes (UTF-8). */
export function bytesTag(text: string): string {
  return `"${hash('sha1', text, 'base64url')}"`;
}

/**
 * The entity tag of a representation as a procedure outputs it (its output schema's parse: the
 * fields in the schema's order): the tag of its JSON text, which is the body the facade sends and
 * tags (`ETag`). Tests that call procedures use it for `If-Match`.
 */
export function entityTag(output: unknown): string {
  return bytesTag(JSON.stringify(output));
}

/**
 * The entity tag a service checks `If-Match` against: its representation of the resource as the
 * read's output schema makes it (`schema.parse`, which orders the fields as the body has them,
 * whatever order the service built them in), so it is the `ETag` a read of the same resource sends.
 */
export function representationTag(schema: z.ZodType, representation: unknown): string {
  return entityTag(schema.parse(representation));
}

/** RFC 9110 8.8.3: `entity-tag = [ W/ ] DQUOTE *etagc DQUOTE`; etagc excludes `"`, space and controls. */
const TAG = String.raw`(?:W\/)?"[\x21\x23-\x7e\x80-\uffff]*"`;
const TAG_LIST = new RegExp(`^${TAG}(?:[ \t]*,[ \t]*${TAG})*$`);
const TAGS = new RegExp(TAG, 'g');

/**
 * Parses an `If-Match` / `If-None-Match` value (RFC 9110 13.1.1/13.1.2): `*` alone, or a comma
 * list of entity tags (weak ones keep their `W/` prefix). Anything else, a `*` inside a list or
 * beside other text included, is no valid tag list: it matches nothing (`[]`), so a malformed
 * `If-Match` fails its precondition (412) instead of acting as `*`.
 */
export function parseEntityTags(header: string | undefined): string[] | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value === '*') return ['*'];
  return TAG_LIST.test(value) ? (value.match(TAGS) ?? []) : [];
}
