/**
 * The money side of refunds (docs/api.md#refunds), for the modules that give a payment back: the
 * refunds module (partial or full refunds) and orders (cancelling a paid order refunds it in
 * full). Each function takes the caller's unit of work (a pool's handle is refused, by the type
 * and at run time), whose transaction holds the order's lock; the order's lock serializes refunds
 * of one payment, and the check `payments_refunded_within_amount` refuses a sum beyond the payment
 * even if something bypassed the lock.
 */
import './refunds.problems.ts';
import { and, eq, sql } from 'drizzle-orm';
import { assertUnitOfWork, type UnitOfWork } from '../../db/unit-of-work.ts';
import { statement } from '../../db/statements.ts';
import { payments } from '../payments/payments.table.ts';
import { refunds, type RefundReason } from './refunds.table.ts';
import { DomainError } from '../../errors/problems.ts';
import { paymentEvents } from '../payments/payments.events.ts';
import { paymentColumns, paymentFields, type PaymentRow } from '../payments/payments.representation.ts';

/** A payment as a refund needs it: what was paid and what was given back already (the whole row, for its event). */
export type RefundablePayment = PaymentRow;

export const refundColumns = {
  id: refunds.id,
  paymentId: refunds.paymentId,
  amount: refunds.amount,
  currency: refunds.currency,
  reason: refunds.reason,
  createdAt: refunds.createdAt,
};

export type RefundRow = Pick<typeof refunds.$inferSelect, keyof typeof refundColumns>;

const refundableColumns = paymentColumns;

const paymentLocked = statement('payment_refundable_locked', (db) =>
  db
    .select(refundableColumns)
    .from(payments)
    .where(eq(payments.id, sql.placeholder('id')))
    .for('update'),
);

const capturedPaymentLocked = statement('payment_captured_of_order_locked', (db) =>
  db
    .select(refundableColumns)
    .from(payments)
    .where(and(eq(payments.orderId, sql.placeholder('orderId')), eq(payments.status, 'captured')))
    .for('update'),
);

/** Payment `id` locked FOR UPDATE until `tx` ends, as it now is; undefined when there is none. */
export async function lockPayment(tx: UnitOfWork, id: number): Promise<RefundablePayment | undefined> {
  const [row] = await paymentLocked(tx, { id });
  return row;
}

/** What may still be refunded of `payment`. */
export const remainingOf = (payment: RefundablePayment): number => payment.amount - payment.amountRefunded;

/** The 422 of a refund asking for more than remains (or for anything, once nothing remains). */
export function exceedsPayment(payment: RefundablePayment, amount: number | undefined): DomainError {
  const remaining = remainingOf(payment);
  const detail =
    payment.amount === 0
      ? `Payment ${payment.id} paid a free order; it has nothing to refund.`
      : remaining === 0
        ? `Payment ${payment.id} is already refunded in full; nothing remains to refund.`
        : `The refund of ${amount} exceeds what remains of payment ${payment.id} (${remaining} ${payment.currency}).`;
  return new DomainError('refund-exceeds-payment', detail, {
    errors: [{ field: 'amount', message: remaining === 0 ? 'nothing remains of the payment to refund' : `must be at most ${remaining}, what remains of the payment` }],
    extensions: { amount_refundable: remaining },
  });
}

const addRefunded = statement('payment_add_refunded', (db) =>
  db
    .update(payments)
    .set({ amountRefunded: sql`${payments.amountRefunded} + ${sql.placeholder('amount')}`, updatedAt: sql`now()` })
    .where(and(eq(payments.id, sql.placeholder('id')), sql`${payments.amountRefunded} + ${sql.placeholder('amount')} <= ${payments.amount}`))
    .returning(paymentColumns),
);

const insertRefund = statement('refund_insert', (db) =>
  db
    .insert(refunds)
    .values({ paymentId: sql.placeholder('paymentId'), amount: sql.placeholder('amount'), currency: sql.placeholder('currency'), reason: sql.placeholder('reason') })
    .returning(refundColumns),
);

/**
 * Records a refund of `amount` (1 to what remains) of a locked payment and adds it to the
 * payment's `amount_refunded`; `payment` is updated to match. The update adds only while the sum
 * stays within the payment, so even a caller that skipped the checks cannot refund too much.
 */
export async function recordRefund(tx: UnitOfWork, payment: RefundablePayment, amount: number, reason: RefundReason | null): Promise<RefundRow> {
  assertUnitOfWork(tx);
  const [updated] = await addRefunded(tx, { id: payment.id, amount });
  if (!updated) throw exceedsPayment(payment, amount);
  const [row] = await insertRefund(tx, { paymentId: payment.id, amount, currency: payment.currency, reason });
  if (!row) throw new Error('refund insert returned no row');
  await paymentEvents.record(tx, { type: 'payment.refunded', object: paymentFields(updated), previous: paymentFields(payment) });
  payment.amountRefunded = updated.amountRefunded;
  payment.updatedAt = updated.updatedAt;
  return row;
}

/**
 * Refunds what remains of the order's captured payment, if anything does (a free order's payment
 * of 0 has nothing to give back): the money side of cancelling a paid order.
 */
export async function refundRemaining(tx: UnitOfWork, orderId: number): Promise<void> {
  const [payment] = await capturedPaymentLocked(tx, { orderId });
  if (payment === undefined) return;
  const remaining = remainingOf(payment);
  if (remaining > 0) await recordRefund(tx, payment, remaining, null);
}
