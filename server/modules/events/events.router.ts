import './events.scopes.ts';
import { declareTag } from '../../lib/api-tags.ts';
import { procedureFor, router } from '../../trpc/trpc.ts';
import { Event, EventIdParam, EventList, EventListQuery, OrderEventListQuery } from './events.schemas.ts';
import * as events from './events.service.ts';

// Every event: admins, and service clients with events:read (docs/api.md#scopes). One order's
// timeline follows the order's own rule: whoever may read the order (customers their own).
const reader = procedureFor({ roles: ['admin', 'service'], scope: 'events:read' });
const orderReader = procedureFor({ roles: ['customer', 'admin', 'service'], scope: 'orders:read' });
const tags = [declareTag('events', "What changed, as it happened: every change writes an event in its own transaction (`order.paid`, `product.updated`...), kept 30 days. Admins and service clients with `events:read` read them all; whoever may read an order reads its timeline.")];

export const eventsRouter = router({
  list: reader
    .meta({
      openapi: { method: 'GET', path: '/events', tags, summary: 'List events, newest first', description: 'Every change the service made in the last `EVENT_RETENTION_DAYS` (30), newest first, paged. `type` filters by types and prefixes (`order.*,payment.created`; an unknown type is 422), `order_id` by the order an event concerns.' },
      rest: { kind: 'list', cache: 'private' },
    })
    .input(EventListQuery)
    .output(EventList)
    .query(({ ctx, input }) => events.listEvents({ db: ctx.db, query: input, cursors: ctx.cursors })),

  get: reader
    .meta({
      openapi: { method: 'GET', path: '/events/{id}', tags, summary: 'Read an event', description: 'One event: its type, when it happened, and the resource as it then was (`data.object`), with the old values of what an update changed (`data.previous_attributes`).' },
      rest: { kind: 'item', cache: 'private', problems: ['not-found'] },
    })
    .input(EventIdParam)
    .output(Event)
    .query(({ ctx, input }) => events.getEvent({ db: ctx.db, id: input.id })),

  listForOrder: orderReader
    .meta({
      openapi: { method: 'GET', path: '/orders/{id}/events', tags, summary: "List an order's events (its timeline), newest first", description: "The events of one order, its payments and its fulfillments, newest first, paged; for whoever may read the order (another customer's order is 404, as its read is). `type` filters as on GET /api/v1/events." },
      rest: { kind: 'list', cache: 'private', problems: ['not-found'] },
    })
    .input(OrderEventListQuery)
    .output(EventList)
    .query(({ ctx, input }) => events.listOrderEvents({ db: ctx.db, caller: ctx.caller, query: input, cursors: ctx.cursors })),
});
