import './webhooks.scopes.ts';
import { declareTag } from '../../lib/api-tags.ts';
import { z } from 'zod';
import { procedureFor, router } from '../../trpc/trpc.ts';
import { IdParam } from '../common.schemas.ts';
import {
  CreatedWebhookEndpoint,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookDeliveryListQuery,
  WebhookDeliveryParams,
  WebhookEndpoint,
  WebhookEndpointInput,
  WebhookEndpointList,
  WebhookEndpointListQuery,
  WebhookEndpointPatch,
  WebhookEndpointWithSecret,
} from './webhooks.schemas.ts';
import * as webhooks from './webhooks.service.ts';
import { webhookSettings } from './webhooks.settings.ts';

// Admins, and service clients with webhooks:manage (docs/webhooks.md): an endpoint receives every
// event it names, so managing one is as strong as reading every event.
const manager = procedureFor({ roles: ['admin', 'service'], scope: 'webhooks:manage' });
const tags = [declareTag('webhooks', 'Events sent to your URL as they happen, signed per Standard Webhooks (docs/webhooks.md): endpoints with the event types they take, a secret shown once and rotated with 24 hours of overlap, and every delivery attempt (admins, `webhooks:manage`).')];

// Reads are never cached (deliveries change by the second); writes never are (docs/api.md#caching).
export const webhooksRouter = router({
  create: manager
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhook-endpoints',
        tags,
        summary: 'Add a webhook endpoint (its secret is shown only now)',
        description:
          'Events of the types in `enabled_events` are POSTed to `url`, signed per Standard Webhooks with `secret` (docs/webhooks.md). A URL the rules refuse is 422 naming `url`, an unknown event type 422; beyond `WEBHOOK_MAX_ENDPOINTS` (16) endpoints, 409.',
      },
      rest: {
        status: 201,
        location: '/webhook-endpoints/{id}',
        kind: 'item',
        problems: ['conflict'],
        // The secret is shown once: an Idempotency-Key's stored result never holds it.
        notReplayed: ['secret', 'previous_secret_expires_at'],
        links: [
          { to: 'webhooks.get', parameters: { id: 'id' }, description: 'Read the endpoint (without its secret).' },
          { to: 'webhooks.listDeliveries', parameters: { id: 'id' }, description: "List the endpoint's deliveries." },
        ],
      },
    })
    // With an Idempotency-Key, the host is resolved before the key's transaction (server/trpc/meta.ts);
    // input the schema refuses is left to the procedure's 422.
    .meta({
      prepare: async (raw, ctx) => {
        const parsed = WebhookEndpointInput.safeParse(raw);
        return parsed.success ? webhooks.resolveEndpointUrl(parsed.data.url, ctx.settings.get(webhookSettings)) : undefined;
      },
    })
    .input(WebhookEndpointInput)
    .output(CreatedWebhookEndpoint)
    .mutation(({ ctx, input }) => webhooks.createEndpoint({ db: ctx.db, work: ctx.work, settings: ctx.settings.get(webhookSettings), input, resolved: ctx.prepared })),

  list: manager
    .meta({
      openapi: { method: 'GET', path: '/webhook-endpoints', tags, summary: 'List webhook endpoints, newest first', description: 'Every webhook endpoint, newest first, paged; secrets are never listed.' },
      rest: { kind: 'list', cache: 'no-store' },
    })
    .input(WebhookEndpointListQuery)
    .output(WebhookEndpointList)
    .query(({ ctx, input }) => webhooks.listEndpoints({ db: ctx.db, query: input, cursors: ctx.cursors })),

  get: manager
    .meta({
      openapi: { method: 'GET', path: '/webhook-endpoints/{id}', tags, summary: 'Read a webhook endpoint', description: 'One endpoint, without its secret (rotate it for a new one).' },
      rest: { kind: 'item', cache: 'no-store', problems: ['not-found'] },
    })
    .input(IdParam)
    .output(WebhookEndpoint)
    .query(({ ctx, input }) => webhooks.getEndpoint({ db: ctx.db, id: input.id })),

  patch: manager
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/webhook-endpoints/{id}',
        tags,
        summary: 'Change a webhook endpoint',
        description: 'Changes the fields given: `url` (the same rules as on creation), `enabled_events`, `description`, `disabled` (`true` stops deliveries; `false` resumes them, also after a 410 disabled it).',
      },
      rest: { kind: 'item', problems: ['not-found'] },
    })
    .input(WebhookEndpointPatch)
    .output(WebhookEndpoint)
    .mutation(({ ctx, input }) => webhooks.patchEndpoint({ db: ctx.db, settings: ctx.settings.get(webhookSettings), input })),

  delete: manager
    .meta({
      openapi: { method: 'DELETE', path: '/webhook-endpoints/{id}', tags, summary: 'Delete a webhook endpoint', description: 'Deletes the endpoint and its deliveries; nothing more is sent to it. A repeated DELETE is 404.' },
      rest: { status: 204, problems: ['not-found'] },
    })
    .input(IdParam)
    .output(z.void())
    .mutation(({ ctx, input }) => webhooks.deleteEndpoint({ db: ctx.db, id: input.id })),

  rotateSecret: manager
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhook-endpoints/{id}/rotate-secret',
        tags,
        summary: "Rotate a webhook endpoint's secret",
        description: 'Answers the endpoint with a new `secret`, shown only now. For 24 hours each delivery carries a signature made with the old secret too, so a receiver can move to the new one without losing a delivery. Rotating again within those 24 hours is 409 (only two secrets sign at once). Send an `Idempotency-Key`: if the answer is lost, a retry with the same key answers the same new secret (to the same caller, for as long as the key lives) instead of 409.',
      },
      rest: {
        kind: 'item',
        problems: ['not-found', 'conflict'],
        // A lost answer would lose the new secret, and a second rotation is 409 for 24 hours: a
        // retry with the same Idempotency-Key answers the same secret, kept only encrypted with
        // the key (docs/webhooks.md#endpoints).
        honoursIdempotencyKey: true,
        sealed: ['secret'],
      },
    })
    .input(IdParam)
    .output(WebhookEndpointWithSecret)
    .mutation(({ ctx, input }) => webhooks.rotateSecret({ db: ctx.db, work: ctx.work, id: input.id })),

  listDeliveries: manager
    .meta({
      openapi: {
        method: 'GET',
        path: '/webhook-endpoints/{id}/deliveries',
        tags,
        summary: "List a webhook endpoint's deliveries, newest first",
        description: 'Each event sent (or to be sent) to the endpoint: its state, attempts, the last status or error, and when it is next attempted. Paged.',
      },
      rest: { kind: 'list', cache: 'no-store', problems: ['not-found'] },
    })
    .input(WebhookDeliveryListQuery)
    .output(WebhookDeliveryList)
    .query(({ ctx, input }) => webhooks.listDeliveries({ db: ctx.db, query: input, cursors: ctx.cursors })),

  retryDelivery: manager
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhook-endpoints/{id}/deliveries/{deliveryId}/retry',
        tags,
        summary: 'Send a delivery again now',
        description: 'Makes the delivery due now, whatever its state, and answers 202: the worker sends it at once, with the same `webhook-id`. One being sent right now is left to finish. A disabled endpoint is 409: enable it first.',
      },
      rest: { status: 202, kind: 'item', problems: ['not-found', 'conflict'] },
    })
    .input(WebhookDeliveryParams)
    .output(WebhookDelivery)
    .mutation(({ ctx, input }) => webhooks.retryDelivery({ db: ctx.db, work: ctx.work, params: input })),
});
