/**
 * Products for tests, typed from the module's schemas: what a client sends (`z.input` of
 * ProductInput) and what the service answers (`z.infer` of Product).
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { z } from 'zod';
import type { Product, ProductInput, ProductList } from '../../server/modules/products/products.schemas.ts';
import type { TestApp } from './app.ts';

export const PRODUCTS = '/api/v1/products';

/** A POST /products body (and `products.create` input) as a client writes it. */
export type ProductInputBody = z.input<typeof ProductInput>;
export type ProductBody = z.infer<typeof Product>;
export type ProductListBody = z.infer<typeof ProductList>;

let sequence = 0;

/** A valid product body with every field set; SKUs are unique per call. */
export function productInput(overrides: Partial<ProductInputBody> = {}): Required<ProductInputBody> {
  sequence += 1;
  return {
    sku: `SKU-${sequence}-${randomBytes(3).toString('hex')}`,
    name: `Product ${sequence}`,
    description: 'A fine product',
    category: 'apparel',
    price: 1000 + sequence,
    currency: 'USD',
    stock: 10,
    metadata: {},
    ...overrides,
  };
}

/** A category no other test uses, so a filtered listing shows only one test's products. */
export const freshCategory = (): string => `cat-${randomBytes(4).toString('hex')}`;

/** Creates a product over HTTP as the app's admin and returns it (expects 201). */
export async function createProduct(t: TestApp, overrides: Partial<ProductInputBody> = {}): Promise<ProductBody> {
  const res = await t.request({ method: 'POST', url: PRODUCTS, payload: productInput(overrides), token: t.admin.token });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<ProductBody>();
}

/** The PUT body of a product: its representation without the read-only fields. */
export function writableProduct(product: ProductBody): Required<ProductInputBody> {
  const { sku, name, description, category, price, currency, stock, metadata } = product;
  return { sku, name, description, category, price, currency, stock, metadata };
}
