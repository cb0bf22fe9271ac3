/** The events of fulfillments (docs/api.md#events); each names its order, so it is in the order's timeline. */
import { declareEvents } from '../../events/outbox.ts';
import type { Fulfillment } from './fulfillments.schemas.ts';

export const fulfillmentEvents = declareEvents({
  types: {
    'fulfillment.created': 'A fulfillment was recorded: requested (send-to-fulfillment) or shipped at once.',
    'fulfillment.updated': 'A fulfillment changed (a requested one shipped, with its carrier and tracking number).',
  },
  orderIdOf: (fulfillment: Fulfillment) => fulfillment.order_id,
});
