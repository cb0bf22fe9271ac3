import { defineOperations } from '../helpers/operations.ts';

export default defineOperations(({ t, UNKNOWN_ID, api, createProduct, read, withoutId, createOrder, orderIn, shippedOrder, scene, customerActor }) => ({
  walks: {
    'orders-create': {
      success: async () => {
        const product = await createProduct();
        return { body: { items: [{ product_id: product.id, quantity: 2 }], address: '1 Main Street' }, token: (await t.createUser()).token };
      },
      failure: async () => {
        const product = await createProduct();
        return { body: { items: [{ product_id: product.id, quantity: 0 }] }, token: (await t.createUser()).token, status: 422 };
      },
    },
    'orders-list': {
      success: async () => {
        const customer = await t.createUser();
        await createOrder(customer);
        return { query: { status: 'draft', page: 1, limit: 10 }, token: customer.token };
      },
      failure: async () => ({ status: 401 }),
    },
    'orders-get': {
      // Every expansion, so the documented schema is checked against expanded orders too.
      success: async () => {
        const customer = await t.createUser();
        return { params: { id: (await createOrder(customer)).id }, query: { expand: ['items.product', 'customer', 'payments', 'fulfillments'] }, token: customer.token };
      },
      // Another customer's order is 404, never 403 (docs/api.md#visibility).
      failure: async () => ({ params: { id: (await createOrder(await t.createUser())).id }, token: (await t.createUser()).token, status: 404 }),
    },
    'orders-replace': {
      success: async () => {
        const customer = await t.createUser();
        const order = await createOrder(customer);
        return { params: { id: order.id }, body: { ...withoutId(order), address: '2 Side Street' }, token: customer.token };
      },
      failure: async () => {
        const customer = await t.createUser();
        const order = await createOrder(customer);
        return { params: { id: order.id }, body: { ...withoutId(order), address: 'x'.repeat(501) }, token: customer.token, status: 422 };
      },
    },
    'orders-patch': {
      success: async () => {
        const customer = await t.createUser();
        const order = await createOrder(customer);
        return { params: { id: order.id }, body: { address: '3 Patch Lane' }, contentType: 'application/merge-patch+json', token: customer.token };
      },
      failure: async () => {
        const customer = await t.createUser();
        const order = await createOrder(customer);
        return { params: { id: order.id }, body: { address: 'x'.repeat(501) }, contentType: 'application/merge-patch+json', token: customer.token, status: 422 };
      },
    },
    'orders-delete': {
      success: async () => {
        const customer = await t.createUser();
        return { params: { id: (await createOrder(customer)).id }, token: customer.token };
      },
      failure: async () => ({ params: { id: UNKNOWN_ID }, token: t.admin.token, status: 404 }),
    },
    'orders-confirm': {
      success: async () => {
        const customer = await t.createUser();
        return { params: { id: (await createOrder(customer)).id }, token: customer.token };
      },
      // Confirming needs an address (docs/api.md#order-states: 422 names the missing field).
      failure: async () => {
        const customer = await t.createUser();
        return { params: { id: (await createOrder(customer, { address: null })).id }, token: customer.token, status: 422 };
      },
    },
    'orders-cancel': {
      success: async () => {
        const customer = await t.createUser();
        return { params: { id: (await createOrder(customer)).id }, token: customer.token };
      },
      failure: async () => ({ params: { id: (await createOrder(await t.createUser())).id }, status: 401 }),
    },
  },
  reach: {
    'orders-create': {
      // A customer orders for themself only.
      403: async () => {
        const product = await createProduct();
        const other = await t.createUser();
        return { body: { customer_id: other.id, items: [{ product_id: product.id, quantity: 1 }] }, token: (await t.createUser()).token };
      },
    },
    'orders-get': {
      // More expand values than it takes (docs/api.md#expand).
      422: async () => {
        const customer = await t.createUser();
        return { params: { id: (await createOrder(customer)).id }, query: { expand: Array<string>(21).fill('customer') }, token: customer.token };
      },
    },
    'orders-replace': {
      409: async () => {
        const customer = await t.createUser();
        const order = await createOrder(customer);
        return { params: { id: order.id }, body: { ...withoutId(order), status: 'shipped' }, token: customer.token };
      },
    },
    'orders-patch': {
      409: async () => {
        const customer = await t.createUser();
        const order = await createOrder(customer);
        return {
          params: { id: order.id },
          body: [{ op: 'test', path: '/status', value: 'paid' }],
          contentType: 'application/json-patch+json',
          token: customer.token,
        };
      },
    },
    'orders-confirm': {
      409: async () => {
        const customer = await t.createUser();
        return { params: { id: (await orderIn('paid', customer)).id }, token: customer.token };
      },
    },
    'orders-cancel': {
      // A paid order is cancelled (and refunded); a shipped one is not.
      409: async () => {
        const { order, customer } = await shippedOrder();
        return { params: { id: order.id }, token: customer.token };
      },
    },
    'orders-delete': {
      409: async () => {
        const customer = await t.createUser();
        return { params: { id: (await orderIn('paid', customer)).id }, token: customer.token };
      },
    },
  },
  // They act on the order (docs/api.md#order-states).
  actionPosts: {
    'orders-confirm': { status: 200 },
    'orders-cancel': { status: 200 },
  },
  representationsForPut: {
    'orders-replace': async () => {
      const customer = await t.createUser();
      const order = await createOrder(customer);
      return { representation: await read(`/api/v1/orders/${order.id}`, customer.token), token: customer.token };
    },
  },
  idempotency: {
    'orders.create': {
      actors: async () => [await customerActor(), await customerActor()],
      scenario: async () => {
        const { mug } = await scene();
        return {
          call: { url: api('/orders'), body: { items: [{ product_id: mug.id, quantity: 1 }] } },
          other: { url: api('/orders'), body: { items: [{ product_id: mug.id, quantity: 2 }] } },
          failing: { url: api('/orders'), body: { items: [{ product_id: mug.id, quantity: 0 }] } },
        };
      },
    },
  },
}));
