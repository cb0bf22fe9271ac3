/**
 * The events of products (docs/api.md#events). Stock taken or given back by orders is not a
 * `product.updated`: the order's own event (`order.confirmed`, `order.cancelled`) records it.
 */
import { declareEvents } from '../../events/outbox.ts';
import type { Product } from './products.schemas.ts';

export const productEvents = declareEvents({
  types: {
    'product.created': 'A product was created.',
    'product.updated': 'A product was replaced with other values; `previous_attributes` holds the old ones.',
    'product.archived': 'A product was archived (DELETE): its reads answer 410 from now on; `data.object` is the product as it was.',
  },
  orderIdOf: (_product: Product) => null,
});
