import { hash } from 'node:crypto';

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
};

const byKey = ([a]: [string, unknown], [b]: [string, unknown]): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * JSON with every object's members in sorted order, at every depth: one text per value, however
 * its keys were ordered when it was built (a service's `toX(row)`, or Zod's output parse in the
 * schema's field order). Otherwise JSON.stringify's rules hold (`toJSON`, undefined members dropped).
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, member: unknown) =>
    isPlainObject(member) ? Object.fromEntries(Object.entries(member).sort(byKey)) : member,
  );
}

/**
 * The one strong entity tag of a representation, for the `ETag` the facade sends and the
 * `If-Match` a service checks: it changes whenever any value changes, never with key order.
 */
export function entityTag(representation: unknown): string {
  return `"${hash('sha1', canonicalJson(representation), 'base64url')}"`;
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
