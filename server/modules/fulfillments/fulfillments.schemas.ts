import { z } from 'zod';
import { FULFILLMENT_STATUSES } from './fulfillments.table.ts';
import { Id, listOf, PageQuery, pageExample, requestExample, responseExample, text, Timestamp } from '../common.schemas.ts';

export const FulfillmentStatus = z.enum(FULFILLMENT_STATUSES).meta({ id: 'FulfillmentStatus', description: 'requested or shipped.' });

export const Fulfillment = z
  .object({
    id: Id,
    order_id: Id,
    status: FulfillmentStatus,
    carrier: z.string().min(1).max(100).nullable().meta({ description: 'Set once shipped.' }),
    tracking_number: z.string().min(1).max(100).nullable().meta({ description: 'Set once shipped.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Fulfillment' });
export type Fulfillment = z.infer<typeof Fulfillment>;

/** The order a fulfillment action acts on (the path's `{id}`). */
export const OrderIdParam = z.strictObject({ id: Id.meta({ description: 'The order.' }) });

export const ShipmentInput = z
  .strictObject({
    id: Id.meta({ description: 'The order.' }),
    carrier: text(1, 100).meta({ example: 'UPS' }),
    tracking_number: text(1, 100).meta({ example: '1Z999AA10123456784' }),
  });
export type ShipmentInput = z.infer<typeof ShipmentInput>;

export const FulfillmentParams = z.strictObject({
  id: Id.meta({ description: 'The order.' }),
  fulfillmentId: Id.meta({ description: 'The fulfillment.' }),
});
export type FulfillmentParams = z.infer<typeof FulfillmentParams>;

export const FulfillmentListQuery = z.strictObject({
  id: Id.meta({ description: 'The order.' }),
  ...PageQuery,
});
export type FulfillmentListQuery = z.infer<typeof FulfillmentListQuery>;

export const FulfillmentList = listOf(Fulfillment).meta({ id: 'FulfillmentList' });

// Examples for the OpenAPI document (validated against the schemas by test/api/openapi.test.ts).
const shipped: Fulfillment = {
  id: 3,
  order_id: 17,
  status: 'shipped',
  carrier: 'UPS',
  tracking_number: '1Z999AA10123456784',
  created_at: '2026-02-01T09:00:00.000Z',
  updated_at: '2026-02-01T15:30:00.000Z',
};
requestExample(ShipmentInput, { id: 17, carrier: 'UPS', tracking_number: '1Z999AA10123456784' });
responseExample(Fulfillment, shipped);
responseExample(FulfillmentList, pageExample([shipped]));
