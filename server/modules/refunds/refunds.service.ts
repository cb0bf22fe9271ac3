/**
 * Refunds (docs/api.md#refunds): a payment given back in part or in full. A refund locks the
 * payment's order (`lockOrder`, as payments do), then the payment, so refunds of one payment
 * serialize and each sees what the previous ones left; the ledger's conditional update and the
 * check `payments_refunded_within_amount` refuse a sum beyond the payment whatever happens. A
 * refund that leaves nothing of the payment moves the order to `refunded` through the state
 * table, in the same transaction.
 */
import { and, eq } from 'drizzle-orm';
import { ownCustomerId } from '../../auth/policy.ts';
import type { Caller } from '../../auth/tokens.ts';
import type { Db } from '../../db/client.ts';
import { transaction, type UnitOfWork } from '../../db/unit-of-work.ts';
import { orders } from '../orders/orders.table.ts';
import { payments } from '../payments/payments.table.ts';
import { refunds } from './refunds.table.ts';
import { DomainError } from '../../errors/problems.ts';
import { iso, type Page } from '../common.schemas.ts';
import { listPage, newestFirst, type CursorCodec } from '../paging.ts';
import { acceptsRefund, findTransition, holdsStock } from '../orders/orders.rules.ts';
import { invalidTransition, lockOrder, transition } from '../orders/orders.service.ts';
import { releaseStock } from '../products/products.stock.ts';
import { exceedsPayment, lockPayment, recordRefund, refundColumns, remainingOf, type RefundRow } from './refunds.ledger.ts';
import type { Refund, RefundInput, RefundListQuery, RefundParams } from './refunds.schemas.ts';

interface Access {
  db: Db;
  caller: Caller;
}

const toRefund = (row: RefundRow): Refund => ({
  id: row.id,
  payment_id: row.paymentId,
  amount: row.amount,
  currency: row.currency,
  reason: row.reason,
  created_at: iso(row.createdAt),
});

const paymentNotFound = (id: number) => new DomainError('not-found', `Payment ${id} does not exist.`);

/**
 * The order of payment `id`, if `caller` may see the payment (a customer sees those of their own
 * orders): another customer's payment is 404, as a missing one.
 */
async function orderOfPayment(db: Db, caller: Caller, id: number): Promise<number> {
  const own = ownCustomerId(caller);
  const [row] = await db
    .select({ orderId: payments.orderId })
    .from(payments)
    .innerJoin(orders, eq(orders.id, payments.orderId))
    .where(and(eq(payments.id, id), own === undefined ? undefined : eq(orders.customerId, own)));
  if (!row) throw paymentNotFound(id);
  return row.orderId;
}

/**
 * Refunds `amount` (default: all that remains) of a payment. More than remains, or anything once
 * nothing remains, is 422 `refund-exceeds-payment`; a refund that would leave nothing while the
 * order cannot become refunded (shipped, not yet delivered) is 409 `invalid-state-transition`.
 */
export async function createRefund({ db, work, caller, input }: Access & { work?: UnitOfWork; input: RefundInput }): Promise<Refund> {
  return transaction(work ?? db, async (tx) => {
    const order = await lockOrder(tx, { id: await orderOfPayment(tx, caller, input.id), caller });
    // Read under the order's lock: every earlier refund of this payment has committed or rolled back.
    const payment = await lockPayment(tx, input.id);
    if (!payment) throw paymentNotFound(input.id);
    const remaining = remainingOf(payment);
    const amount = input.amount ?? remaining;
    if (remaining === 0 || amount > remaining) throw exceedsPayment(payment, amount);
    const from = order.row.status;
    const full = amount === remaining;
    if (!acceptsRefund(from) || (full && !findTransition(from, 'refunded', 'refund'))) {
      throw invalidTransition(
        from,
        'refunded',
        'refund',
        from === 'shipped'
          ? `Order ${order.row.id} is on its way (shipped): refund part of payment ${payment.id} now, or all of it once the order is delivered.`
          : `Order ${order.row.id} is ${from}; its payment cannot be refunded.`,
      );
    }
    const row = await recordRefund(tx, payment, amount, input.reason ?? null);
    if (full) {
      await transition(tx, order, 'refunded', 'refund', caller);
      // A return: the goods came back, and only the caller knows whether they can be sold again.
      if (input.restock === true && !holdsStock(from)) await releaseStock(tx, order.items);
    }
    return toRefund(row);
  });
}

export async function getRefund({ db, caller, params }: Access & { params: RefundParams }): Promise<Refund> {
  await orderOfPayment(db, caller, params.id);
  const [row] = await db
    .select(refundColumns)
    .from(refunds)
    .where(and(eq(refunds.paymentId, params.id), eq(refunds.id, params.refundId)));
  if (!row) throw new DomainError('not-found', `Payment ${params.id} has no refund ${params.refundId}.`);
  return toRefund(row);
}

/** Newest first, like the other lists. */
const refundOrder = newestFirst<{ createdAt: Date; id: number }>(refunds.createdAt, refunds.id, 'integer', (row) => row.id);

export async function listRefunds({ db, caller, query, cursors }: Access & { query: RefundListQuery; cursors: CursorCodec }): Promise<Page<Refund>> {
  await orderOfPayment(db, caller, query.id);
  const binding = JSON.stringify(['refunds', query.id]);
  return listPage({ cursors, binding, terms: refundOrder, query }, (page) => page.rowsOf(db.select(refundColumns).from(refunds).$dynamic(), eq(refunds.paymentId, query.id)), toRefund);
}
