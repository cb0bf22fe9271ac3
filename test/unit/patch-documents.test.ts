/**
 * The patch machinery every resource shares (server/lib/patch-documents.ts, docs/api.md#patch),
 * without HTTP or a database: metadata merges key by key, the bounds a module hands in hold, and
 * a resource that may change only in part (a payment: its metadata) names every other member a
 * patch changed.
 */
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../server/errors/problems.ts';
import { assertChangesOnly, patcherFor, type PatchLimits } from '../../server/lib/patch-documents.ts';

const LIMITS: PatchLimits = { operations: 3, nodes: 40, textChars: 200, noun: 'payment' };

const payment = () => ({ id: 5, amount: 4548, status: 'captured', metadata: { erp_id: 'ERP-1', note: 'hi' }, _links: { self: { href: '/api/v1/payments/5' } } });

function fieldsRefused(apply: () => unknown): string[] {
  try {
    apply();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return ((error as DomainError).errors ?? []).map((e) => e.field);
  }
  throw new Error('not refused');
}

describe('metadata merges key by key', () => {
  it('a merge patch sets, changes and removes (null) keys and keeps the rest', () => {
    const patched = patcherFor({ format: 'merge-patch', document: { metadata: { note: null, psp: 'P' } } }, LIMITS)(payment());
    expect(patched).toEqual({ ...payment(), metadata: { erp_id: 'ERP-1', psp: 'P' } });
  });

  it('the bounds a module hands in hold: operations, then size after each operation', () => {
    const ops = Array.from({ length: 4 }, () => ({ op: 'test', path: '/id', value: 5 }));
    expect(fieldsRefused(() => patcherFor({ format: 'json-patch', document: ops }, LIMITS)(payment()))).toEqual(['(body)']);
    const big = [{ op: 'add', path: '/metadata/long', value: 'x'.repeat(201) }];
    expect(fieldsRefused(() => patcherFor({ format: 'json-patch', document: big }, LIMITS)(payment()))).toEqual(['0']);
  });
});

/** RFC 7396 appendix A: each target, patch and result, applied by the RFC's algorithm (issue 36 item 1). */
const RFC_7396_EXAMPLES: [unknown, unknown, unknown][] = [
  [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
  [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
  [{ a: 'b' }, { a: null }, {}],
  [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
  [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
  [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
  [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
  [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
  [['a', 'b'], ['c', 'd'], ['c', 'd']],
  [{ a: 'b' }, ['c'], ['c']],
  [{ a: 'foo' }, null, null],
  [{ a: 'foo' }, 'bar', 'bar'],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: 'b', c: null }, { a: 'b' }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

describe('a merge patch is RFC 7396, every member name data', () => {
  it.each(RFC_7396_EXAMPLES)('%j patched by %j is %j', (target, document, result) => {
    expect(patcherFor({ format: 'merge-patch', document }, LIMITS)(target)).toEqual(result);
  });

  it('constructor, prototype and __proto__ merge like any key, at any depth, and never reach a prototype', () => {
    const document: unknown = JSON.parse('{"metadata":{"constructor":"c","prototype":"p","__proto__":"x","other":"o"},"toString":{"a":"b"}}');
    const patched = patcherFor({ format: 'merge-patch', document }, LIMITS)(payment()) as Record<string, unknown>;
    expect(Object.entries(patched.metadata as object)).toEqual(Object.entries({ erp_id: 'ERP-1', note: 'hi', constructor: 'c', prototype: 'p', ...JSON.parse('{"__proto__":"x"}'), other: 'o' }));
    expect(Object.entries(patched.toString as object)).toEqual([['a', 'b']]);
  });
});

describe('assertChangesOnly: a patch may change the writable members alone', () => {
  it('metadata changed, every other member as it was (in any member order, from a JSON Patch too): accepted', () => {
    const patched = patcherFor({ format: 'json-patch', document: [{ op: 'remove', path: '/metadata/note' }, { op: 'move', from: '/id', path: '/id' }] }, LIMITS)(payment());
    expect(() => assertChangesOnly(payment(), patched, ['metadata'], 'payment')).not.toThrow();
    const { _links, ...rest } = payment();
    expect(() => assertChangesOnly(payment(), { _links, ...rest, metadata: {} }, ['metadata'], 'payment')).not.toThrow();
  });

  it('a member changed, removed or added is 422 naming each', () => {
    const withoutStatus: Partial<ReturnType<typeof payment>> = payment();
    delete withoutStatus.status;
    expect(fieldsRefused(() => assertChangesOnly(payment(), { ...withoutStatus, amount: 1, extra: true }, ['metadata'], 'payment')).sort()).toEqual(['amount', 'extra', 'status']);
    expect(fieldsRefused(() => assertChangesOnly(payment(), { ...payment(), _links: {} }, ['metadata'], 'payment'))).toEqual(['_links']);
    expect(fieldsRefused(() => assertChangesOnly(payment(), [], ['metadata'], 'payment'))).toEqual(['(body)']);
  });
});
