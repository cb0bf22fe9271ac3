import { z } from 'zod';
import { WEBHOOK_DELIVERY_STATES } from './webhooks.table.ts';
import { EventId } from '../events/events.schemas.ts';
import { Id, listOf, MAX_INT, PageQuery, pageExample, requestExample, responseExample, text, Timestamp } from '../common.schemas.ts';

/** The most types and prefixes one endpoint names: more than every type there is. */
export const MAX_ENABLED_EVENTS = 64;

// `text`: no control characters (a NUL would reach PostgreSQL, which refuses it) or lone surrogates.
const WebhookUrl = text(1, 2048).meta({
    description:
      'Where events are POSTed: `https`, or `http` to a loopback host outside production; no credentials, no fragment. In production a host that resolves to a loopback, private or link-local address is refused unless `WEBHOOK_ALLOWED_HOSTS` names it (422 naming `url`).',
    example: 'https://hooks.example.com/orders',
  });

const EnabledEvents = z
  .array(z.string().max(64))
  .min(1)
  .max(MAX_ENABLED_EVENTS)
  .meta({
    description: 'The event types sent to the endpoint: types (`payment.created`), resource prefixes (`order.*`), or `["*"]` for every type. An unknown type is 422.',
    example: ['order.*', 'payment.created'],
  });

const Description = text(0, 500).meta({ description: 'What the endpoint is for (yours; not sent anywhere).', example: 'Warehouse' });

const Secret = z
  .string()
  .regex(/^whsec_[A-Za-z0-9+/]+=*$/)
  .meta({
    description: 'The signing secret: `whsec_` and the base64 of 32 random bytes. Shown only when the endpoint is made and when the secret is rotated; keep it.',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw2b6pHs3ZLvo=',
  });

export const WebhookEndpointInput = z.strictObject({
  url: WebhookUrl,
  enabled_events: EnabledEvents,
  description: Description.optional(),
});
export type WebhookEndpointInput = z.infer<typeof WebhookEndpointInput>;

export const WebhookEndpoint = z
  .object({
    id: Id,
    url: WebhookUrl,
    description: Description.nullable(),
    enabled_events: EnabledEvents,
    disabled: z.boolean().meta({ description: 'A disabled endpoint is sent nothing, and events recorded meanwhile make no delivery for it; its pending deliveries wait until it is enabled again.' }),
    disabled_reason: z
      .enum(['requested', 'gone'])
      .nullable()
      .meta({ description: 'Why it is disabled: `requested` (a PATCH), or `gone` (the receiver answered 410 Gone); null while enabled.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'WebhookEndpoint' });
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

export const WebhookEndpointWithSecret = WebhookEndpoint.extend({
  secret: Secret,
  previous_secret_expires_at: Timestamp.nullable().meta({ description: 'Until when deliveries are signed with the previous secret too (24 hours after a rotation); null when there is none.' }),
}).meta({ id: 'WebhookEndpointWithSecret' });
export type WebhookEndpointWithSecret = z.infer<typeof WebhookEndpointWithSecret>;

/**
 * The 201 of a creation: the endpoint with its secret, shown this once. An `Idempotency-Key`
 * replay answers the endpoint without it (the key's stored result never holds it).
 */
export const CreatedWebhookEndpoint = WebhookEndpoint.extend({
  secret: Secret.optional().meta({
    description: 'The signing secret, in the answer to the creation only: never shown again (not by GET, not in an Idempotency-Key replay). Store it now.',
  }),
  previous_secret_expires_at: Timestamp.nullable().optional().meta({ description: 'Null at creation (no previous secret); absent in a replay.' }),
}).meta({ id: 'CreatedWebhookEndpoint' });

export const WebhookEndpointPatch = z.strictObject({
  id: Id,
  url: WebhookUrl.optional(),
  enabled_events: EnabledEvents.optional(),
  description: Description.nullable().optional().meta({ description: 'What the endpoint is for; null removes it.' }),
  disabled: z.boolean().optional().meta({ description: '`true` stops deliveries to the endpoint, `false` resumes them.' }),
});
export type WebhookEndpointPatch = z.infer<typeof WebhookEndpointPatch>;

export const WebhookEndpointListQuery = z
  .strictObject({ ...PageQuery })
  // No input at all is the first page: `list()` needs no `{}`.
  .prefault({});
export type WebhookEndpointListQuery = z.infer<typeof WebhookEndpointListQuery>;

export const WebhookEndpointList = listOf(WebhookEndpoint).meta({ id: 'WebhookEndpointList' });

export const WebhookDelivery = z
  .object({
    id: Id,
    endpoint_id: Id,
    event_id: EventId,
    event_type: z.string().meta({ description: 'The type of the event delivered.', example: 'order.paid' }),
    state: z.enum(WEBHOOK_DELIVERY_STATES).meta({ description: '`pending` (due, or waiting for its next attempt), `succeeded` (a 2xx), or `failed` (every attempt failed, or the receiver answered 410).' }),
    attempts: z.int().min(0).max(MAX_INT).meta({ description: 'Attempts made so far.' }),
    last_status: z.int().min(100).max(599).nullable().meta({ description: 'The HTTP status of the last attempt; null when it got none (no attempt yet, a timeout, a refused connection).' }),
    last_error: z.string().nullable().meta({ description: 'Why the last attempt failed; null when it succeeded or none was made.' }),
    last_attempt_at: Timestamp.nullable(),
    next_attempt_at: Timestamp.nullable().meta({ description: 'When it is next attempted (pending only); null once succeeded or failed.' }),
    created_at: Timestamp,
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const WebhookDeliveryListQuery = z.strictObject({
  id: Id.meta({ description: 'The endpoint.' }),
  ...PageQuery,
});
export type WebhookDeliveryListQuery = z.infer<typeof WebhookDeliveryListQuery>;

export const WebhookDeliveryList = listOf(WebhookDelivery).meta({ id: 'WebhookDeliveryList' });

export const WebhookDeliveryParams = z.strictObject({
  id: Id.meta({ description: 'The endpoint.' }),
  deliveryId: Id.meta({ description: 'The delivery.' }),
});
export type WebhookDeliveryParams = z.infer<typeof WebhookDeliveryParams>;

// Examples for the OpenAPI document (validated against the schemas by test/api/openapi.test.ts).
const endpoint: WebhookEndpoint = {
  id: 3,
  url: 'https://hooks.example.com/orders',
  description: 'Warehouse',
  enabled_events: ['order.*', 'payment.created'],
  disabled: false,
  disabled_reason: null,
  created_at: '2026-02-01T09:00:00.000Z',
  updated_at: '2026-02-01T09:00:00.000Z',
};
const delivery: WebhookDelivery = {
  id: 41,
  endpoint_id: 3,
  event_id: 'evt_3q2Yz0mXk9bTfP1sLw8d',
  event_type: 'order.paid',
  state: 'pending',
  attempts: 1,
  last_status: 503,
  last_error: 'the receiver answered 503',
  last_attempt_at: '2026-02-01T10:00:00.000Z',
  next_attempt_at: '2026-02-01T10:00:05.000Z',
  created_at: '2026-02-01T10:00:00.000Z',
};
requestExample(WebhookEndpointInput, { url: 'https://hooks.example.com/orders', enabled_events: ['order.*', 'payment.created'], description: 'Warehouse' });
requestExample(WebhookEndpointPatch, { id: 3, enabled_events: ['*'] });
responseExample(WebhookEndpoint, endpoint);
responseExample(WebhookEndpointWithSecret, { ...endpoint, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw2b6pHs3ZLvo=', previous_secret_expires_at: null });
responseExample(CreatedWebhookEndpoint, { ...endpoint, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw2b6pHs3ZLvo=', previous_secret_expires_at: null });
responseExample(WebhookEndpointList, pageExample([endpoint]));
responseExample(WebhookDelivery, delivery);
responseExample(WebhookDeliveryList, pageExample([delivery]));
