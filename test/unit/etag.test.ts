/**
 * Issue 8, item 3: one entity tag per representation, computed in one place, whatever order its
 * keys were built in, so the facade's ETag and a service's If-Match check always agree.
 */
import { describe, expect, it } from 'vitest';
import { entityTag, parseEntityTags } from '../../server/lib/etag.ts';

describe('the entity tag depends on the values, never on key order', () => {
  it('{a, b} and {b, a} have one tag', () => {
    expect(entityTag({ a: 1, b: 'two' })).toBe(entityTag({ b: 'two', a: 1 }));
  });

  it('nested objects, inside arrays too, are ordered alike', () => {
    const built = { id: 7, items: [{ product_id: 1, quantity: 2 }], _links: { self: { href: '/x' } } };
    const reordered = { _links: { self: { href: '/x' } }, items: [{ quantity: 2, product_id: 1 }], id: 7 };
    expect(entityTag(built)).toBe(entityTag(reordered));
  });

  it('a changed value, an added member or a reordered array changes the tag', () => {
    const tag = entityTag({ a: 1, list: [1, 2] });
    expect(entityTag({ a: 2, list: [1, 2] })).not.toBe(tag);
    expect(entityTag({ a: 1, list: [1, 2], b: null })).not.toBe(tag);
    expect(entityTag({ a: 1, list: [2, 1] })).not.toBe(tag);
  });

  it('follows JSON: a Date tags as its ISO string, an undefined member as absent', () => {
    const at = new Date('2024-05-01T10:00:00.000Z');
    expect(entityTag({ at, gone: undefined })).toBe(entityTag({ at: at.toISOString() }));
  });

  it('is a strong tag: quoted, no W/', () => {
    expect(entityTag({ a: 1 })).toMatch(/^"[\w-]+"$/);
  });
});

describe('If-Match / If-None-Match lists', () => {
  it('keeps strong and weak tags, and * alone; an absent header is undefined', () => {
    expect(parseEntityTags('"a", W/"b"')).toEqual(['"a"', 'W/"b"']);
    expect(parseEntityTags('*')).toEqual(['*']);
    expect(parseEntityTags('garbage')).toEqual([]);
    expect(parseEntityTags(undefined)).toBeUndefined();
  });
});
