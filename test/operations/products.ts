import { defineOperations } from '../helpers/operations.ts';
import { productInput } from '../helpers/products.ts';

export default defineOperations(({ t, UNKNOWN_ID, api, createProduct, read, withoutId, archivedProduct, adminActors }) => ({
  walks: {
    'products-create': {
      success: async () => ({ body: productInput(), token: t.admin.token }),
      failure: async () => ({ body: productInput({ price: -1 }), token: t.admin.token, status: 422 }),
    },
    'products-list': {
      success: async () => {
        await createProduct();
        return { query: { limit: 5, sort: '-price,name', page: 1 } };
      },
      failure: async () => ({ query: { limit: 500 }, status: 422 }),
    },
    'products-get': {
      success: async () => ({ params: { id: (await createProduct()).id } }),
      failure: async () => ({ params: { id: UNKNOWN_ID }, status: 404 }),
    },
    'products-replace': {
      success: async () => {
        const product = await read(`/api/v1/products/${(await createProduct()).id}`);
        return { params: { id: product.id }, body: { ...withoutId(product), name: 'Renamed product' }, token: t.admin.token };
      },
      failure: async () => {
        const product = await read(`/api/v1/products/${(await createProduct()).id}`);
        return { params: { id: product.id }, body: withoutId(product), status: 401 };
      },
    },
    'products-patch': {
      success: async () => ({ params: { id: (await createProduct()).id }, body: { name: 'Patched product', metadata: { shelf: 'B2' } }, contentType: 'application/merge-patch+json', token: t.admin.token }),
      failure: async () => ({ params: { id: (await createProduct()).id }, body: { metadata: { note: 'x'.repeat(501) } }, contentType: 'application/merge-patch+json', token: t.admin.token, status: 422 }),
    },
    'products-delete': {
      success: async () => ({ params: { id: (await createProduct()).id }, token: t.admin.token }),
      failure: async () => ({ params: { id: UNKNOWN_ID }, token: t.admin.token, status: 404 }),
    },
  },
  reach: {
    'products-create': {
      409: async () => ({ body: productInput({ sku: (await createProduct()).sku }), token: t.admin.token }),
    },
    'products-get': { 410: async () => ({ params: { id: (await archivedProduct()).id } }) },
    'products-replace': {
      409: async () => {
        const product = await read(`/api/v1/products/${(await createProduct()).id}`);
        return { params: { id: product.id }, body: { ...withoutId(product), sku: (await createProduct()).sku }, token: t.admin.token };
      },
      410: async () => {
        const product = await archivedProduct();
        return { params: { id: product.id }, body: productInput(), token: t.admin.token };
      },
    },
    'products-patch': {
      409: async () => ({ params: { id: (await createProduct()).id }, body: { sku: (await createProduct()).sku }, contentType: 'application/merge-patch+json', token: t.admin.token }),
      410: async () => ({ params: { id: (await archivedProduct()).id }, body: { name: 'Too late' }, contentType: 'application/merge-patch+json', token: t.admin.token }),
    },
  },
  representationsForPut: {
    'products-replace': async () => ({ representation: await read(`/api/v1/products/${(await createProduct()).id}`), token: t.admin.token }),
  },
  idempotency: {
    'products.create': {
      actors: adminActors,
      scenario: async () => ({
        call: { url: api('/products'), body: productInput() },
        other: { url: api('/products'), body: productInput() },
        failing: { url: api('/products'), body: { ...productInput(), price: -1 } },
      }),
    },
  },
}));
