/**
 * Payments (docs/api.md#payments): capturing one makes its order paid, in the same transaction as
 * the payment row. The order's lock (`lockOrder`) serializes payments of one order, and the
 * partial unique index `payments_one_captured_per_order` refuses a second captured payment even
 * if something bypassed the lock: money is taken at most once per order.
 */
import { and, eq, sql, type SQL } from 'drizzle-orm';
import { ownCustomerId } from '../../auth/policy.ts';
import type { Caller } from '../../auth/tokens.ts';
import type { Db } from '../../db/client.ts';
import { transaction, type UnitOfWork } from '../../db/unit-of-work.ts';
import { statement } from '../../db/statements.ts';
import { orders } from '../orders/orders.table.ts';
import { payments } from './payments.table.ts';
import { DomainError } from '../../errors/problems.ts';
import { isUniqueViolation } from '../../errors/db-errors.ts';
import { assertChangesOnly, parsePatched, patcherFor, type PatchLimits } from '../../lib/patch-documents.ts';
import { assertIfMatch } from '../../lib/preconditions.ts';
import type { Preconditions } from '../../trpc/context.ts';
import { sameMetadata, type Page } from '../common.schemas.ts';
import { listPage, newestFirst, type CursorCodec } from '../paging.ts';
import { orderTotal } from '../orders/orders.representation.ts';
import { invalidTransition, lockOrder, transition } from '../orders/orders.service.ts';
import { awaitsPayment, isPaid, type OrderStatus } from '../orders/orders.rules.ts';
import { paymentEvents } from './payments.events.ts';
import { paymentColumns, paymentFields, toPayment, type PaymentRow } from './payments.representation.ts';
import { PatchedPaymentMetadata, Payment, type PaymentInput, type PaymentListQuery, type PaymentPatch } from './payments.schemas.ts';

interface Access {
  db: Db;
  caller: Caller;
}

/** A payment row with its order's status, which decides the links (reads join the order anyway). */
const paymentWithOrderColumns = { ...paymentColumns, orderStatus: orders.status };

const fromRow = ({ orderStatus, ...row }: PaymentRow & { orderStatus: OrderStatus }): Payment => toPayment(row, orderStatus);

const notFound = (id: number) => new DomainError('not-found', `Payment ${id} does not exist.`);

/** The 409 of a payment the order's status does not take; `allowed` as for every refused move. */
function notPayable(orderId: number, status: OrderStatus): DomainError {
  const detail =
    status === 'paid'
      ? `Order ${orderId} is already paid.`
      : isPaid(status)
        ? `Order ${orderId} is already paid (it is ${status}).`
        : `Order ${orderId} is ${status}; only a confirmed order can be paid.`;
  return invalidTransition(status, 'paid', 'payment', detail);
}

const insertPayment = statement('payment_insert', (db) =>
  db
    .insert(payments)
    .values({
      orderId: sql.placeholder('orderId'),
      amount: sql.placeholder('amount'),
      currency: sql.placeholder('currency'),
      method: sql.placeholder('method'),
      metadata: sql`${sql.placeholder('metadata')}::jsonb`,
      status: 'captured',
    })
    .returning(paymentColumns),
);

/**
 * Captures a payment of a confirmed order and marks the order paid, in one transaction. The
 * order's status is checked before the amount: a paid or cancelled order takes no amount at all.
 */
export async function createPayment({ db, work, caller, input }: Access & { work?: UnitOfWork; input: PaymentInput }): Promise<Payment> {
  try {
    return await transaction(work ?? db, async (tx) => {
      // 404 for a customer's look at another customer's order, as for a missing one.
      const order = await lockOrder(tx, { id: input.order_id, caller });
      if (!awaitsPayment(order.row.status)) throw notPayable(order.row.id, order.row.status);
      const total = orderTotal(order.items);
      if (input.amount !== total) {
        throw new DomainError('validation-error', `The amount must equal the order's total, ${total} ${order.row.currency}.`, {
          errors: [{ field: 'amount', message: `must equal the order's total (${total})` }],
        });
      }
      const [row] = await insertPayment(tx, { orderId: order.row.id, amount: input.amount, currency: order.row.currency, method: input.method, metadata: JSON.stringify(input.metadata ?? {}) });
      if (!row) throw new Error('payment insert returned no row');
      // The event's object carries no `_links`, so the order's status before the move does not show in it.
      await paymentEvents.record(tx, { type: 'payment.created', object: toPayment(row, order.row.status) });
      await transition(tx, order, 'paid', 'payment', caller);
      return toPayment(row, order.row.status);
    });
  } catch (error) {
    // Only reachable by a writer that did not take the order's lock; the order is paid then.
    if (isUniqueViolation(error, 'payments_one_captured_per_order')) throw notPayable(input.order_id, 'paid');
    throw error;
  }
}

/** Customers see the payments of their own orders only: the order's customer decides. */
function visibleTo(caller: Caller): SQL | undefined {
  const own = ownCustomerId(caller);
  return own === undefined ? undefined : eq(orders.customerId, own);
}

export async function getPayment({ db, caller, id }: Access & { id: number }): Promise<Payment> {
  const [row] = await db
    .select(paymentWithOrderColumns)
    .from(payments)
    .innerJoin(orders, eq(orders.id, payments.orderId))
    .where(and(eq(payments.id, id), visibleTo(caller)));
  if (!row) throw notFound(id);
  return fromRow(row);
}

/** A payment is a dozen members and at most 50 metadata pairs: far below these bounds (lib/patch-documents.ts). */
const PAYMENT_PATCH_LIMITS: PatchLimits = { operations: 200, nodes: 500, textChars: 64 * 1024, noun: 'payment' };

/**
 * PATCH (docs/api.md#payments): the patch applies to the payment's representation, and only its
 * metadata may differ afterwards. Only the payment row is locked: a refund locks its order first,
 * then the payment, so taking the payment alone cannot deadlock with one. A patch that changes
 * nothing changes nothing (no event, the same ETag).
 */
export async function patchPayment({ db, input, preconditions }: { db: Db; input: PaymentPatch; preconditions: Preconditions }): Promise<Payment> {
  const patch = patcherFor(input, PAYMENT_PATCH_LIMITS);
  return transaction(db, async (tx) => {
    const [current] = await tx.select(paymentColumns).from(payments).where(eq(payments.id, input.id)).for('update');
    if (!current) throw notFound(input.id);
    const [order] = await tx.select({ status: orders.status }).from(orders).where(eq(orders.id, current.orderId));
    if (!order) throw notFound(input.id);
    const before = toPayment(current, order.status);
    assertIfMatch(preconditions, Payment, before);
    const patched = patch(before);
    assertChangesOnly(before, patched, ['metadata'], 'payment');
    const metadata = parsePatched(PatchedPaymentMetadata, patched).metadata ?? {};
    if (sameMetadata(current.metadata, metadata)) return before;
    const [row] = await tx.update(payments).set({ metadata, updatedAt: new Date() }).where(eq(payments.id, input.id)).returning(paymentColumns);
    if (!row) throw notFound(input.id);
    await paymentEvents.record(tx, { type: 'payment.updated', object: paymentFields(row), previous: paymentFields(current) });
    return toPayment(row, order.status);
  });
}

/** Newest first, like the other lists; `order_id` narrows to one order's payments. */
const paymentOrder = newestFirst<{ createdAt: Date; id: number }>(payments.createdAt, payments.id, 'integer', (row) => row.id);

export async function listPayments({ db, caller, query, cursors }: Access & { query: PaymentListQuery; cursors: CursorCodec }): Promise<Page<Payment>> {
  const binding = JSON.stringify(['payments', query.order_id ?? null]);
  return listPage(
    { cursors, binding, terms: paymentOrder, query },
    (page) =>
      page.rowsOf(
        db.select(paymentWithOrderColumns).from(payments).innerJoin(orders, eq(orders.id, payments.orderId)).$dynamic(),
        and(visibleTo(caller), query.order_id === undefined ? undefined : eq(payments.orderId, query.order_id)),
      ),
    fromRow,
  );
}
