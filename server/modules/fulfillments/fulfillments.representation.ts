/**
 * A fulfillment's columns and its representation, shared by the fulfillments service and an
 * order's `expand=fulfillments` (orders.expand.ts), which cannot import the service (it reaches
 * the orders service).
 */
import { fulfillments } from './fulfillments.table.ts';
import { iso } from '../common.schemas.ts';
import type { Fulfillment } from './fulfillments.schemas.ts';

export const fulfillmentColumns = {
  id: fulfillments.id,
  orderId: fulfillments.orderId,
  status: fulfillments.status,
  carrier: fulfillments.carrier,
  trackingNumber: fulfillments.trackingNumber,
  createdAt: fulfillments.createdAt,
  updatedAt: fulfillments.updatedAt,
};

export type FulfillmentRow = Pick<typeof fulfillments.$inferSelect, keyof typeof fulfillmentColumns>;

export const toFulfillment = (row: FulfillmentRow): Fulfillment => ({
  id: row.id,
  order_id: row.orderId,
  status: row.status,
  carrier: row.carrier,
  tracking_number: row.trackingNumber,
  created_at: iso(row.createdAt),
  updated_at: iso(row.updatedAt),
});
