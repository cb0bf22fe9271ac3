import { hash } from 'node:crypto';

/**
 * Strong entity tag of a serialized representation: changes whenever any byte of it changes.
 * Representations are serialized in their schema's field order (Zod output parsing and the
 * `toX(row)` builders both follow it), so one representation always has one tag.
 */
export function entityTagOfJson(json: string): string {
  return `"${hash('sha1', json, 'base64url')}"`;
}

export function entityTag(representation: unknown): string {
  return entityTagOfJson(JSON.stringify(representation));
}

/** Parses an `If-Match` / `If-None-Match` list; `*` stays `*`. Weak tags keep their `W/` prefix. */
export function parseEntityTags(header: string | undefined): string[] | undefined {
  if (header === undefined) return undefined;
  const tags = header.match(/\*|(?:W\/)?"[^"]*"/g);
  return tags ?? [];
}
