import { createHash } from 'node:crypto';

/** JSON with object keys sorted, so equal representations hash equally whatever built them. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return v;
  });
}

/** Strong entity tag of a representation: changes whenever any field of it changes. */
export function entityTag(representation: unknown): string {
  return `"${createHash('sha256').update(canonicalJson(representation)).digest('base64url').slice(0, 27)}"`;
}

/** Parses an `If-Match` / `If-None-Match` list; `*` stays `*`. Weak tags keep their `W/` prefix. */
export function parseEntityTags(header: string | undefined): string[] | undefined {
  if (header === undefined) return undefined;
  const tags = header.match(/\*|(?:W\/)?"[^"]*"/g);
  return tags ?? [];
}
