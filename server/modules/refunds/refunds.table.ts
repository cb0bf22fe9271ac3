/**
 * The refunds table, beside its module (drizzle.config.ts reads every `<name>.table.ts`;
 * docs/architecture.md#adding-a-module), with the reasons a refund may give.
 */
import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';
import { payments } from '../payments/payments.table.ts';

/** Why money went back (docs/api.md#refunds); a refund may give none. */
export const REFUND_REASONS = ['requested_by_customer', 'duplicate', 'fraudulent', 'other'] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];

/**
 * Refunds of a payment, partial or full; their sum is the payment's `amount_refunded`, which is
 * written in the same transaction. Refunds never change and are never deleted.
 */
export const refunds = pgTable(
  'refunds',
  {
    id: serial('id').primaryKey(),
    paymentId: integer('payment_id')
      .notNull()
      .references(() => payments.id),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    currency: text('currency').notNull(),
    reason: text('reason').$type<RefundReason>(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    // A payment's refunds, newest first (its list).
    index('refunds_payment_created_idx').on(t.paymentId, t.createdAt, t.id),
    check('refunds_amount_positive', sql`${t.amount} > 0`),
  ],
);
