import { z } from 'zod';
import { FULFILLMENT_STATUSES } from '../../db/schema.ts';
import { Id, listOf, PageQuery, text, Timestamp } from '../common.schemas.ts';

export const FulfillmentStatus = z.enum(FULFILLMENT_STATUSES).meta({ id: 'FulfillmentStatus', description: 'requested or shipped.' });

export const Fulfillment = z
  .object({
    id: Id,
    order_id: Id,
    status: FulfillmentStatus,
    carrier: z.string().nullable().meta({ description: 'Set once shipped.' }),
    tracking_number: z.string().nullable().meta({ description: 'Set once shipped.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Fulfillment' });
export type Fulfillment = z.infer<typeof Fulfillment>;

/** The order a fulfillment action acts on (the path's `{id}`). */
export const OrderIdParam = z.object({ id: Id.meta({ description: 'The order.' }) });

export const ShipmentInput = z
  .strictObject({
    id: Id.meta({ description: 'The order.' }),
    carrier: text(1, 100).meta({ example: 'UPS' }),
    tracking_number: text(1, 100).meta({ example: '1Z999AA10123456784' }),
  });
export type ShipmentInput = z.infer<typeof ShipmentInput>;

export const FulfillmentParams = z.object({
  id: Id.meta({ description: 'The order.' }),
  fulfillmentId: Id.meta({ description: 'The fulfillment.' }),
});
export type FulfillmentParams = z.infer<typeof FulfillmentParams>;

export const FulfillmentListQuery = z.object({
  id: Id.meta({ description: 'The order.' }),
  ...PageQuery,
});
export type FulfillmentListQuery = z.infer<typeof FulfillmentListQuery>;

export const FulfillmentList = listOf(Fulfillment).meta({ id: 'FulfillmentList' });
