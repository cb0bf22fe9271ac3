/**
 * Product list filters over REST and /trpc (docs/api.md#product-search): `q` finds a text in the
 * name, SKU or description in any case; `category`, `price_gte`, `price_lte` and `in_stock`
 * narrow the list; they combine, and cursor paging keeps them. Bad values are 400 (a boolean that
 * is not `true`/`false`) or 422 (out of bounds). The plans at scale are in test/db/list-plans.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.ts';
import { expectProblem } from '../helpers/problems.ts';
import { createProduct, freshCategory, PRODUCTS, type ProductBody, type ProductListBody } from '../helpers/products.ts';

/** A category of its own, so other tests' products never show. */
let category: string;
let shirt: ProductBody;
let mug: ProductBody;
let poster: ProductBody;
let soldOut: ProductBody;

const t = useTestApp();
beforeAll(async () => {
  category = freshCategory();
  shirt = await createProduct(t, { category, name: 'Red T-Shirt', sku: `TEE-${category}`, description: 'Organic cotton.', price: 1999, stock: 5 });
  mug = await createProduct(t, { category, name: 'Coffee mug', sku: `MUG-${category}`, description: 'Holds 50% more, for the T-shirt crowd.', price: 550, stock: 12 });
  poster = await createProduct(t, { category, name: 'Poster', sku: `POS_${category}`, description: null, price: 900, stock: 3 });
  soldOut = await createProduct(t, { category, name: 'Sold-out cap', sku: `CAP-${category}`, description: 'Gone.', price: 1200, stock: 0 });
});

const list = async (query: string): Promise<number[]> => {
  const res = await t.request({ method: 'GET', url: `${PRODUCTS}?category=${category}&${query}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<ProductListBody>().data.map((p) => p.id);
};

describe('q: a case-insensitive search in name, SKU and description', () => {
  it.each([
    ['the name, another case', 'q=t-SHIRT', () => [shirt.id, mug.id]],
    ['the SKU', 'q=mug-', () => [mug.id]],
    ['the description only', 'q=organic', () => [shirt.id]],
    ['a product without description, by name', 'q=poster', () => [poster.id]],
    ['nothing', 'q=zzzzz', () => []],
  ])('%s (%s)', async (_name, query, expected) => {
    expect(await list(query)).toEqual(expected());
  });

  it('% and _ are plain characters, not wildcards', async () => {
    expect(await list(`q=${encodeURIComponent('50%')}`)).toEqual([mug.id]);
    // Only the poster's SKU has an underscore: as a wildcard, `_cat` would match every SKU here.
    expect(await list(`q=${encodeURIComponent('_' + category.slice(0, 3))}`)).toEqual([poster.id]);
    expect(await list(`q=${encodeURIComponent('%%%')}`)).toEqual([]);
  });

  it('a search never spans two fields', async () => {
    // The name ends "Shirt" and the SKU starts "TEE": no product contains "shirt tee".
    expect(await list('q=shirt%20tee')).toEqual([]);
  });

  it('shorter than 3 or longer than 100 characters is 422 naming q', async () => {
    for (const q of ['ab', 'x'.repeat(101)]) {
      expectProblem(await t.request({ method: 'GET', url: `${PRODUCTS}?q=${q}` }), 422, 'validation-error', { fields: ['q'] });
    }
  });
});

describe('price_gte, price_lte and in_stock', () => {
  it('a price range, bounds included', async () => {
    expect(await list('price_gte=900&price_lte=1999')).toEqual([shirt.id, poster.id, soldOut.id]);
    expect(await list('price_gte=1999')).toEqual([shirt.id]);
    expect(await list('price_lte=550')).toEqual([mug.id]);
    expect(await list('price_gte=2000&price_lte=100')).toEqual([]);
  });

  it('in_stock=true is stock above 0, false is stock 0', async () => {
    expect(await list('in_stock=true')).toEqual([shirt.id, mug.id, poster.id]);
    expect(await list('in_stock=false')).toEqual([soldOut.id]);
  });

  it('in_stock other than true or false is 400 naming it', async () => {
    for (const value of ['1', 'yes', 'TRUE', '', 'false,true']) {
      const problem = expectProblem(await t.request({ method: 'GET', url: `${PRODUCTS}?in_stock=${value}` }), 400, 'malformed-request', { fields: ['in_stock'] });
      expect(problem.detail).toContain('true or false');
    }
    expectProblem(await t.request({ method: 'GET', url: `${PRODUCTS}?in_stock=true&in_stock=false` }), 400, 'malformed-request', { fields: ['in_stock'] });
  });

  it('a price that is no integer is 400; out of range 422', async () => {
    expectProblem(await t.request({ method: 'GET', url: `${PRODUCTS}?price_gte=cheap` }), 400, 'malformed-request', { fields: ['price_gte'] });
    expectProblem(await t.request({ method: 'GET', url: `${PRODUCTS}?price_lte=-1` }), 422, 'validation-error', { fields: ['price_lte'] });
  });
});

describe('filters combine, sort and page by cursor', () => {
  it('q with a price range, in stock, sorted by price', async () => {
    expect(await list('q=ShIrT&in_stock=true&price_gte=500&sort=-price')).toEqual([shirt.id, mug.id]);
    expect(await list('q=shirt&price_lte=1000')).toEqual([mug.id]);
  });

  it('cursor paging keeps the filters: every match once, in order, and a cursor is good for its own query only', async () => {
    const seen: number[] = [];
    let url = `${PRODUCTS}?category=${category}&in_stock=true&price_gte=500&limit=1`;
    for (;;) {
      const res = await t.request({ method: 'GET', url });
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json<ProductListBody>();
      seen.push(...page.data.map((p) => p.id));
      if (page.next_cursor === null) break;
      const link = String(res.headers.link);
      expect(link).toContain('in_stock=true');
      url = `${PRODUCTS}?category=${category}&in_stock=true&price_gte=500&limit=1&cursor=${encodeURIComponent(page.next_cursor)}`;
      // The same cursor with another filter is refused.
      const other = await t.request({ method: 'GET', url: `${PRODUCTS}?category=${category}&in_stock=false&limit=1&cursor=${encodeURIComponent(page.next_cursor)}` });
      expectProblem(other, 400, 'malformed-request', { fields: ['cursor'] });
    }
    expect(seen).toEqual([shirt.id, mug.id, poster.id]);
  });
});

describe('/trpc: the same filters, typed (in_stock a boolean)', () => {
  const trpc = (input: unknown) => t.request({ method: 'GET', url: `/trpc/products.list?input=${encodeURIComponent(JSON.stringify(input))}` });

  it('q, price range and in_stock as REST answers them', async () => {
    const res = await trpc({ category, q: 'SHIRT', in_stock: true, price_lte: 1999 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<{ result: { data: ProductListBody } }>().result.data.data.map((p) => p.id)).toEqual([shirt.id, mug.id]);
  });

  it('in_stock as the text "true" is 422 (the input is a boolean)', async () => {
    const res = await trpc({ category, in_stock: 'true' });
    expect(res.statusCode).toBe(422);
  });
});
