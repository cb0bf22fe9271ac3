import { eq } from 'drizzle-orm';
import { payments } from '../../server/modules/payments/payments.table.ts';
import { shipOrder } from '../helpers/fulfillments.ts';
import { defineOperations } from '../helpers/operations.ts';
import { refund as refundAs } from '../helpers/refunds.ts';

export default defineOperations(({ t, UNKNOWN_ID, api, paidPayment, adminActors, paidOrder }) => ({
  walks: {
    'refunds-create': {
      success: async () => ({ params: { id: (await paidPayment()).payment.id }, body: { amount: 100, reason: 'other' }, token: t.admin.token }),
      // More than was paid (docs/api.md#refunds).
      failure: async () => {
        const { order, payment } = await paidPayment();
        return { params: { id: payment.id }, body: { amount: order.total + 1 }, token: t.admin.token, status: 422 };
      },
    },
    'refunds-get': {
      success: async () => {
        const { payment, customer } = await paidPayment();
        const refund = await refundAs(t, payment.id, { amount: 100 }, t.admin.token);
        return { params: { id: payment.id, refundId: refund.id }, token: customer.token };
      },
      // Another customer's payment's refund is 404, never 403 (docs/api.md#visibility).
      failure: async () => {
        const { payment } = await paidPayment();
        const refund = await refundAs(t, payment.id, { amount: 100 }, t.admin.token);
        return { params: { id: payment.id, refundId: refund.id }, token: (await t.createUser()).token, status: 404 };
      },
    },
    'refunds-list': {
      success: async () => {
        const { payment, customer } = await paidPayment();
        await refundAs(t, payment.id, { amount: 100 }, t.admin.token);
        return { params: { id: payment.id }, query: { page: 1, limit: 10 }, token: customer.token };
      },
      failure: async () => ({ params: { id: (await paidPayment()).payment.id }, token: (await t.createUser()).token, status: 404 }),
    },
  },
  reach: {
    'refunds-create': {
      404: async () => ({ params: { id: UNKNOWN_ID }, body: { amount: 1 }, token: t.admin.token }),
      // All that remains of a shipped order's payment: only once it is delivered.
      409: async () => {
        const { order, payment } = await paidPayment();
        await shipOrder(t, order.id, t.admin.token);
        return { params: { id: payment.id }, body: {}, token: t.admin.token };
      },
    },
  },
  idempotency: {
    'refunds.create': {
      actors: adminActors,
      scenario: async () => {
        // Partial refunds of one paid order's payment (a mug, 550): each leaves some of it.
        const order = await paidOrder();
        const [payment] = await t.db.select({ id: payments.id }).from(payments).where(eq(payments.orderId, order.id));
        const url = api(`/payments/${payment?.id}/refunds`);
        return { call: { url, body: { amount: 100 } }, other: { url, body: { amount: 200, reason: 'other' } }, failing: { url, body: { amount: 0 } } };
      },
    },
  },
}));
