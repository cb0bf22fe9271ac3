/**
 * A payment's columns and its fields as the API answers them: shared by the payments service, an
 * order's `expand=payments` (orders.expand.ts) and the refunds ledger (which records
 * `payment.refunded` with them, and cannot import the service: the service reaches orders, and
 * orders reach the ledger to refund a cancelled paid order).
 */
import { payments } from './payments.table.ts';
import { API_PREFIX } from '../../lib/api-paths.ts';
import { acceptsRefund, type OrderStatus } from '../orders/orders.rules.ts';
import type { Payment } from './payments.schemas.ts';

export const paymentColumns = {
  id: payments.id,
  orderId: payments.orderId,
  amount: payments.amount,
  amountRefunded: payments.amountRefunded,
  currency: payments.currency,
  method: payments.method,
  status: payments.status,
  metadata: payments.metadata,
  createdAt: payments.createdAt,
  updatedAt: payments.updatedAt,
};

export type PaymentRow = Pick<typeof payments.$inferSelect, keyof typeof paymentColumns>;

/** The payment as a GET answers it, without `_links` (what an event carries). */
export type PaymentFields = Omit<Payment, '_links'>;

export function paymentFields(row: PaymentRow): PaymentFields {
  return {
    id: row.id,
    order_id: row.orderId,
    amount: row.amount,
    amount_refunded: row.amountRefunded,
    currency: row.currency,
    method: row.method,
    status: row.status,
    metadata: row.metadata,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/**
 * The payment as the API answers it, links under the API's base path: `refund` while something
 * remains and the order's status takes a refund (docs/api.md#refunds).
 */
export function toPayment(row: PaymentRow, orderStatus: OrderStatus): Payment {
  const self = `${API_PREFIX}/payments/${row.id}`;
  const links: Payment['_links'] = {
    self: { href: self, method: 'GET' },
    order: { href: `${API_PREFIX}/orders/${row.orderId}`, method: 'GET' },
    refunds: { href: `${self}/refunds`, method: 'GET' },
  };
  if (row.amountRefunded < row.amount && acceptsRefund(orderStatus)) links.refund = { href: `${self}/refunds`, method: 'POST' };
  return { ...paymentFields(row), _links: links };
}
