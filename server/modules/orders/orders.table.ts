/**
 * The orders and their lines, beside their module (drizzle.config.ts reads every `<name>.table.ts`;
 * docs/architecture.md#adding-a-module), with the statuses the column is typed with.
 */
import { sql, type SQLWrapper } from 'drizzle-orm';
import { bigint, index, integer, pgTable, serial, text } from 'drizzle-orm/pg-core';
import { metadata, timestamps } from '../../db/columns.ts';
import { users } from '../../db/schema.ts';
import { products } from '../products/products.table.ts';

/**
 * The statuses an order can have (docs/api.md#order-states; the moves between them are in
 * modules/orders/orders.rules.ts). Here, beside the column, so the column is typed with them; the
 * column stays text (no database enum), so the type adds no migration.
 */
export const ORDER_STATUSES = ['draft', 'confirmed', 'paid', 'shipped', 'delivered', 'completed', 'cancelled', 'refunded'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** The statuses of the `active` list filter; partial indexes below hold just these orders. */
export const ACTIVE_STATUSES: readonly OrderStatus[] = ['confirmed', 'paid', 'shipped', 'delivered'];

/**
 * `status in ('confirmed', ...)` with the statuses written out, not bound: PostgreSQL uses a
 * partial index only for a query whose condition it can prove implies the index's, which a
 * parameter (in a prepared statement's generic plan) never does. Closed set, no client input.
 */
export const isActiveOrder = (status: SQLWrapper) => sql`${status} in (${sql.raw(ACTIVE_STATUSES.map((s) => `'${s}'`).join(', '))})`;

export const orders = pgTable(
  'orders',
  {
    id: serial('id').primaryKey(),
    customerId: integer('customer_id')
      .notNull()
      .references(() => users.id),
    address: text('address'),
    status: text('status').$type<OrderStatus>().notNull().default('draft'),
    discountCode: text('discount_code'),
    currency: text('currency').notNull().default('USD'),
    /**
     * The sum of the lines (unit price x quantity), kept by the service whenever the lines are
     * written, so the list can sort by it from an index (the representation still sums the lines).
     */
    total: bigint('total', { mode: 'number' }).notNull().default(0),
    metadata: metadata(),
    ...timestamps,
  },
  // One index per list shape (everyone's or a customer's; any status, one status, or active), each
  // in the list's order (newest first, id breaking ties), so a page is an index range however
  // many orders there are, by cursor or by page 1 (issue 12; test/db/list-plans.test.ts).
  (t) => [
    index('orders_created_idx').on(t.createdAt, t.id),
    index('orders_status_created_idx').on(t.status, t.createdAt, t.id),
    index('orders_active_created_idx').on(t.createdAt, t.id).where(isActiveOrder(t.status)),
    index('orders_customer_created_idx').on(t.customerId, t.createdAt, t.id),
    index('orders_customer_status_created_idx').on(t.customerId, t.status, t.createdAt, t.id),
    index('orders_customer_active_created_idx').on(t.customerId, t.createdAt, t.id).where(isActiveOrder(t.status)),
    // The other sorts (issue 25), everyone's and a customer's, each read in either direction.
    index('orders_updated_idx').on(t.updatedAt, t.id),
    index('orders_customer_updated_idx').on(t.customerId, t.updatedAt, t.id),
    index('orders_total_idx').on(t.total, t.id),
    index('orders_customer_total_idx').on(t.customerId, t.total, t.id),
    // `metadata @> '{"key": "value"}'`: the list's metadata filter (jsonb_path_ops: containment only, smaller).
    index('orders_metadata_idx').using('gin', t.metadata.op('jsonb_path_ops')),
  ],
);

export const orderItems = pgTable(
  'order_items',
  {
    id: serial('id').primaryKey(),
    orderId: integer('order_id')
      .notNull()
      .references(() => orders.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    productId: integer('product_id')
      .notNull()
      .references(() => products.id),
    quantity: integer('quantity').notNull(),
    unitPrice: integer('unit_price').notNull(),
  },
  (t) => [index('order_items_order_idx').on(t.orderId)],
);
