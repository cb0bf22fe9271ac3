/** The events of payments (docs/api.md#events); each names its order, so it is in the order's timeline. */
import { declareEvents } from '../../events/outbox.ts';
import type { Payment } from './payments.schemas.ts';

export const paymentEvents = declareEvents({
  types: {
    'payment.created': 'A payment was captured (its order became paid in the same transaction: `order.paid`).',
  },
  orderIdOf: (payment: Payment) => payment.order_id,
});
