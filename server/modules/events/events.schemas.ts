import { z } from 'zod';
import { Id, listOf, PageQuery, pageExample, responseExample, Timestamp } from '../common.schemas.ts';

/** `evt_` and 20 base64url characters (server/events/outbox.ts); anything else names no event (404). */
export const EventId = z
  .string()
  .regex(/^evt_[A-Za-z0-9_-]{20}$/)
  .meta({ description: 'Identifier of the event (`evt_` and 20 characters); the same on every delivery of it.', example: 'evt_3q2Yz0mXk9bTfP1sLw8d' });

const Attributes = z.record(z.string(), z.unknown());

export const Event = z
  .object({
    id: EventId,
    type: z.string().meta({ description: 'What happened: `<resource>.<what>`, one of the types of GET /api/v1/events (`order.paid`).', example: 'order.paid' }),
    created_at: Timestamp.meta({ description: 'When the change was made (its transaction began), RFC 3339 UTC.' }),
    api_version: z.string().meta({ description: 'The API version `data.object` is written in.', example: 'v1' }),
    data: z.object({
      object: Attributes.meta({ description: 'The resource as its GET answered right after the change (without `_links`); for a deletion, as it was.' }),
      previous_attributes: Attributes.optional().meta({ description: 'Updates only: the old values of the fields that changed.' }),
    }),
  })
  .meta({ id: 'Event' });
export type Event = z.infer<typeof Event>;

export const EventIdParam = z.strictObject({ id: EventId });

/** A comma list of types; long enough for every type spelled out. */
const TypeFilter = z
  .string()
  .max(1024)
  .optional()
  // No example on a filter: the docs page fills it in (docs/api.md#the-openapi-document).
  .meta({ description: 'Only events of these types: a comma list of types (`order.paid`) and resource prefixes (`order.*`), such as `order.*,payment.created`. An unknown type is 422.' });

export const EventListQuery = z
  .strictObject({
    type: TypeFilter,
    order_id: Id.optional().meta({ description: 'Only the events of this order (its own, its payments\' and fulfillments\').', example: undefined }),
    ...PageQuery,
  })
  // No input at all is the first page of everything: `list()` needs no `{}`.
  .prefault({});
export type EventListQuery = z.infer<typeof EventListQuery>;

export const OrderEventListQuery = z.strictObject({
  id: Id.meta({ description: 'The order.' }),
  type: TypeFilter,
  ...PageQuery,
});
export type OrderEventListQuery = z.infer<typeof OrderEventListQuery>;

export const EventList = listOf(Event).meta({ id: 'EventList' });

// Examples for the OpenAPI document (validated against the schemas by test/api/openapi.test.ts).
const paid: Event = {
  id: 'evt_3q2Yz0mXk9bTfP1sLw8d',
  type: 'order.paid',
  created_at: '2026-01-31T12:10:00.000Z',
  api_version: 'v1',
  data: {
    object: {
      id: 17,
      customer_id: 4,
      items: [{ product_id: 3, quantity: 2, unit_price: 1299, line_total: 2598 }],
      address: '1 Main St, Springfield',
      status: 'paid',
      discount_code: null,
      currency: 'USD',
      total: 2598,
      created_at: '2026-01-31T12:00:00.000Z',
      updated_at: '2026-01-31T12:10:00.000Z',
    },
    previous_attributes: { status: 'confirmed', updated_at: '2026-01-31T12:05:00.000Z' },
  },
};
responseExample(Event, paid);
responseExample(EventList, pageExample([paid]));
