/** The events of payments (docs/api.md#events); each names its order, so it is in the order's timeline. */
import { declareEvents } from '../../events/outbox.ts';
import type { PaymentFields } from './payments.representation.ts';

export const paymentEvents = declareEvents({
  types: {
    'payment.created': 'A payment was captured (its order became paid in the same transaction: `order.paid`).',
    'payment.updated': "A payment's metadata changed (PATCH); `previous_attributes` holds the old `metadata` and `updated_at`. Money never moves by it.",
    'payment.refunded': 'Part or all of a payment was given back (`amount_refunded` grew; a refund in full also moves its order: `order.refunded`, or `order.cancelled` for a paid order cancelled).',
  },
  orderIdOf: (payment: PaymentFields) => payment.order_id,
});
