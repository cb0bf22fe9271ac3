/**
 * The fulfillments table, beside its module (drizzle.config.ts reads every `<name>.table.ts`;
 * docs/architecture.md#adding-a-module), with a fulfillment's statuses.
 */
import { sql } from 'drizzle-orm';
import { index, integer, pgTable, serial, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { timestamps } from '../../db/columns.ts';
import { orders } from '../orders/orders.table.ts';

export const FULFILLMENT_STATUSES = ['requested', 'shipped'] as const;
export type FulfillmentStatus = (typeof FULFILLMENT_STATUSES)[number];

export const fulfillments = pgTable(
  'fulfillments',
  {
    id: serial('id').primaryKey(),
    orderId: integer('order_id')
      .notNull()
      .references(() => orders.id, { onDelete: 'cascade' }),
    status: text('status').$type<FulfillmentStatus>().notNull(),
    carrier: text('carrier'),
    trackingNumber: text('tracking_number'),
    ...timestamps,
  },
  (t) => [
    index('fulfillments_order_idx').on(t.orderId),
    // At most one open (requested) fulfillment per order, whatever races.
    uniqueIndex('fulfillments_one_open_per_order').on(t.orderId).where(sql`${t.status} = 'requested'`),
  ],
);
