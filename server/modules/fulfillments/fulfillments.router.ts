import './fulfillments.scopes.ts';
import { declareTag } from '../../lib/api-tags.ts';
import { procedureFor, router } from '../../trpc/trpc.ts';
import { Fulfillment, FulfillmentList, FulfillmentListQuery, FulfillmentParams, OrderIdParam, ShipmentInput } from './fulfillments.schemas.ts';
import * as fulfillments from './fulfillments.service.ts';

// Admins and service clients with fulfillments:write send orders to fulfillment and ship them;
// customers do not. Reads follow the order's own rule: customers see their own orders'
// fulfillments (another's order is 404), services need orders:read.
const writer = procedureFor({ roles: ['admin', 'service'], scope: 'fulfillments:write' });
const reader = procedureFor({ roles: ['customer', 'admin', 'service'], scope: 'orders:read' });
const tags = [declareTag('fulfillments', 'Shipping a paid order: send it to fulfillment (202), then record the shipment (the order becomes shipped).')];
const writeProblems = ['not-found', 'conflict', 'invalid-state-transition'] as const;

export const fulfillmentsRouter = router({
  request: writer
    .meta({
      openapi: { method: 'POST', path: '/orders/{id}/send-to-fulfillment', tags, summary: 'Send a paid order to fulfillment (a requested fulfillment)', description: 'Sends a paid order to fulfillment: a `requested` fulfillment, answered 202 with its `Location`. A second request while one is open is 409 `conflict`; an order that is not paid is 409 `invalid-state-transition`.' },
      rest: {
        status: 202,
        location: '/orders/{order_id}/fulfillments/{id}',
        kind: 'item',
        problems: [...writeProblems],
        links: [{ to: 'fulfillments.create', parameters: { id: 'order_id' }, description: 'Ship the order: its requested fulfillment becomes the shipped one.' }],
      },
    })
    .input(OrderIdParam)
    .output(Fulfillment)
    .mutation(({ ctx, input }) => fulfillments.requestFulfillment({ db: ctx.db, work: ctx.work, caller: ctx.caller, orderId: input.id })),

  create: writer
    .meta({
      openapi: { method: 'POST', path: '/orders/{id}/fulfillments', tags, summary: 'Ship a paid order (records a shipped fulfillment; the order becomes shipped)', description: 'Records the shipment of a paid order with its carrier and tracking number; the order becomes shipped. An open requested fulfillment becomes the shipped one (same id); otherwise a new one is recorded. 201 with `Location` either way.' },
      rest: { status: 201, location: '/orders/{order_id}/fulfillments/{id}', kind: 'item', problems: [...writeProblems] },
    })
    .input(ShipmentInput)
    .output(Fulfillment)
    .mutation(({ ctx, input }) => fulfillments.shipOrder({ db: ctx.db, work: ctx.work, caller: ctx.caller, input })),

  get: reader
    .meta({
      openapi: { method: 'GET', path: '/orders/{id}/fulfillments/{fulfillmentId}', tags, summary: "Read one of an order's fulfillments", description: "One fulfillment of an order. Customers read the fulfillments of their own orders (another's is 404)." },
      rest: { kind: 'item', cache: 'private', problems: ['not-found'] },
    })
    .input(FulfillmentParams)
    .output(Fulfillment)
    .query(({ ctx, input }) => fulfillments.getFulfillment({ db: ctx.db, caller: ctx.caller, params: input })),

  list: reader
    .meta({
      openapi: { method: 'GET', path: '/orders/{id}/fulfillments', tags, summary: "List an order's fulfillments, newest first", description: "An order's fulfillments, newest first, paged; an order without any lists none." },
      rest: { kind: 'list', cache: 'private', problems: ['not-found'] },
    })
    .input(FulfillmentListQuery)
    .output(FulfillmentList)
    .query(({ ctx, input }) => fulfillments.listFulfillments({ db: ctx.db, caller: ctx.caller, query: input, cursors: ctx.cursors })),
});
