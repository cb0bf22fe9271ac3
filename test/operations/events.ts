import { defineOperations } from '../helpers/operations.ts';

export default defineOperations(({ t, read, createOrder }) => ({
  walks: {
    'events-list': {
      success: async () => {
        const order = await createOrder(await t.createUser());
        return { query: { type: 'order.*,payment.created', order_id: order.id, page: 1, limit: 10 }, token: t.admin.token };
      },
      // An unknown type is 422 naming it (docs/api.md#events).
      failure: async () => ({ query: { type: 'nope.*' }, token: t.admin.token, status: 422 }),
    },
    'events-get': {
      success: async () => {
        const order = await createOrder(await t.createUser());
        const [event] = (await read(`/api/v1/events?order_id=${order.id}`, t.admin.token)).data as { id: string }[];
        if (event === undefined) throw new Error('a new order has its order.created event');
        return { params: { id: event.id }, token: t.admin.token };
      },
      failure: async () => ({ params: { id: 'evt_AAAAAAAAAAAAAAAAAAAA' }, token: t.admin.token, status: 404 }),
    },
    'events-listForOrder': {
      success: async () => {
        const customer = await t.createUser();
        return { params: { id: (await createOrder(customer)).id }, query: { page: 1, limit: 10 }, token: customer.token };
      },
      // Another customer's order's timeline is 404, as the order is (docs/api.md#visibility).
      failure: async () => ({ params: { id: (await createOrder(await t.createUser())).id }, token: (await t.createUser()).token, status: 404 }),
    },
  },
}));
