/**
 * The REST types the client package ships (client-sdk/src/rest-types.ts): generated from the
 * OpenAPI document by openapi-typescript, kept in sync, and good for typed openapi-fetch calls.
 */
import { readFileSync } from 'node:fs';
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components, paths } from '../../client-sdk/src/rest-types.ts';
import { generateRestTypes, restTypesFile } from '../../scripts/gen-rest-types.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { productInput } from '../helpers/products.ts';

type Problem = components['schemas']['Problem'];
type Product = components['schemas']['Product'];

// The file depends on the code alone, not on the database: check it once.
describe.skipIf(process.env.TEST_DB === 'postgres')('the committed REST types', () => {
  it('are what the OpenAPI document generates (else run `npm run client:rest-types`)', async () => {
    const committed = readFileSync(restTypesFile, 'utf8');
    const fresh = await generateRestTypes();
    expect(committed === fresh, 'client-sdk/src/rest-types.ts is stale: run `npm run client:rest-types` and commit it').toBe(true);
  });
});

describe('openapi-fetch with the REST types, against a listening service', () => {
  let service: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    service = await createTestApp();
    // The document's one server is the origin: the paths carry /api/v1 (and /api/health).
    baseUrl = await service.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await service?.close();
  });

  it('creates a product (201, typed body) and reads the list back', async () => {
    const api = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${service.admin.token}` } });
    const body: paths['/api/v1/products']['post']['requestBody']['content']['application/json'] = productInput({ category: 'rest-types' });
    const { data, error, response } = await api.POST('/api/v1/products', { body });
    expect(error).toBeUndefined();
    expect(response.status).toBe(201);
    const created: Product | undefined = data;
    expect(created).toMatchObject({ sku: body.sku, price: body.price });
    expect(response.headers.get('location')).toBe(`/api/v1/products/${created?.id}`);

    const list = await api.GET('/api/v1/products', { params: { query: { category: 'rest-types', limit: 10 } } });
    expect(list.data?.data.map((p) => p.sku)).toEqual([body.sku]);

    const health = await api.GET('/api/health');
    expect(health.data?.status).toBe('ok');
  });

  it('types a 422 answer as the problems of that status, narrowed by type to its field errors', async () => {
    const api = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${service.admin.token}` } });
    const { data, error, response } = await api.POST('/api/v1/products', { body: { sku: '', name: 'Mug', category: 'kitchen', price: -5 } });
    expect(data).toBeUndefined();
    expect(response.status).toBe(422);
    const problem: Problem | undefined = error;
    expect(problem).toMatchObject({ type: '/problems/validation-error', status: 422 });
    const fields = error?.type === '/problems/validation-error' ? error.errors.map((e) => e.field).sort() : [];
    expect(fields).toEqual(['price', 'sku']);
  });

  it('refuses wrong calls at compile time', () => {
    const api = createClient<paths>({ baseUrl });
    const neverCalled = () => {
      // @ts-expect-error no such path
      void api.GET('/api/v1/product');
      // @ts-expect-error paths are whole: /api/v1/products
      void api.GET('/products');
      // @ts-expect-error price is an integer, not a string
      void api.POST('/api/v1/products', { body: { sku: 'A', name: 'A', category: 'a', price: '9.00' } });
      // @ts-expect-error the id path parameter is required
      void api.GET('/api/v1/products/{id}', {});
    };
    expect(typeof neverCalled).toBe('function');
  });
});
