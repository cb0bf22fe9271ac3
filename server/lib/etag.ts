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
function canonicalJson(value: unknown): string {
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

/** Parses an `If-Match` / `If-None-Match` list; `*` stays `*`. Weak tags keep their `W/` prefix. */
export function parseEntityTags(header: string | undefined): string[] | undefined {
  if (header === undefined) return undefined;
  const tags = header.match(/\*|(?:W\/)?"[^"]*"/g);
  return tags ?? [];
}
