/**
 * An order as the API answers it (docs/api.md#resources and #order-states): lines in position order, totals,
 * and the `_links` its status allows (each one asks the state table). Built from rows and a base
 * path the caller supplies, so this module knows nothing of the HTTP layer that serves it.
 */
import type { orderItems, orders } from './orders.table.ts';
import { iso } from '../common.schemas.ts';
import { orderLinks } from './orders.links.ts';
import { awaitsPayment, awaitsShipment, findTransition, mayHaveFulfillments } from './orders.rules.ts';
import type { Order } from './orders.schemas.ts';

export type OrderRow = typeof orders.$inferSelect;
export type ItemRow = typeof orderItems.$inferSelect;

/** An order row with its lines, as read (and locked) inside a transaction. */
export interface LoadedOrder {
  row: OrderRow;
  items: ItemRow[];
}

/** The order's total: the sum of its lines (unit price when set x quantity), minor units. */
export const orderTotal = (items: readonly ItemRow[]): number => items.reduce((sum, item) => sum + item.unitPrice * item.quantity, 0);

/** `basePath` is where resources live, e.g. `/api/v1`: links are `${basePath}/orders/{id}...`. */
export function toOrder({ row, items }: LoadedOrder, basePath: string): Order {
  const { status } = row;
  const self = `${basePath}/orders/${row.id}`;
  const links: Order['_links'] = { self: { href: self, method: 'GET' } };
  if (findTransition(status, 'confirmed', 'confirm')) links.confirm = { href: `${self}/confirm`, method: 'POST' };
  if (findTransition(status, 'cancelled', 'cancel')) links.cancel = { href: `${self}/cancel`, method: 'POST' };
  if (awaitsPayment(status)) links.pay = { href: `${basePath}/payments`, method: 'POST' };
  if (awaitsShipment(status)) links['send-to-fulfillment'] = { href: `${self}/send-to-fulfillment`, method: 'POST' };
  if (mayHaveFulfillments(status)) links.fulfillments = { href: `${self}/fulfillments`, method: 'GET' };
  // Then the links other modules declare (order notes' `notes`).
  Object.assign(links, orderLinks.linksOf(row, self));
  const lines = [...items]
    .sort((a, b) => a.position - b.position)
    .map((item) => ({
      product_id: item.productId,
      quantity: item.quantity,
      unit_price: item.unitPrice,
      line_total: item.unitPrice * item.quantity,
    }));
  return {
    id: row.id,
    customer_id: row.customerId,
    items: lines,
    address: row.address,
    status,
    discount_code: row.discountCode,
    currency: row.currency,
    total: lines.reduce((sum, line) => sum + line.line_total, 0),
    metadata: row.metadata,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    _links: links,
  };
}
