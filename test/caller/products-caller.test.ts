/**
 * The products procedures called directly, with no HTTP (server/testing.ts, `createCaller`).
 * Same rules as over REST (docs/api.md#resources, #writes, #errors and #authentication-and-authorization); errors arrive as a TRPCError whose
 * `cause` is the DomainError that names the problem.
 */
import { TRPCError } from '@trpc/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenService, type Caller } from '../../server/auth/tokens.ts';
import { entityTag } from '../../server/lib/etag.ts';
import { createTestHarness, type TestCallContext, type TestHarness, type TestIdentity } from '../../server/testing.ts';
import { createCaller } from '../../server/router.ts';
import { createContextInner } from '../../server/trpc/context.ts';
import { TEST_JWT } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { expectDomainError } from '../helpers/problems.ts';
import { freshCategory, productInput as input, type ProductInputBody } from '../helpers/products.ts';

let harness: TestHarness;
beforeAll(async () => {
  // The per-file database of the project (in-memory PGlite, or a PostgreSQL copy).
  harness = await createTestHarness({ database: await createTestDatabase() });
});
afterAll(async () => {
  await harness?.close();
});

const admin: TestIdentity = { role: 'admin', userId: 1, name: 'Admin' };
const customer: TestIdentity = { role: 'customer', userId: 2, name: 'Customer' };
const service = (...scopes: string[]): TestIdentity => ({ role: 'service', name: 'client-x', scopes });

/** A caller as a verified access token gives it, rather than one the harness makes up. */
const asVerified = (caller: Caller | null) => createCaller(createContextInner({ db: harness.db, caller }));

const as = (identity: TestIdentity | null, preconditions?: TestCallContext['preconditions']) =>
  harness.caller(identity, preconditions ? { preconditions } : {});

describe('products.create makes a product (admin, or a service with products:write)', () => {
  it('an admin creates a product and gets it back with id and timestamps', async () => {
    const body = input();
    const product = await as(admin).products.create(body);
    expect(product).toMatchObject(body);
    expect(Number.isInteger(product.id)).toBe(true);
    expect(product.created_at).toBe(product.updated_at);
  });

  it('currency defaults to USD, stock to 0, an omitted description is null', async () => {
    const { sku, name, category, price } = input();
    const product = await as(admin).products.create({ sku, name, category, price });
    expect(product).toMatchObject({ currency: 'USD', stock: 0, description: null });
  });

  it('a service caller with products:write may create', async () => {
    const product = await as(service('products:write')).products.create(input());
    expect(product.id).toBeGreaterThan(0);
  });

  it('a duplicate sku is a CONFLICT whose cause is duplicate-resource naming sku', async () => {
    const first = await as(admin).products.create(input());
    const domain = await expectDomainError(as(admin).products.create(input({ sku: first.sku })), 'CONFLICT', 'duplicate-resource');
    expect(domain.errors?.map((e) => e.field)).toEqual(['sku']);
  });
});

describe('writes need the admin role or the products:write scope', () => {
  it('a customer gets FORBIDDEN with a DomainError cause of slug forbidden on create, replace and delete', async () => {
    const product = await as(admin).products.create(input());
    await expectDomainError(as(customer).products.create(input()), 'FORBIDDEN', 'forbidden');
    await expectDomainError(as(customer).products.replace({ ...input(), id: product.id }), 'FORBIDDEN', 'forbidden');
    await expectDomainError(as(customer).products.delete({ id: product.id }), 'FORBIDDEN', 'forbidden');
    expect(await as(null).products.get({ id: product.id })).toEqual(product);
  });

  it('a service without products:write gets FORBIDDEN (insufficient-scope)', async () => {
    await expectDomainError(as(service('orders:write')).products.create(input()), 'FORBIDDEN', 'insufficient-scope');
  });

  it('no caller at all gets UNAUTHORIZED with a DomainError cause of slug unauthorized', async () => {
    await expectDomainError(as(null).products.create(input()), 'UNAUTHORIZED', 'unauthorized');
  });

  it('a caller verified from a real access token acts with its role', async () => {
    const tokens = new TokenService(TEST_JWT);
    const adminCaller = await tokens.authenticate(`Bearer ${await tokens.mint({ sub: '7', role: 'admin' })}`);
    const customerCaller = await tokens.authenticate(`Bearer ${await tokens.mint({ sub: '8', role: 'customer' })}`);
    expect((await asVerified(adminCaller).products.create(input())).id).toBeGreaterThan(0);
    await expectDomainError(asVerified(customerCaller).products.create(input()), 'FORBIDDEN', 'forbidden');
  });
});

describe('invalid input is a validation-error with one errors entry per bad field', () => {
  it('bad fields give UNPROCESSABLE_CONTENT whose cause is validation-error listing each field', async () => {
    const bad = input({ sku: '', name: 'x'.repeat(201), price: -1, currency: 'usd', stock: 1.5 });
    const domain = await expectDomainError(as(admin).products.create(bad), 'UNPROCESSABLE_CONTENT', 'validation-error');
    expect(domain.errors?.map((e) => e.field).sort()).toEqual(['currency', 'name', 'price', 'sku', 'stock']);
  });

  it('an unknown field is a validation-error with the message "Unknown field"', async () => {
    const domain = await expectDomainError(
      as(admin).products.create({ ...input(), colour: 'red' } as ProductInputBody),
      'UNPROCESSABLE_CONTENT',
      'validation-error',
    );
    expect(domain.errors).toEqual([{ field: 'colour', message: 'Unknown field' }]);
  });

  it('an invalid list query (sort on an unknown field, limit 101) is a validation-error naming it', async () => {
    const domain = await expectDomainError(as(null).products.list({ sort: 'stock', limit: 101 }), 'UNPROCESSABLE_CONTENT', 'validation-error');
    expect(domain.errors?.map((e) => e.field).sort()).toEqual(['limit', 'sort']);
  });

  it('invalid input creates nothing', async () => {
    const category = freshCategory();
    await expectDomainError(as(admin).products.create(input({ category, price: -1 })), 'UNPROCESSABLE_CONTENT', 'validation-error');
    expect((await as(null).products.list({ category })).data).toEqual([]);
  });
});

describe('products.get and products.list are public', () => {
  it('get answers the product to a caller without credentials', async () => {
    const product = await as(admin).products.create(input());
    expect(await as(null).products.get({ id: product.id })).toEqual(product);
  });

  it('get of an unknown id is NOT_FOUND with slug not-found', async () => {
    await expectDomainError(as(null).products.get({ id: 2_000_000_000 }), 'NOT_FOUND', 'not-found');
  });

  it('list defaults to page 1, limit 20 and filters by exact category', async () => {
    const category = freshCategory();
    const a = await as(admin).products.create(input({ category }));
    const b = await as(admin).products.create(input({ category }));
    await as(admin).products.create(input({ category: `${category}x` }));
    const page = await as(null).products.list({ category });
    expect(page).toEqual({ data: [a, b], page: 1, limit: 20, has_more: false, next_cursor: null, prev_cursor: null });
  });

  it('list sorts and pages', async () => {
    const category = freshCategory();
    const cheap = await as(admin).products.create(input({ category, price: 1 }));
    const dear = await as(admin).products.create(input({ category, price: 3 }));
    const middle = await as(admin).products.create(input({ category, price: 2 }));
    const first = await as(null).products.list({ category, sort: '-price', limit: 2 });
    expect(first).toMatchObject({ page: 1, limit: 2, has_more: true });
    expect(first.data.map((p) => p.id)).toEqual([dear.id, middle.id]);
    const second = await as(null).products.list({ category, sort: '-price', limit: 2, page: 2 });
    expect(second).toMatchObject({ page: 2, limit: 2, has_more: false });
    expect(second.data.map((p) => p.id)).toEqual([cheap.id]);
  });
});

describe('products.replace replaces the whole product', () => {
  it('answers the replaced product; an omitted description becomes null', async () => {
    const product = await as(admin).products.create(input({ description: 'old' }));
    const { sku, name, category, currency, stock } = product;
    const replaced = await as(admin).products.replace({ id: product.id, sku, name: `${name} v2`, category, price: 5, currency, stock });
    expect(replaced).toMatchObject({ id: product.id, name: `${name} v2`, price: 5, description: null, created_at: product.created_at });
    expect(await as(null).products.get({ id: product.id })).toEqual(replaced);
  });

  it('read-only created_at and updated_at sent back are ignored (GET-modify-PUT)', async () => {
    const product = await as(admin).products.create(input());
    const replaced = await as(admin).products.replace({ ...product, created_at: '1999-01-01T00:00:00.000Z', name: 'Changed' });
    expect(replaced).toMatchObject({ id: product.id, name: 'Changed', created_at: product.created_at });
  });

  it('repeating a replace changes nothing, not even updated_at', async () => {
    const product = await as(admin).products.create(input());
    const first = await as(admin).products.replace({ ...product, price: 42 });
    const second = await as(admin).products.replace({ ...product, price: 42 });
    expect(second).toEqual(first);
  });

  it('replacing an unknown id is NOT_FOUND', async () => {
    await expectDomainError(as(admin).products.replace({ ...input(), id: 2_000_000_000 }), 'NOT_FOUND', 'not-found');
  });

  it('taking another product\'s sku is CONFLICT duplicate-resource and changes nothing', async () => {
    const a = await as(admin).products.create(input());
    const b = await as(admin).products.create(input());
    await expectDomainError(as(admin).products.replace({ ...b, sku: a.sku }), 'CONFLICT', 'duplicate-resource');
    expect(await as(null).products.get({ id: b.id })).toEqual(b);
  });

  it('a stale If-Match precondition is PRECONDITION_FAILED and changes nothing; the current tag succeeds', async () => {
    const product = await as(admin).products.create(input());
    const stale = entityTag(product);
    const moved = await as(admin).products.replace({ ...product, price: 77 });
    await expectDomainError(
      as(admin, { ifMatch: [stale] }).products.replace({ ...product, price: 78 }),
      'PRECONDITION_FAILED',
      'precondition-failed',
    );
    expect(await as(null).products.get({ id: product.id })).toEqual(moved);
    const next = await as(admin, { ifMatch: [entityTag(moved)] }).products.replace({ ...product, price: 79 });
    expect(next.price).toBe(79);
  });
});

describe('products.delete archives: get is then gone, it leaves listings, a repeated delete is not-found', () => {
  it('delete resolves, get becomes NOT_FOUND with slug gone, and a second delete has slug not-found', async () => {
    const category = freshCategory();
    const product = await as(admin).products.create(input({ category }));
    await expect(as(admin).products.delete({ id: product.id })).resolves.toBeUndefined();
    await expectDomainError(as(null).products.get({ id: product.id }), 'NOT_FOUND', 'gone');
    expect((await as(null).products.list({ category })).data).toEqual([]);
    await expectDomainError(as(admin).products.delete({ id: product.id }), 'NOT_FOUND', 'not-found');
  });

  it('replacing an archived product does not bring it back', async () => {
    const product = await as(admin).products.create(input());
    await as(admin).products.delete({ id: product.id });
    const error: unknown = await as(admin)
      .products.replace({ ...product, name: 'Back?' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(TRPCError);
    await expectDomainError(as(null).products.get({ id: product.id }), 'NOT_FOUND', 'gone');
  });

  it('a stale If-Match on delete is PRECONDITION_FAILED and the product stays', async () => {
    const product = await as(admin).products.create(input());
    await expectDomainError(as(admin, { ifMatch: ['"stale"'] }).products.delete({ id: product.id }), 'PRECONDITION_FAILED', 'precondition-failed');
    expect(await as(null).products.get({ id: product.id })).toEqual(product);
  });
});

describe('products.patch: the merge patch and JSON Patch of REST, as the caller sends them (docs/api.md#patch)', () => {
  it('merges metadata key by key (null removes one) and changes what PUT would; a stale If-Match is PRECONDITION_FAILED and changes nothing', async () => {
    const product = await as(admin).products.create(input({ metadata: { supplier: 'ACME', shelf: 'A1' } }));
    const patched = await as(admin, { ifMatch: [entityTag(product)] }).products.patch({ id: product.id, format: 'merge-patch', document: { price: 5, metadata: { shelf: null, bin: '7' } } });
    expect(patched).toMatchObject({ price: 5, metadata: { supplier: 'ACME', bin: '7' } });
    expect(Object.keys(patched.metadata).sort()).toEqual(['bin', 'supplier']);
    const stale = as(admin, { ifMatch: [entityTag(product)] }).products.patch({ id: product.id, format: 'json-patch', document: [{ op: 'remove', path: '/metadata/bin' }] });
    await expectDomainError(stale, 'PRECONDITION_FAILED', 'precondition-failed');
    expect(await as(null).products.get({ id: product.id })).toEqual(patched);
  });

  it('a patch that changes nothing answers the product as it is (same tag); a customer is FORBIDDEN', async () => {
    const product = await as(admin).products.create(input({ metadata: { supplier: 'ACME' } }));
    const same = await as(admin).products.patch({ id: product.id, format: 'merge-patch', document: { metadata: { supplier: 'ACME' } } });
    expect(entityTag(same)).toBe(entityTag(product));
    await expectDomainError(as(customer).products.patch({ id: product.id, format: 'merge-patch', document: { metadata: {} } }), 'FORBIDDEN', 'forbidden');
  });
});

/** Regression (issue 36 item 1): json-merge-patch wrote nothing at an object holding `constructor`, `prototype` or `__proto__`. */
describe('products.patch stores metadata keys named like JavaScript built-ins as create does (docs/api.md#metadata)', () => {
  it('a merge patch stores constructor and prototype with the other keys, and null removes one', async () => {
    const product = await as(admin).products.create(input());
    const merged = await as(admin).products.patch({ id: product.id, format: 'merge-patch', document: { metadata: { constructor: 'c', prototype: 'p', other: 'o' } } });
    expect(merged.metadata).toEqual({ constructor: 'c', prototype: 'p', other: 'o' });
    const removed = await as(admin).products.patch({ id: product.id, format: 'merge-patch', document: { metadata: { prototype: null } } });
    expect(removed.metadata).toEqual({ constructor: 'c', other: 'o' });
    expect((await as(null).products.get({ id: product.id })).metadata).toEqual({ constructor: 'c', other: 'o' });
  });

  it('a __proto__ key is dropped as on create; the other keys are stored', async () => {
    const product = await as(admin).products.create(input());
    const document = JSON.parse('{"metadata":{"__proto__":"x","other":"o"}}') as { metadata: Record<string, string> };
    expect((await as(admin).products.create(input({ metadata: document.metadata }))).metadata).toEqual({ other: 'o' });
    const patched = await as(admin).products.patch({ id: product.id, format: 'merge-patch', document });
    expect(patched.metadata).toEqual({ other: 'o' });
  });
});
