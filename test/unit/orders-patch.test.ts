/**
 * PATCH documents applied to an order's representation, without HTTP or a database
 * (docs/api.md#patch): merge patch (RFC 7396), JSON Patch (RFC 6902) and the problems each refusal
 * becomes: malformed document 400, missing path or failed test 409, an invalid result 422.
 */
import { describe, expect, it } from 'vitest';
import { DomainError, type ProblemSlug } from '../../server/errors/problems.ts';
import { parseOrderDocument, patcherFor, PATCH_LIMITS } from '../../server/modules/orders/orders.patch.ts';

/** An order as the service represents it, the document a patch applies to. */
const order = () => ({
  id: 7,
  customer_id: 3,
  items: [
    { product_id: 11, quantity: 2, unit_price: 1999, line_total: 3998 },
    { product_id: 12, quantity: 1, unit_price: 550, line_total: 550 },
  ],
  address: '1 Main St, Springfield',
  status: 'draft',
  discount_code: null,
  currency: 'USD',
  total: 4548,
  created_at: '2026-01-31T12:00:00.000Z',
  updated_at: '2026-01-31T12:00:00.000Z',
  _links: { self: { href: '/api/v1/orders/7', method: 'GET' } },
});

const mergePatch = (document: unknown) => patcherFor({ format: 'merge-patch', document })(order());
const jsonPatch = (document: unknown) => patcherFor({ format: 'json-patch', document })(order());

/** Runs `apply` and returns the DomainError it throws, checking its slug (and the field it names). */
function refusal(apply: () => unknown, slug: ProblemSlug, field?: string): DomainError {
  let thrown: unknown;
  try {
    apply();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(DomainError);
  const error = thrown as DomainError;
  expect(error.slug).toBe(slug);
  if (field !== undefined) expect(error.errors?.map((e) => e.field)).toContain(field);
  return error;
}

describe('merge patch (RFC 7396)', () => {
  it('sets the members it names and keeps the others', () => {
    expect(mergePatch({ address: '2 Elm St' })).toEqual({ ...order(), address: '2 Elm St' });
  });

  it('null removes a member; the document then fails parsing if the member is required', () => {
    expect(mergePatch({ address: null })).not.toHaveProperty('address');
    refusal(() => parseOrderDocument(mergePatch({ currency: null })), 'validation-error', 'currency');
  });

  it('an array replaces the whole array', () => {
    const patched = mergePatch({ items: [{ product_id: 12, quantity: 5 }] }) as { items: unknown[] };
    expect(patched.items).toEqual([{ product_id: 12, quantity: 5 }]);
  });

  it('never changes the representation it is given', () => {
    const representation = order();
    patcherFor({ format: 'merge-patch', document: { address: 'x', items: [] } })(representation);
    expect(representation).toEqual(order());
  });
});

describe('JSON Patch (RFC 6902): the six operations', () => {
  it('add, replace, remove, move, copy and test apply in order', () => {
    const patched = jsonPatch([
      { op: 'test', path: '/status', value: 'draft' },
      { op: 'replace', path: '/address', value: '2 Elm St' },
      { op: 'add', path: '/items/-', value: { product_id: 13, quantity: 1 } },
      { op: 'remove', path: '/items/0' },
      { op: 'copy', from: '/address', path: '/discount_code' },
      { op: 'move', from: '/discount_code', path: '/address' },
    ]) as ReturnType<typeof order>;
    expect(patched.address).toBe('2 Elm St');
    expect(patched).not.toHaveProperty('discount_code');
    expect(patched.items.map((i) => i.product_id)).toEqual([12, 13]);
  });

  it('never changes the representation it is given', () => {
    const representation = order();
    patcherFor({ format: 'json-patch', document: [{ op: 'remove', path: '/items' }] })(representation);
    expect(representation).toEqual(order());
  });

  it('an empty patch changes nothing', () => {
    expect(jsonPatch([])).toEqual(order());
  });
});

describe('JSON Patch against the current state: a failed test or a missing path is 409 conflict naming the operation', () => {
  it('a test that fails', () => {
    refusal(() => jsonPatch([{ op: 'test', path: '/status', value: 'confirmed' }]), 'conflict', '0');
  });

  it.each([
    ['replace of a missing member', { op: 'replace', path: '/nothing', value: 1 }],
    ['remove of a missing member', { op: 'remove', path: '/nothing' }],
    ['remove past the end of an array', { op: 'remove', path: '/items/5' }],
    ['add under a missing parent', { op: 'add', path: '/nothing/deeper', value: 1 }],
    ['add beyond the end of an array', { op: 'add', path: '/items/9', value: {} }],
    ['move from a missing path', { op: 'move', from: '/nothing', path: '/address' }],
    ['copy from a missing path', { op: 'copy', from: '/nothing', path: '/address' }],
  ])('%s', (_label, operation) => {
    refusal(() => jsonPatch([{ op: 'test', path: '/status', value: 'draft' }, operation]), 'conflict', '1');
  });

  it.each(['/constructor', '/toString', '/hasOwnProperty'])('inherited names are paths that do not exist: replace %s', (path) => {
    refusal(() => jsonPatch([{ op: 'replace', path, value: 1 }]), 'conflict', '0');
  });
});

describe('malformed JSON Patch documents are 400 malformed-request', () => {
  it.each([
    ['an object instead of an array', { op: 'add', path: '/address', value: 'x' }],
    ['a string', 'replace /address'],
    ['null', null],
  ])('%s', (_label, document) => {
    refusal(() => jsonPatch(document), 'malformed-request');
  });

  it.each([
    ['an unknown op', { op: 'merge', path: '/address', value: 'x' }],
    ['a missing path', { op: 'replace', value: 'x' }],
    ['a path without a leading slash', { op: 'replace', path: 'address', value: 'x' }],
    ['a missing value', { op: 'add', path: '/address' }],
    ['a missing from', { op: 'move', path: '/address' }],
    ['an operation that is not an object', 42],
  ])('%s names the operation', (_label, operation) => {
    refusal(() => jsonPatch([{ op: 'test', path: '/status', value: 'draft' }, operation]), 'malformed-request', '1');
  });

  it('an array index that is not a number cannot be applied', () => {
    refusal(() => jsonPatch([{ op: 'replace', path: '/items/constructor', value: 1 }]), 'malformed-request', '0');
  });
});

describe('a path through __proto__ is refused (400 or 409, as the HTTP tests allow) and pollutes nothing', () => {
  it.each([
    ['replace /__proto__', { op: 'replace', path: '/__proto__', value: { polluted: true } }],
    ['add /__proto__/polluted', { op: 'add', path: '/__proto__/polluted', value: true }],
    ['copy from /__proto__', { op: 'copy', from: '/__proto__', path: '/address' }],
  ])('%s', (_label, operation) => {
    let thrown: unknown;
    try {
      jsonPatch([operation]);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(DomainError);
    expect(['malformed-request', 'conflict']).toContain((thrown as DomainError).slug);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe(`JSON Patch is bounded (PATCH_LIMITS): 422 validation-error, never unbounded work`, () => {
  it(`at most ${PATCH_LIMITS.operations} operations`, () => {
    const ops = Array.from({ length: PATCH_LIMITS.operations + 1 }, () => ({ op: 'test', path: '/status', value: 'draft' }));
    refusal(() => jsonPatch(ops), 'validation-error', '(body)');
    expect(() => jsonPatch(ops.slice(1))).not.toThrow();
  });

  it(`at most ${PATCH_LIMITS.items} items`, () => {
    const item = { product_id: 11, quantity: 1 };
    const fill = Array.from({ length: PATCH_LIMITS.items - 2 }, () => ({ op: 'add', path: '/items/-', value: item }));
    expect((jsonPatch(fill) as { items: unknown[] }).items).toHaveLength(PATCH_LIMITS.items);
    refusal(() => jsonPatch([...fill, { op: 'add', path: '/items/-', value: item }]), 'validation-error', 'items');
  });

  it('copies that double the document stop at the size bound, at the operation that crosses it', () => {
    // Each copy doubles /blob; forty of them would be 2^40 nodes without the bound.
    const ops: unknown[] = [{ op: 'add', path: '/blob', value: { a: 'x'.repeat(1000) } }];
    for (let i = 0; i < 40; i += 1) ops.push({ op: 'copy', from: '/blob', path: `/blob/c${i}` });
    const error = refusal(() => jsonPatch(ops), 'validation-error');
    expect(Number(error.errors?.[0]?.field)).toBeLessThan(ops.length);
  });

  it(`a text value beyond ${PATCH_LIMITS.textChars} characters is too large`, () => {
    refusal(() => jsonPatch([{ op: 'replace', path: '/address', value: 'x'.repeat(PATCH_LIMITS.textChars + 1) }]), 'validation-error', '0');
  });
});

describe('parseOrderDocument: what a patch leaves must be a valid order (422 validation-error)', () => {
  it('a representation parses into the writable document, read-only fields dropped', () => {
    const document = parseOrderDocument(order());
    expect(document).toMatchObject({ customer_id: 3, address: '1 Main St, Springfield', status: 'draft', currency: 'USD' });
    expect(document.items?.map((i) => ({ product_id: i.product_id, quantity: i.quantity }))).toEqual([
      { product_id: 11, quantity: 2 },
      { product_id: 12, quantity: 1 },
    ]);
  });

  it('a status in any case or an alias is read as the canonical status', () => {
    expect(parseOrderDocument({ ...order(), status: 'CREATED' }).status).toBe('draft');
    expect(parseOrderDocument({ ...order(), status: 'Confirmed' }).status).toBe('confirmed');
  });

  it.each(['customer_id', 'items', 'currency', 'status'])('removing the required %s is refused naming it', (field) => {
    const document: Record<string, unknown> = order();
    delete document[field];
    refusal(() => parseOrderDocument(document), 'validation-error', field);
  });

  it.each([
    ['an unknown member', { colour: 'red' }, 'colour'],
    ['a quantity of 0', { items: [{ product_id: 11, quantity: 0 }] }, 'items.0.quantity'],
    ['an unknown status', { status: 'pending' }, 'status'],
    ['an address that is a number', { address: 42 }, 'address'],
    ['a lower-case discount code', { discount_code: 'save10' }, 'discount_code'],
  ])('%s is refused naming %s', (_label, change, field) => {
    refusal(() => parseOrderDocument({ ...order(), ...change }), 'validation-error', field);
  });

  it('a document that is not an object is refused', () => {
    refusal(() => parseOrderDocument([]), 'validation-error');
    refusal(() => parseOrderDocument(null), 'validation-error');
  });
});
