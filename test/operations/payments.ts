import { defineOperations } from '../helpers/operations.ts';
import { paymentInput, payOrder } from '../helpers/payments.ts';

export default defineOperations(({ t, UNKNOWN_ID, api, createOrder, orderIn, paidPayment, customerActor, ownerOf, confirmedOrder }) => ({
  walks: {
    'payments-create': {
      success: async () => {
        const customer = await t.createUser();
        return { body: paymentInput(await orderIn('confirmed', customer)), token: customer.token };
      },
      // The amount must equal the order's total (docs/api.md#payments).
      failure: async () => {
        const customer = await t.createUser();
        const order = await orderIn('confirmed', customer);
        return { body: paymentInput(order, { amount: order.total + 1 }), token: customer.token, status: 422 };
      },
    },
    'payments-get': {
      success: async () => {
        const customer = await t.createUser();
        return { params: { id: (await payOrder(t, await orderIn('confirmed', customer), customer.token)).id }, token: customer.token };
      },
      failure: async () => {
        const customer = await t.createUser();
        const payment = await payOrder(t, await orderIn('confirmed', customer), customer.token);
        return { params: { id: payment.id }, token: (await t.createUser()).token, status: 404 };
      },
    },
    'payments-list': {
      success: async () => {
        const customer = await t.createUser();
        const payment = await payOrder(t, await orderIn('confirmed', customer), customer.token);
        return { query: { order_id: payment.order_id, page: 1, limit: 10 }, token: customer.token };
      },
      failure: async () => ({ status: 401 }),
    },
    'payments-patch': {
      success: async () => ({ params: { id: (await paidPayment()).payment.id }, body: { metadata: { erp_id: 'ERP-1' } }, contentType: 'application/merge-patch+json', token: t.admin.token }),
      // Only metadata changes (docs/api.md#payments): the amount is 422.
      failure: async () => ({ params: { id: (await paidPayment()).payment.id }, body: { amount: 1 }, contentType: 'application/merge-patch+json', token: t.admin.token, status: 422 }),
    },
  },
  reach: {
    'payments-patch': {
      // Customers do not write a payment's metadata (docs/api.md#payments).
      403: async () => {
        const { payment, customer } = await paidPayment();
        return { params: { id: payment.id }, body: { metadata: { erp_id: 'ERP-1' } }, contentType: 'application/merge-patch+json', token: customer.token };
      },
      409: async () => ({
        params: { id: (await paidPayment()).payment.id },
        body: [{ op: 'test', path: '/metadata/erp_id', value: 'ERP-404' }],
        contentType: 'application/json-patch+json',
        token: t.admin.token,
      }),
    },
    'payments-create': {
      404: async () => ({ body: { order_id: UNKNOWN_ID, amount: 100, method: 'card' }, token: t.admin.token }),
      409: async () => {
        const customer = await t.createUser();
        return { body: paymentInput(await createOrder(customer)), token: customer.token };
      },
    },
  },
  idempotency: {
    'payments.create': {
      actors: async () => [await customerActor(), await customerActor()],
      scenario: async (actor) => {
        const order = await confirmedOrder(ownerOf(actor));
        const another = await confirmedOrder(ownerOf(actor));
        return {
          call: { url: api('/payments'), body: { order_id: order.id, amount: order.total, method: 'card' } },
          other: { url: api('/payments'), body: { order_id: another.id, amount: another.total, method: 'card' } },
          failing: { url: api('/payments'), body: { order_id: order.id, amount: order.total + 1, method: 'card' } },
        };
      },
    },
  },
}));
