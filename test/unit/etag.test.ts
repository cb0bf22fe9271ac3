/**
 * Issue 8, item 3: one entity tag per representation. The facade tags the bytes it sends; a
 * service tags its representation through the read's output schema, which puts the fields in the
 * body's order, so the two agree whatever order the service built its keys in.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import { bytesTag, canonicalJson, entityTag, parseEntityTags, representationTag } from '../../server/lib/etag.ts';

const Line = z.object({ product_id: z.int(), quantity: z.int() });
const Thing = z.object({ id: z.int(), items: z.array(Line), note: z.string().nullable(), links: z.object({ self: z.string() }) });

describe("a service's tag depends on the values, never on the order it built the keys in", () => {
  it('is the tag of the body the output schema makes, for objects nested in arrays too', () => {
    const body = { id: 7, items: [{ product_id: 1, quantity: 2 }], note: null, links: { self: '/x' } };
    const built = { links: { self: '/x' }, note: null, items: [{ quantity: 2, product_id: 1 }], id: 7 };
    expect(representationTag(Thing, built)).toBe(bytesTag(JSON.stringify(body)));
    expect(representationTag(Thing, built)).toBe(entityTag(body));
  });

  it('a changed value or a reordered array changes it', () => {
    const thing = { id: 7, items: [{ product_id: 1, quantity: 2 }, { product_id: 2, quantity: 1 }], note: 'a', links: { self: '/x' } };
    const tag = representationTag(Thing, thing);
    expect(representationTag(Thing, { ...thing, note: 'b' })).not.toBe(tag);
    expect(representationTag(Thing, { ...thing, items: [...thing.items].reverse() })).not.toBe(tag);
  });

  it('is checked: a representation its schema refuses is an error, not a tag', () => {
    expect(() => representationTag(Thing, { id: 'seven' })).toThrow();
  });
});

describe('the tag of a body', () => {
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
