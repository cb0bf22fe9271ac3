import { z } from 'zod';
import { PAYMENT_METHODS } from '../../db/schema.ts';
import { Currency, Id, listOf, PageQuery, Timestamp } from '../common.schemas.ts';

export const PaymentMethod = z.enum(PAYMENT_METHODS).meta({ id: 'PaymentMethod', description: 'card, bank_transfer or wallet.' });

export const PaymentInput = z
  .strictObject({
    order_id: Id.meta({ description: 'The order to pay; it must be confirmed.' }),
    // A safe integer (z.int()), positive: the column is bigint, and totals stay below 2^53.
    amount: z.int().min(1).meta({ description: "Minor units; must equal the order's total.", example: 4548 }),
    method: PaymentMethod,
  })
  .meta({ id: 'PaymentInput' });
export type PaymentInput = z.infer<typeof PaymentInput>;

export const Payment = z
  .object({
    id: Id,
    order_id: Id,
    amount: z.int().meta({ description: 'Minor units.' }),
    currency: Currency,
    method: PaymentMethod,
    status: z.literal('captured'),
    created_at: Timestamp,
  })
  .meta({ id: 'Payment' });
export type Payment = z.infer<typeof Payment>;

export const PaymentListQuery = z.object({
  order_id: Id.optional().meta({ description: 'Only the payments of this order.' }),
  ...PageQuery,
});
export type PaymentListQuery = z.infer<typeof PaymentListQuery>;

export const PaymentList = listOf(Payment).meta({ id: 'PaymentList' });
