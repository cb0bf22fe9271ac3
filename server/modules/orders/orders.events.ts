/**
 * The events of orders (docs/api.md#events): created, updated (fields other than the status),
 * one per status an order enters (`order.paid`...), and deleted. A draft is entered only by
 * creation, so `order.created` stands for it. The status types follow ORDER_STATUSES, so a status
 * added there has its event.
 */
import { declareEvents } from '../../events/outbox.ts';
import { ORDER_STATUSES, type OrderStatus } from './orders.rules.ts';
import type { Order } from './orders.schemas.ts';

/** The statuses an order moves into (every one but draft). */
export type EnteredStatus = Exclude<OrderStatus, 'draft'>;

const entered = ORDER_STATUSES.filter((status): status is EnteredStatus => status !== 'draft');

const statusTypes = Object.fromEntries(entered.map((status) => [`order.${status}`, `An order became ${status}.`])) as Record<`order.${EnteredStatus}`, string>;

export const orderEvents = declareEvents({
  types: {
    'order.created': 'An order was created (always a draft).',
    'order.updated': 'Fields of an order other than its status changed; `previous_attributes` holds their old values.',
    ...statusTypes,
    'order.deleted': 'An order was deleted; `data.object` is the order as it was.',
  },
  orderIdOf: (order: Order) => order.id,
});
