/**
 * Issue 8, item 3: one entity tag per representation, computed in one place, whatever order its
 * keys were built in, so the facade's ETag and a service's If-Match check always agree.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalJson, entityTag, parseEntityTags } from '../../server/lib/etag.ts';

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

describe('canonicalJson writes what the JSON.stringify replacer it replaced wrote', () => {
  // The former implementation (issue 8), kept here as the reference the faster one must equal.
  const isPlain = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && [Object.prototype, null].includes(Object.getPrototypeOf(value) as object | null);
  const reference = (value: unknown): string =>
    JSON.stringify(value, (_key, member: unknown) =>
      isPlain(member) ? Object.fromEntries(Object.entries(member).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : member,
    );

  it('on any JSON value, keys like "10", "2" and "__proto__" included', () => {
    const key = fc.oneof(fc.string(), fc.constantFrom('0', '1', '2', '10', '01', '-1', '4294967295', '4294967294', '__proto__', 'a', 'B'));
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue({ maxDepth: 1 }),
        fc.constant(undefined),
        fc.date({ noInvalidDate: true }),
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(key, tie('node'), { maxKeys: 6 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        expect(canonicalJson(v)).toBe(reference(v));
      }),
      { numRuns: 500 },
    );
  });

  it('on JSON text as parsed (own "__proto__" members), class instances and boxed values', () => {
    const parsed: unknown = JSON.parse('{"__proto__":{"b":1,"a":2},"2":[1,{"y":null,"x":true}],"10":"ten","z":-0}');
    class Point {
      constructor(
        readonly y: number,
        readonly x: { d: number; c: number },
      ) {}
    }
    for (const v of [parsed, new Point(1, { d: 1, c: 2 }), [new Number(3), new String('s'), new Boolean(false)], { f: () => 1, s: Symbol('x'), n: NaN }]) {
      expect(canonicalJson(v)).toBe(reference(v));
    }
  });
});
