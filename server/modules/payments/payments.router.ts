import './payments.scopes.ts';
import { declareTag } from '../../lib/api-tags.ts';
import { procedureFor, router } from '../../trpc/trpc.ts';
import { IdParam } from '../common.schemas.ts';
import { Payment, PaymentInput, PaymentList, PaymentListQuery, PaymentMergePatch, PaymentPatch } from './payments.schemas.ts';
import * as payments from './payments.service.ts';

// Customers pay their own orders (the service confines them), admins any, service clients with
// payments:write. Reading payments needs no scope of its own in docs/api.md#scopes: a payment is
// part of an order's story, so services read them with orders:read.
const payer = procedureFor({ roles: ['customer', 'admin', 'service'], scope: 'payments:write' });
const reader = procedureFor({ roles: ['customer', 'admin', 'service'], scope: 'orders:read' });
// A payment's metadata is the integrator's (docs/api.md#payments): admins and service clients
// write it; a customer pays but never annotates the payment.
const annotator = procedureFor({ roles: ['admin', 'service'], scope: 'payments:write' });
const tags = [declareTag('payments', "Paying a confirmed order (the amount must equal its total). Payments are never cached; a retried payment with its `Idempotency-Key` is never charged twice.")];

// Payments are never cached (docs/api.md#caching): reads say no-store; writes always do.
// A payment changes only by its refunds and its metadata, which set its updated_at (its Last-Modified).
export const paymentsRouter = router({
  create: payer
    .meta({
      openapi: { method: 'POST', path: '/payments', tags, summary: 'Pay a confirmed order (the order becomes paid)', description: 'Pays a confirmed order: `amount` must equal its total (422 otherwise) and the order becomes paid. An order that is not confirmed (a paid one included) is 409 `invalid-state-transition`. Send an `Idempotency-Key` so that a retry never pays twice.' },
      rest: {
        status: 201,
        location: '/payments/{id}',
        kind: 'item',
        problems: ['not-found', 'invalid-state-transition'],
        links: [
          { to: 'orders.get', parameters: { id: 'order_id' }, description: 'Read the order, now paid.' },
          { to: 'fulfillments.request', parameters: { id: 'order_id' }, description: 'Send the paid order to fulfillment.' },
          { to: 'fulfillments.create', parameters: { id: 'order_id' }, description: 'Ship the paid order.' },
          { to: 'refunds.create', parameters: { id: 'id' }, description: 'Refund the payment, in part or in full (admins and service clients).' },
        ],
      },
    })
    .input(PaymentInput)
    .output(Payment)
    .mutation(({ ctx, input }) => payments.createPayment({ db: ctx.db, work: ctx.work, caller: ctx.caller, input })),

  get: reader
    .meta({
      openapi: { method: 'GET', path: '/payments/{id}', tags, summary: 'Read a payment (customers: of their own orders)', description: "A payment. Customers read the payments of their own orders (another's is 404). Never cached." },
      rest: { kind: 'item', cache: 'no-store', problems: ['not-found'] },
    })
    .input(IdParam)
    .output(Payment)
    .query(({ ctx, input }) => payments.getPayment({ db: ctx.db, caller: ctx.caller, id: input.id })),

  list: reader
    .meta({
      openapi: { method: 'GET', path: '/payments', tags, summary: 'List payments, newest first (customers: their own)', description: 'Payments, newest first, paged; customers see only their own, and `order_id` narrows the list to one order. Never cached.' },
      rest: { kind: 'list', cache: 'no-store' },
    })
    .input(PaymentListQuery)
    .output(PaymentList)
    .query(({ ctx, input }) => payments.listPayments({ db: ctx.db, caller: ctx.caller, query: input, cursors: ctx.cursors })),

  patch: annotator
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/payments/{id}',
        tags,
        summary: "Patch a payment's metadata (admins and service clients)",
        description: "Changes a payment's `metadata`, and nothing else: a merge patch (RFC 7396; keys merge one by one, a key set to null is removed) or a JSON Patch (RFC 6902) that touches only `/metadata` (any other member changed is 422 naming it). Money never moves by it; a patch that changes nothing changes nothing (same ETag, no event).",
        contentTypes: ['application/merge-patch+json', 'application/json-patch+json', 'application/json'],
      },
      rest: {
        kind: 'item',
        patch: {
          mergePatch: PaymentMergePatch,
          examples: {
            mergePatch: { metadata: { erp_id: 'ERP-1042', gift_note: null } },
            jsonPatch: [
              { op: 'test', path: '/metadata/erp_id', value: 'ERP-1042' },
              { op: 'replace', path: '/metadata/erp_id', value: 'ERP-2001' },
              { op: 'remove', path: '/metadata/gift_note' },
            ],
          },
        },
        problems: ['not-found', 'conflict', 'precondition-failed'],
      },
    })
    .input(PaymentPatch)
    .output(Payment)
    .mutation(({ ctx, input }) => payments.patchPayment({ db: ctx.db, input, preconditions: ctx.preconditions })),
});
