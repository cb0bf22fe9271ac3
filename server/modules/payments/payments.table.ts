/**
 * The payments table, beside its module (drizzle.config.ts reads every `<name>.table.ts`;
 * docs/architecture.md#adding-a-module), with the payment methods.
 */
import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, pgTable, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { metadata } from '../../db/columns.ts';
import { orders } from '../orders/orders.table.ts';

export const PAYMENT_METHODS = ['card', 'bank_transfer', 'wallet'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

export const payments = pgTable(
  'payments',
  {
    id: serial('id').primaryKey(),
    orderId: integer('order_id')
      .notNull()
      .references(() => orders.id),
    // An order total can reach 100 lines x 10,000 units x 1,000,000,000 minor units: beyond integer.
    amount: bigint('amount', { mode: 'number' }).notNull(),
    currency: text('currency').notNull(),
    method: text('method').$type<PaymentMethod>().notNull(),
    status: text('status').$type<'captured'>().notNull().default('captured'),
    /** The sum of the payment's refunds, kept beside `amount` so the check below can bound it. */
    amountRefunded: bigint('amount_refunded', { mode: 'number' }).notNull().default(0),
    metadata: metadata(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    /** Its last refund (its creation until then): the payment's Last-Modified. */
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    index('payments_order_idx').on(t.orderId),
    // GET /payments, newest first (created_at, id descending): read backwards, page by page.
    index('payments_created_idx').on(t.createdAt, t.id),
    // Money is exactly-once: the database itself refuses a second captured payment of an order.
    uniqueIndex('payments_one_captured_per_order').on(t.orderId).where(sql`${t.status} = 'captured'`),
    // Never more refunded than was paid, whatever writes race (docs/api.md#refunds).
    check('payments_refunded_within_amount', sql`${t.amountRefunded} >= 0 and ${t.amountRefunded} <= ${t.amount}`),
  ],
);
