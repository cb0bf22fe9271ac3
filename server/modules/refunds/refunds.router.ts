import { procedureFor, router } from '../../trpc/trpc.ts';
import { declareTag } from '../../lib/api-tags.ts';
import { Refund, RefundInput, RefundList, RefundListQuery, RefundParams } from './refunds.schemas.ts';
import * as refunds from './refunds.service.ts';

// Admins and service clients with payments:write give money back (docs/api.md#refunds); a
// customer cancels their paid order instead, which refunds it in full. Reads follow the payment's
// own rule: customers read the refunds of their own orders' payments, services with orders:read.
const refunder = procedureFor({ roles: ['admin', 'service'], scope: 'payments:write' });
const reader = procedureFor({ roles: ['customer', 'admin', 'service'], scope: 'orders:read' });
const tags = [declareTag('refunds', 'Giving a payment back, in part or in full (admins, `payments:write`). A refund that leaves nothing of the payment refunds the order; a retried refund with its `Idempotency-Key` is never paid out twice.')];

// Like payments, refunds are never cached (docs/api.md#caching).
export const refundsRouter = router({
  create: refunder
    .meta({
      openapi: {
        method: 'POST',
        path: '/payments/{id}/refunds',
        tags,
        summary: 'Refund a payment, in part or in full',
        description:
          'Gives back `amount` of a payment (default: all that remains). More than remains is 422 `refund-exceeds-payment`. A refund that leaves nothing of the payment moves the order to refunded (from paid, releasing its stock; from delivered or completed, a return, restocking with `restock: true`); a shipped order takes only partial refunds until it is delivered (409 otherwise). Send an `Idempotency-Key` so that a retry never refunds twice.',
      },
      rest: {
        status: 201,
        location: '/payments/{payment_id}/refunds/{id}',
        kind: 'item',
        problems: ['not-found', 'invalid-state-transition', 'refund-exceeds-payment'],
        links: [
          { to: 'payments.get', parameters: { id: 'payment_id' }, description: 'Read the payment: its `amount_refunded` counts this refund.' },
          { to: 'refunds.list', parameters: { id: 'payment_id' }, description: "List the payment's refunds." },
        ],
      },
    })
    .input(RefundInput)
    .output(Refund)
    .mutation(({ ctx, input }) => refunds.createRefund({ db: ctx.db, work: ctx.work, caller: ctx.caller, input })),

  get: reader
    .meta({
      openapi: { method: 'GET', path: '/payments/{id}/refunds/{refundId}', tags, summary: "Read one of a payment's refunds", description: "One refund of a payment. Customers read the refunds of their own orders' payments (another's is 404). Never cached." },
      rest: { kind: 'item', cache: 'no-store', problems: ['not-found'] },
    })
    .input(RefundParams)
    .output(Refund)
    .query(({ ctx, input }) => refunds.getRefund({ db: ctx.db, caller: ctx.caller, params: input })),

  list: reader
    .meta({
      openapi: { method: 'GET', path: '/payments/{id}/refunds', tags, summary: "List a payment's refunds, newest first", description: "A payment's refunds, newest first, paged; a payment without any lists none. Customers read those of their own orders' payments (another's is 404). Never cached." },
      rest: { kind: 'list', cache: 'no-store', problems: ['not-found'] },
    })
    .input(RefundListQuery)
    .output(RefundList)
    .query(({ ctx, input }) => refunds.listRefunds({ db: ctx.db, caller: ctx.caller, query: input, cursors: ctx.cursors })),
});
