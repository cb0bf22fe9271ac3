import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { productInput } from '../helpers/factories.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('POST /products creates a product (admin only)', () => {
  it('answers 201 with Location and the product', async () => {
    const body = productInput();
    const res = await t.request({ method: 'POST', url: '/api/v1/products', payload: body, token: t.admin.token });
    expect(res.statusCode).toBe(201);
    const product = res.json();
    expect(res.headers.location).toBe(`/api/v1/products/${product.id}`);
    expect(product).toMatchObject({ ...body });
    const read = await t.request({ method: 'GET', url: res.headers.location as string });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(product);
  });
});
