import { z } from 'zod';
import { procedureFor, router } from '../../trpc/trpc.ts';
import { IdParam } from '../common.schemas.ts';
import { Order, OrderCreate, OrderList, OrderListQuery, OrderPatch, OrderReplace } from './orders.schemas.ts';
import * as orders from './orders.service.ts';

// Customers on their own orders (the service confines them), admins, and service clients by scope.
const reader = procedureFor({ roles: ['customer', 'admin', 'service'], scope: 'orders:read' });
const writer = procedureFor({ roles: ['customer', 'admin', 'service'], scope: 'orders:write' });
const tags = ['orders'];
const writeProblems = ['not-found', 'conflict', 'invalid-state-transition', 'insufficient-stock', 'precondition-failed'] as const;

export const ordersRouter = router({
  create: writer
    .meta({
      openapi: { method: 'POST', path: '/orders', tags, summary: 'Create a draft order' },
      rest: { status: 201, location: '/orders/{id}', kind: 'item', problems: ['forbidden'] },
    })
    .input(OrderCreate)
    .output(Order)
    .mutation(({ ctx, input }) => orders.createOrder({ db: ctx.db, caller: ctx.caller, input })),

  get: reader
    .meta({
      openapi: { method: 'GET', path: '/orders/{id}', tags, summary: 'Read an order' },
      rest: { kind: 'item', cache: 'private', problems: ['not-found'] },
    })
    .input(IdParam)
    .output(Order)
    .query(({ ctx, input }) => orders.getOrder({ db: ctx.db, caller: ctx.caller, id: input.id })),

  list: reader
    .meta({
      openapi: { method: 'GET', path: '/orders', tags, summary: 'List orders, newest first (customers: their own)' },
      rest: { kind: 'list', cache: 'private' },
    })
    .input(OrderListQuery)
    .output(OrderList)
    .query(({ ctx, input }) => orders.listOrders({ db: ctx.db, caller: ctx.caller, query: input })),

  replace: writer
    .meta({
      openapi: { method: 'PUT', path: '/orders/{id}', tags, summary: 'Replace an order (full representation)' },
      rest: { kind: 'item', problems: [...writeProblems] },
    })
    .input(OrderReplace)
    .output(Order)
    .mutation(({ ctx, input }) => orders.replaceOrder({ db: ctx.db, caller: ctx.caller, input, preconditions: ctx.preconditions })),

  patch: writer
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/orders/{id}',
        tags,
        summary: 'Patch an order (merge patch or JSON Patch)',
        contentTypes: ['application/merge-patch+json', 'application/json-patch+json', 'application/json'],
      },
      rest: { kind: 'item', patch: true, problems: [...writeProblems] },
    })
    .input(OrderPatch)
    .output(Order)
    .mutation(({ ctx, input }) => orders.patchOrder({ db: ctx.db, caller: ctx.caller, input, preconditions: ctx.preconditions })),

  confirm: writer
    .meta({
      openapi: { method: 'POST', path: '/orders/{id}/confirm', tags, summary: 'Confirm a draft order (reserves stock)' },
      rest: { kind: 'item', problems: [...writeProblems] },
    })
    .input(IdParam)
    .output(Order)
    .mutation(({ ctx, input }) => orders.transitionOrder({ db: ctx.db, caller: ctx.caller, id: input.id, to: 'confirmed', via: 'confirm', preconditions: ctx.preconditions })),

  cancel: writer
    .meta({
      openapi: { method: 'POST', path: '/orders/{id}/cancel', tags, summary: 'Cancel a draft or confirmed order (releases stock)' },
      rest: { kind: 'item', problems: [...writeProblems] },
    })
    .input(IdParam)
    .output(Order)
    .mutation(({ ctx, input }) => orders.transitionOrder({ db: ctx.db, caller: ctx.caller, id: input.id, to: 'cancelled', via: 'cancel', preconditions: ctx.preconditions })),

  delete: writer
    .meta({
      openapi: { method: 'DELETE', path: '/orders/{id}', tags, summary: 'Delete an order without payment (releases stock)' },
      rest: { status: 204, problems: ['not-found', 'order-has-payment', 'precondition-failed'] },
    })
    .input(IdParam)
    .output(z.void())
    .mutation(({ ctx, input }) => orders.deleteOrder({ db: ctx.db, caller: ctx.caller, id: input.id, preconditions: ctx.preconditions })),
});
