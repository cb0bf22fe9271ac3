import './orders.scopes.ts';
import { declareTag } from '../../lib/api-tags.ts';
import { z } from 'zod';
import { procedureFor, router } from '../../trpc/trpc.ts';
import { IdParam } from '../common.schemas.ts';
import { onChange } from '../events/events.live.ts';
import { Order, OrderCreate, OrderGetQuery, OrderList, OrderListQuery, OrderPatch, OrderReplace } from './orders.schemas.ts';
import * as orders from './orders.service.ts';
import { listOrders } from './orders.list.ts';

// Customers on their own orders (the service confines them), admins, and service clients by scope.
const reader = procedureFor({ roles: ['customer', 'admin', 'service'], scope: 'orders:read' });
const writer = procedureFor({ roles: ['customer', 'admin', 'service'], scope: 'orders:write' });
const tags = [declareTag('orders', 'Orders and their state machine: draft -> confirmed -> paid -> shipped -> delivered -> completed, or cancelled, or refunded. Customers see only their own orders; `_links` offers the moves the order allows.')];
const writeProblems = ['not-found', 'conflict', 'invalid-state-transition', 'insufficient-stock', 'precondition-failed'] as const;

export const ordersRouter = router({
  // A subscription over server-sent events on /trpc, no REST operation (docs/api.md#live-updates).
  onChange,

  create: writer
    .meta({
      openapi: { method: 'POST', path: '/orders', tags, summary: 'Create a draft order', description: "Creates a draft order. Each item captures its product's current price (`unit_price`, `line_total`; `total` is their sum). A customer orders for themself (`customer_id` omitted or their own id; another is 403); admins and service clients name the customer. An unknown or archived product is 422 naming the item." },
      rest: {
        status: 201,
        location: '/orders/{id}',
        kind: 'item',
        problems: ['forbidden'],
        links: [
          { to: 'orders.confirm', parameters: { id: 'id' }, description: 'Confirm the draft (reserves stock).' },
          { to: 'orders.cancel', parameters: { id: 'id' }, description: 'Cancel the draft.' },
        ],
      },
    })
    .input(OrderCreate)
    .output(Order)
    .mutation(({ ctx, input }) => orders.createOrder({ db: ctx.db, work: ctx.work, caller: ctx.caller, input })),

  get: reader
    .meta({
      openapi: { method: 'GET', path: '/orders/{id}', tags, summary: 'Read an order', description: "An order with its items, totals and the `_links` its status allows. Customers see only their own orders (another's is 404). `expand` embeds its products, customer, payments or fulfillments." },
      rest: { kind: 'item', cache: 'private', problems: ['not-found'] },
    })
    .input(OrderGetQuery)
    .output(Order)
    .query(({ ctx, input }) => orders.getOrder({ db: ctx.db, caller: ctx.caller, id: input.id, expand: input.expand })),

  list: reader
    .meta({
      openapi: { method: 'GET', path: '/orders', tags, summary: 'List orders, newest first (customers: their own)', description: 'Orders, paged, newest first unless `sort` says otherwise; customers see only their own. Filters, all optional and combined: `status` (a status in any case, an upper-case alias, or `active`: confirmed, paid, shipped, delivered), `customer_id` (admins and service clients; a customer naming another is 403 `forbidden`), `created_gte` / `created_lt`, and `metadata[key]=value` (one parameter a pair, every pair must hold). `expand` embeds related resources in each order.' },
      rest: { kind: 'list', cache: 'private', problems: ['forbidden'] },
    })
    .input(OrderListQuery)
    .output(OrderList)
    .query(({ ctx, input }) => listOrders({ db: ctx.db, caller: ctx.caller, query: input, cursors: ctx.cursors })),

  replace: writer
    .meta({
      openapi: { method: 'PUT', path: '/orders/{id}', tags, summary: 'Replace an order (full representation)', description: 'Replaces an order with its full representation: omitted optional fields become empty (`items` [], `address` and `discount_code` null). `status` moves the order through the state machine (409 `invalid-state-transition` with `allowed` otherwise). Items, customer and currency change only in draft, the address until the order ships. Read-only fields sent back are ignored.' },
      rest: { kind: 'item', problems: [...writeProblems, 'forbidden'] },
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
        description: 'Changes some fields of an order: a merge patch (RFC 7396) or a JSON Patch (RFC 6902, all six operations). The patched order must be a valid PUT body and follows the same rules.',
        contentTypes: ['application/merge-patch+json', 'application/json-patch+json', 'application/json'],
      },
      rest: {
        kind: 'item',
        patch: {
          examples: {
            mergePatch: { address: '2 Side St, Springfield', discount_code: null, metadata: { gift_note: null } },
            jsonPatch: [
              { op: 'test', path: '/status', value: 'draft' },
              { op: 'replace', path: '/items/0/quantity', value: 3 },
              { op: 'add', path: '/items/-', value: { product_id: 42, quantity: 1 } },
            ],
          },
        },
        problems: [...writeProblems, 'forbidden'],
      },
    })
    .input(OrderPatch)
    .output(Order)
    .mutation(({ ctx, input }) => orders.patchOrder({ db: ctx.db, caller: ctx.caller, input, preconditions: ctx.preconditions })),

  confirm: writer
    .meta({
      openapi: { method: 'POST', path: '/orders/{id}/confirm', tags, summary: 'Confirm a draft order (reserves stock)', description: 'Moves a draft order to confirmed. It needs at least one item and an address (422 names what is missing) and reserves stock for every line or for none (409 `insufficient-stock`).' },
      rest: {
        kind: 'item',
        problems: [...writeProblems, 'validation-error'],
        links: [{ to: 'payments.create', body: { order_id: 'id', amount: 'total' }, description: 'Pay the confirmed order: its total is the amount.' }],
      },
    })
    .input(IdParam)
    .output(Order)
    .mutation(({ ctx, input }) => orders.transitionOrder({ db: ctx.db, caller: ctx.caller, id: input.id, to: 'confirmed', via: 'confirm', preconditions: ctx.preconditions })),

  cancel: writer
    .meta({
      openapi: { method: 'POST', path: '/orders/{id}/cancel', tags, summary: 'Cancel a draft, confirmed or paid order (releases stock; refunds a paid one)', description: 'Cancels a draft, confirmed or paid order and releases its reserved stock; a paid order is refunded in full in the same transaction. From any other status (shipped on) it is 409 `invalid-state-transition`.' },
      rest: { kind: 'item', problems: [...writeProblems] },
    })
    .input(IdParam)
    .output(Order)
    .mutation(({ ctx, input }) => orders.transitionOrder({ db: ctx.db, caller: ctx.caller, id: input.id, to: 'cancelled', via: 'cancel', preconditions: ctx.preconditions })),

  delete: writer
    .meta({
      openapi: { method: 'DELETE', path: '/orders/{id}', tags, summary: 'Delete an order without payment (releases stock)', description: 'Deletes an order that has no payment, releasing its reserved stock; with a payment it is 409 `order-has-payment`. A repeated DELETE is 404.' },
      rest: { status: 204, problems: ['not-found', 'order-has-payment', 'precondition-failed'] },
    })
    .input(IdParam)
    .output(z.void())
    .mutation(({ ctx, input }) => orders.deleteOrder({ db: ctx.db, caller: ctx.caller, id: input.id, preconditions: ctx.preconditions })),
});
