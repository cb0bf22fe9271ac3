import { expect } from 'vitest';
import { defineOperations } from '../helpers/operations.ts';
import { createEndpoint, deliveriesOf, WEBHOOK_ENDPOINTS } from '../helpers/webhooks.ts';

export default defineOperations(({ t, UNKNOWN_ID, createProduct, endpointInput, deleteEndpoints, webhookEndpoint, webhookDelivery, adminActors }) => ({
  walks: {
    'webhooks-create': {
      success: async () => {
        await webhookEndpoint();
        return { body: endpointInput(['order.*', 'payment.created']), token: t.admin.token };
      },
      failure: async () => ({ body: endpointInput(['order.teleported']), token: t.admin.token, status: 422 }),
    },
    'webhooks-list': {
      success: async () => {
        await webhookEndpoint();
        return { query: { page: 1, limit: 10 }, token: t.admin.token };
      },
      failure: async () => ({ token: (await t.createUser()).token, status: 403 }),
    },
    'webhooks-get': {
      success: async () => ({ params: { id: (await webhookEndpoint()).id }, token: t.admin.token }),
      failure: async () => ({ params: { id: UNKNOWN_ID }, token: t.admin.token, status: 404 }),
    },
    'webhooks-patch': {
      success: async () => ({ params: { id: (await webhookEndpoint()).id }, body: { enabled_events: ['*'], description: 'Everything' }, token: t.admin.token }),
      failure: async () => ({ params: { id: (await webhookEndpoint()).id }, body: { url: 'http://hooks.example.com/' }, token: t.admin.token, status: 422 }),
    },
    'webhooks-delete': {
      success: async () => ({ params: { id: (await webhookEndpoint()).id }, token: t.admin.token }),
      failure: async () => ({ params: { id: UNKNOWN_ID }, token: t.admin.token, status: 404 }),
    },
    'webhooks-rotateSecret': {
      success: async () => ({ params: { id: (await webhookEndpoint()).id }, token: t.admin.token }),
      failure: async () => ({ params: { id: UNKNOWN_ID }, token: t.admin.token, status: 404 }),
    },
    'webhooks-listDeliveries': {
      success: async () => ({ params: { id: (await webhookDelivery()).endpoint }, query: { page: 1, limit: 10 }, token: t.admin.token }),
      failure: async () => ({ params: { id: UNKNOWN_ID }, token: t.admin.token, status: 404 }),
    },
    'webhooks-retryDelivery': {
      success: async () => {
        const { endpoint, delivery } = await webhookDelivery();
        return { params: { id: endpoint, deliveryId: delivery }, token: t.admin.token };
      },
      failure: async () => ({ params: { id: (await webhookEndpoint()).id, deliveryId: UNKNOWN_ID }, token: t.admin.token, status: 404 }),
    },
  },
  reach: {
    // Beyond WEBHOOK_MAX_ENDPOINTS (16): the next walk that makes one deletes them all first.
    'webhooks-create': {
      409: async () => {
        await deleteEndpoints();
        for (let i = 0; i < 16; i += 1) await t.request({ method: 'POST', url: '/api/v1/webhook-endpoints', payload: endpointInput(), token: t.admin.token });
        return { body: endpointInput(), token: t.admin.token };
      },
    },
    'webhooks-rotateSecret': {
      // Rotated less than 24 hours ago: only two secrets sign at once.
      409: async () => {
        const { id } = await webhookEndpoint();
        expect((await t.request({ method: 'POST', url: `/api/v1/webhook-endpoints/${id}/rotate-secret`, token: t.admin.token })).statusCode).toBe(200);
        return { params: { id }, token: t.admin.token };
      },
    },
    'webhooks-retryDelivery': {
      // A disabled endpoint sends nothing: enable it first.
      409: async () => {
        const { endpoint, delivery } = await webhookDelivery();
        await t.request({ method: 'PATCH', url: `/api/v1/webhook-endpoints/${endpoint}`, payload: { disabled: true }, token: t.admin.token });
        return { params: { id: endpoint, deliveryId: delivery }, token: t.admin.token };
      },
    },
  },
  // They act on the endpoint and on the delivery (docs/webhooks.md#endpoints).
  actionPosts: {
    'webhooks-rotateSecret': { status: 200 },
    'webhooks-retryDelivery': { status: 202 },
  },
  // An endpoint's secret is shown once, on creation (docs/webhooks.md#endpoints).
  shownOnlyOnCreation: { 'webhooks-create': ['secret', 'previous_secret_expires_at'] },
  idempotency: {
    'webhooks.create': {
      actors: adminActors,
      scenario: async () => {
        await deleteEndpoints();
        const input = (path: string) => ({ url: `http://127.0.0.1:9/${path}`, enabled_events: ['product.created'] });
        return { call: { url: WEBHOOK_ENDPOINTS, body: input('a') }, other: { url: WEBHOOK_ENDPOINTS, body: input('b') }, failing: { url: WEBHOOK_ENDPOINTS, body: { ...input('c'), enabled_events: ['no.such'] } } };
      },
    },
    // A POST answering 200 that takes a key all the same: a lost answer's secret comes back (docs/webhooks.md#endpoints).
    'webhooks.rotateSecret': {
      actors: adminActors,
      scenario: async () => {
        // Two endpoints to rotate; an endpoint that does not exist fails (404).
        await deleteEndpoints();
        const endpoint = (path: string) => createEndpoint(t, { url: `http://127.0.0.1:9/${path}`, enabled_events: ['product.created'] });
        const rotate = (id: number) => ({ url: `${WEBHOOK_ENDPOINTS}/${id}/rotate-secret`, body: {} });
        return { call: rotate((await endpoint('a')).id), other: rotate((await endpoint('b')).id), failing: rotate(999_999) };
      },
    },
    'webhooks.retryDelivery': {
      actors: adminActors,
      actsOnExisting: true,
      scenario: async () => {
        // Two deliveries of one endpoint (two products made); a delivery of no endpoint fails (404).
        await deleteEndpoints();
        const endpoint = await createEndpoint(t, { url: 'http://127.0.0.1:9/hooks', enabled_events: ['product.created'] });
        await createProduct();
        await createProduct();
        const [first, second] = await deliveriesOf(t, endpoint.id);
        const retry = (id: number | undefined) => `${WEBHOOK_ENDPOINTS}/${endpoint.id}/deliveries/${id}/retry`;
        return { call: { url: retry(first?.id), body: {} }, other: { url: retry(second?.id), body: {} }, failing: { url: retry(999_999), body: {} } };
      },
    },
  },
}));
