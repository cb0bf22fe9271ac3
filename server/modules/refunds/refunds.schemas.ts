import { z } from 'zod';
import { REFUND_REASONS } from './refunds.table.ts';
import { Currency, Id, listOf, MAX_ORDER_TOTAL, PageQuery, pageExample, requestExample, responseExample, Timestamp } from '../common.schemas.ts';

export const RefundReason = z
  .enum(REFUND_REASONS)
  .meta({ id: 'RefundReason', description: 'Why the money goes back: requested_by_customer, duplicate, fraudulent or other.' });

const RefundAmount = z.int().min(1).max(MAX_ORDER_TOTAL);

export const RefundInput = z.strictObject({
  id: Id.meta({ description: 'The payment.' }),
  amount: RefundAmount.optional().meta({
    description: 'Minor units, at least 1 and at most what remains of the payment (its `amount` less `amount_refunded`); omitted, all that remains.',
    example: 1999,
  }),
  reason: RefundReason.optional(),
  restock: z
    .boolean()
    .optional()
    .meta({
      description:
        'When this refund returns a delivered or completed order in full, put its items back in stock (default false). A paid order refunded in full always releases its reserved stock; otherwise ignored.',
    }),
});
export type RefundInput = z.infer<typeof RefundInput>;

export const Refund = z
  .object({
    id: Id,
    payment_id: Id,
    amount: RefundAmount.meta({ description: 'Minor units.' }),
    currency: Currency,
    reason: RefundReason.nullable().meta({ description: 'As given; null when none was (a paid order cancelled gives none).' }),
    created_at: Timestamp,
  })
  .meta({ id: 'Refund' });
export type Refund = z.infer<typeof Refund>;

export const RefundParams = z.strictObject({
  id: Id.meta({ description: 'The payment.' }),
  refundId: Id.meta({ description: 'The refund.' }),
});
export type RefundParams = z.infer<typeof RefundParams>;

export const RefundListQuery = z.strictObject({
  id: Id.meta({ description: 'The payment.' }),
  ...PageQuery,
});
export type RefundListQuery = z.infer<typeof RefundListQuery>;

export const RefundList = listOf(Refund).meta({ id: 'RefundList' });

// Examples for the OpenAPI document (validated against the schemas by test/api/openapi.test.ts).
const refund: Refund = { id: 2, payment_id: 5, amount: 1999, currency: 'USD', reason: 'requested_by_customer', created_at: '2026-02-03T10:00:00.000Z' };
requestExample(RefundInput, { id: 5, amount: 1999, reason: 'requested_by_customer' });
responseExample(Refund, refund);
responseExample(RefundList, pageExample([refund]));
