/**
 * The problem type of stock (docs/api.md#errors), declared here and collected into the one
 * catalogue (server/errors/problems.ts); `ProblemSlug` knows it through `DeclaredProblems`.
 * products.stock.ts, which throws it, imports this file.
 */
import { declareProblems } from '../../errors/problems.ts';

export const productProblems = declareProblems({
  'insufficient-stock': {
    status: 409,
    title: 'Insufficient stock',
    code: 'CONFLICT',
    description: 'One or more order lines cannot be reserved from stock; nothing was reserved. `product_ids` names the products whose stock is short.',
    openapi: {
      properties: {
        product_ids: { type: 'array', items: { type: 'integer', minimum: 1, maximum: 2_147_483_647 }, minItems: 1, description: 'Products whose stock is short.' },
      },
      required: ['product_ids'],
      example: { detail: 'Not enough stock for product 42.', product_ids: [42] },
    },
  },
});

declare module '../../errors/problems.ts' {
  interface DeclaredProblems {
    products: typeof productProblems;
  }
}
