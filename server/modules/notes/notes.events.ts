/**
 * The event of order notes (docs/api.md#events). It names no order (`orderIdOf` is null), so a
 * staff note never reaches the order's timeline, which the order's customer reads; admins and
 * services with `events:read` see it in the event list, and webhooks may take it.
 */
import { declareEvents } from '../../events/outbox.ts';
import type { OrderNote } from './notes.schemas.ts';

export const noteEvents = declareEvents({
  types: {
    'order_note.created': 'A staff note was written on an order.',
  },
  orderIdOf: (_note: OrderNote) => null,
});
