import './products.scopes.ts';
import { declareTag } from '../../lib/api-tags.ts';
import { z } from 'zod';
import { procedureFor, publicProcedure, router } from '../../trpc/trpc.ts';
import { IdParam } from '../common.schemas.ts';
import { Product, ProductInput, ProductList, ProductListQuery, ProductPatch, ProductReplace } from './products.schemas.ts';
import * as products from './products.service.ts';

declareTag('products', 'The catalogue. Anyone reads it; admins (or service clients with `products:write`) create, replace and archive products. An archived product answers 410 Gone.');

// Admins, and service clients holding products:write; anyone reads the catalogue.
const writer = procedureFor({ roles: ['admin', 'service'], scope: 'products:write' });

export const productsRouter = router({
  create: writer
    .meta({
      openapi: { method: 'POST', path: '/products', tags: ['products'], summary: 'Create a product (admin)', description: 'Adds a product to the catalogue. `sku` must be unique (409 `duplicate-resource`); `price` is in minor units of `currency` (default USD); `stock` defaults to 0. Answers 201 with `Location`.' },
      rest: { status: 201, location: '/products/{id}', kind: 'item', problems: ['duplicate-resource'] },
    })
    .input(ProductInput)
    .output(Product)
    .mutation(({ ctx, input }) => products.createProduct({ db: ctx.db, work: ctx.work, input })),

  get: publicProcedure
    .meta({
      openapi: { method: 'GET', path: '/products/{id}', tags: ['products'], summary: 'Read a product', description: 'A product of the catalogue, cacheable for 60 s (`ETag`, `Last-Modified`; 304 on `If-None-Match`). An archived product is 410 Gone.', protect: false },
      rest: { kind: 'item', cache: 'public', problems: ['not-found', 'gone'] },
    })
    .input(IdParam)
    .output(Product)
    .query(({ ctx, input }) => products.getProduct({ db: ctx.db, id: input.id })),

  list: publicProcedure
    .meta({
      openapi: { method: 'GET', path: '/products', tags: ['products'], summary: 'List products', description: 'The catalogue, paged (`page`, `limit`), filtered by exact `category` and sorted by `sort` (default `id`; every sort ends with `id`, so pages never overlap). Archived products are left out; the `Link` header names the next and previous pages.', protect: false },
      rest: {
        kind: 'list',
        cache: 'public',
        links: [{ to: 'orders.create', body: { items: [{ product_id: 'data/0/id', quantity: 1 }] }, description: 'Order the first product of the page.' }],
      },
    })
    .input(ProductListQuery)
    .output(ProductList)
    .query(({ ctx, input }) => products.listProducts({ db: ctx.db, query: input, cursors: ctx.cursors })),

  replace: writer
    .meta({
      openapi: { method: 'PUT', path: '/products/{id}', tags: ['products'], summary: 'Replace a product (admin)', description: 'Replaces a product with its full representation: omitted optional fields take their defaults (`description` null, `currency` USD, `stock` 0). Read-only fields sent back (GET-modify-PUT) are ignored; `If-Match` guards against lost updates (412).' },
      rest: { kind: 'item', problems: ['not-found', 'gone', 'duplicate-resource', 'precondition-failed'] },
    })
    .input(ProductReplace)
    .output(Product)
    .mutation(({ ctx, input }) => products.replaceProduct({ db: ctx.db, input, preconditions: ctx.preconditions })),

  patch: writer
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/products/{id}',
        tags: ['products'],
        summary: 'Patch a product (admin; merge patch or JSON Patch)',
        description: 'Changes some fields of a product: a merge patch (RFC 7396; `metadata` merges key by key, a key set to null is removed) or a JSON Patch (RFC 6902). The patched product must be a valid PUT body and follows the same rules; a patch that changes nothing changes nothing (same ETag, no event).',
        contentTypes: ['application/merge-patch+json', 'application/json-patch+json', 'application/json'],
      },
      rest: {
        kind: 'item',
        patch: {
          examples: {
            mergePatch: { price: 1799, metadata: { supplier: 'ACME', shelf: null } },
            jsonPatch: [
              { op: 'test', path: '/price', value: 1999 },
              { op: 'replace', path: '/price', value: 1799 },
              { op: 'add', path: '/metadata/supplier', value: 'ACME' },
            ],
          },
        },
        problems: ['not-found', 'gone', 'duplicate-resource', 'conflict', 'precondition-failed'],
      },
    })
    .input(ProductPatch)
    .output(Product)
    .mutation(({ ctx, input }) => products.patchProduct({ db: ctx.db, input, preconditions: ctx.preconditions })),

  delete: writer
    .meta({
      openapi: { method: 'DELETE', path: '/products/{id}', tags: ['products'], summary: 'Archive a product (admin)', description: 'Archives the product: orders keep referring to it, but it leaves listings, `GET` answers 410 and new order items naming it are 422. A repeated DELETE is 404.' },
      rest: { status: 204, problems: ['not-found', 'precondition-failed'] },
    })
    .input(IdParam)
    .output(z.void())
    .mutation(({ ctx, input }) => products.archiveProduct({ db: ctx.db, id: input.id, preconditions: ctx.preconditions })),
});
