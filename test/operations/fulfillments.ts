import { shipmentInput } from '../helpers/fulfillments.ts';
import { defineOperations } from '../helpers/operations.ts';

export default defineOperations(({ t, api, orderIn, shippedOrder, adminActors, paidOrder }) => ({
  walks: {
    'fulfillments-request': {
      success: async () => ({ params: { id: (await orderIn('paid', await t.createUser())).id }, token: t.admin.token }),
      // Only a paid order goes to fulfillment (docs/api.md#fulfillments).
      failure: async () => ({ params: { id: (await orderIn('confirmed', await t.createUser())).id }, token: t.admin.token, status: 409 }),
    },
    'fulfillments-create': {
      success: async () => ({ params: { id: (await orderIn('paid', await t.createUser())).id }, body: shipmentInput(), token: t.admin.token }),
      failure: async () => ({ params: { id: (await orderIn('paid', await t.createUser())).id }, body: shipmentInput({ carrier: '' }), token: t.admin.token, status: 422 }),
    },
    'fulfillments-get': {
      success: async () => {
        const { order, fulfillment, customer } = await shippedOrder();
        return { params: { id: order.id, fulfillmentId: fulfillment.id }, token: customer.token };
      },
      // Another customer's order's fulfillment is 404, never 403 (docs/api.md#visibility).
      failure: async () => {
        const { order, fulfillment } = await shippedOrder();
        return { params: { id: order.id, fulfillmentId: fulfillment.id }, token: (await t.createUser()).token, status: 404 };
      },
    },
    'fulfillments-list': {
      success: async () => {
        const { order, customer } = await shippedOrder();
        return { params: { id: order.id }, query: { page: 1, limit: 10 }, token: customer.token };
      },
      failure: async () => ({ params: { id: (await shippedOrder()).order.id }, token: (await t.createUser()).token, status: 404 }),
    },
  },
  reach: {
    'fulfillments-request': {
      409: async () => ({ params: { id: (await orderIn('confirmed', await t.createUser())).id }, token: t.admin.token }),
    },
    'fulfillments-create': {
      409: async () => ({ params: { id: (await orderIn('confirmed', await t.createUser())).id }, body: shipmentInput(), token: t.admin.token }),
    },
  },
  // It acts on the order, and answers the requested fulfillment's Location (docs/api.md#fulfillments).
  actionPosts: {
    'fulfillments-request': { status: 202, location: true },
  },
  idempotency: {
    'fulfillments.request': {
      actors: adminActors,
      scenario: async () => {
        const [order, another] = [await paidOrder(), await paidOrder()];
        return {
          call: { url: api(`/orders/${order.id}/send-to-fulfillment`), body: {} },
          other: { url: api(`/orders/${another.id}/send-to-fulfillment`), body: {} },
          failing: { url: api(`/orders/${order.id + 1_000_000}/send-to-fulfillment`), body: {} },
        };
      },
    },
    'fulfillments.create': {
      actors: adminActors,
      scenario: async () => {
        const [order, another] = [await paidOrder(), await paidOrder()];
        const shipment = { carrier: 'UPS', tracking_number: '1Z999' };
        return {
          call: { url: api(`/orders/${order.id}/fulfillments`), body: shipment },
          other: { url: api(`/orders/${another.id}/fulfillments`), body: shipment },
          failing: { url: api(`/orders/${order.id}/fulfillments`), body: { carrier: '', tracking_number: '1Z999' } },
        };
      },
    },
  },
}));
