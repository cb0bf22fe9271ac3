/**
 * Fulfillments (docs/api.md#fulfillments), a sub-resource of an order. A paid order is sent to
 * fulfillment (a `requested` fulfillment), then shipped: shipping records the carrier and
 * tracking number on the open fulfillment, or on a new one when none was requested, and moves the
 * order to `shipped` through the state table, in one transaction. The order's lock serializes
 * both actions; the partial unique index `fulfillments_one_open_per_order` backs it up.
 */
import { and, eq } from 'drizzle-orm';
import { mayReadOrder } from '../../auth/policy.ts';
import type { Caller } from '../../auth/tokens.ts';
import type { Db } from '../../db/client.ts';
import { transaction, type UnitOfWork } from '../../db/unit-of-work.ts';
import { orders } from '../orders/orders.table.ts';
import { fulfillments } from './fulfillments.table.ts';
import { DomainError } from '../../errors/problems.ts';
import { isUniqueViolation } from '../../errors/db-errors.ts';
import type { Page } from '../common.schemas.ts';
import { listPage, newestFirst, type CursorCodec } from '../paging.ts';
import { awaitsShipment, type OrderStatus } from '../orders/orders.rules.ts';
import { invalidTransition, lockOrder, transition } from '../orders/orders.service.ts';
import { fulfillmentEvents } from './fulfillments.events.ts';
import { fulfillmentColumns, toFulfillment, type FulfillmentRow } from './fulfillments.representation.ts';
import type { Fulfillment, FulfillmentListQuery, FulfillmentParams, ShipmentInput } from './fulfillments.schemas.ts';

interface Access {
  db: Db;
  caller: Caller;
}

const OPEN = 'requested';

/** The 409 of a fulfillment action on an order that is not paid; `allowed` as for every refused move. */
function notShippable(orderId: number, status: OrderStatus, action: string): DomainError {
  return invalidTransition(status, 'shipped', 'fulfillment', `Order ${orderId} is ${status}; only a paid order can be ${action}.`);
}

const alreadyOpen = (orderId: number) =>
  new DomainError('conflict', `Order ${orderId} already has an open (requested) fulfillment; ship it with POST /orders/${orderId}/fulfillments.`);

async function openFulfillment(tx: UnitOfWork, orderId: number): Promise<FulfillmentRow | undefined> {
  const [row] = await tx
    .select(fulfillmentColumns)
    .from(fulfillments)
    .where(and(eq(fulfillments.orderId, orderId), eq(fulfillments.status, OPEN)));
  return row;
}

/** Opens a `requested` fulfillment of a paid order; one may be open at a time. The order stays paid. */
export async function requestFulfillment({ db, work, caller, orderId }: Access & { work?: UnitOfWork; orderId: number }): Promise<Fulfillment> {
  try {
    return await transaction(work ?? db, async (tx) => {
      const order = await lockOrder(tx, { id: orderId, caller });
      if (!awaitsShipment(order.row.status)) throw notShippable(orderId, order.row.status, 'sent to fulfillment');
      if (await openFulfillment(tx, orderId)) throw alreadyOpen(orderId);
      const [row] = await tx.insert(fulfillments).values({ orderId, status: OPEN }).returning(fulfillmentColumns);
      if (!row) throw new Error('fulfillment insert returned no row');
      const fulfillment = toFulfillment(row);
      await fulfillmentEvents.record(tx, { type: 'fulfillment.created', object: fulfillment });
      return fulfillment;
    });
  } catch (error) {
    // Only reachable by a writer that did not take the order's lock.
    if (isUniqueViolation(error, 'fulfillments_one_open_per_order')) throw alreadyOpen(orderId);
    throw error;
  }
}

/**
 * Ships a paid order: the open fulfillment (if one was requested) becomes `shipped` with the
 * carrier and tracking number, otherwise a new shipped fulfillment is recorded; the order moves
 * to `shipped`. One fulfillment per shipment, so a request and its shipment are one record.
 */
export async function shipOrder({ db, work, caller, input }: Access & { work?: UnitOfWork; input: ShipmentInput }): Promise<Fulfillment> {
  const { id: orderId, carrier, tracking_number: trackingNumber } = input;
  return transaction(work ?? db, async (tx) => {
    const order = await lockOrder(tx, { id: orderId, caller });
    if (!awaitsShipment(order.row.status)) throw notShippable(orderId, order.row.status, 'shipped');
    const open = await openFulfillment(tx, orderId);
    const [row] = open
      ? await tx
          .update(fulfillments)
          .set({ status: 'shipped', carrier, trackingNumber, updatedAt: new Date() })
          .where(eq(fulfillments.id, open.id))
          .returning(fulfillmentColumns)
      : await tx.insert(fulfillments).values({ orderId, status: 'shipped', carrier, trackingNumber }).returning(fulfillmentColumns);
    if (!row) throw new Error('fulfillment write returned no row');
    const fulfillment = toFulfillment(row);
    await fulfillmentEvents.record(
      tx,
      open ? { type: 'fulfillment.updated', object: fulfillment, previous: toFulfillment(open) } : { type: 'fulfillment.created', object: fulfillment },
    );
    await transition(tx, order, 'shipped', 'fulfillment', caller);
    return fulfillment;
  });
}

/** The order, if `caller` may read it: another customer's order is 404, as a missing one. */
async function assertOrderVisible(db: Db, caller: Caller, orderId: number): Promise<void> {
  const [order] = await db.select({ customerId: orders.customerId }).from(orders).where(eq(orders.id, orderId));
  if (!order || !mayReadOrder(caller, order)) throw new DomainError('not-found', `Order ${orderId} does not exist.`);
}

export async function getFulfillment({ db, caller, params }: Access & { params: FulfillmentParams }): Promise<Fulfillment> {
  await assertOrderVisible(db, caller, params.id);
  const [row] = await db
    .select(fulfillmentColumns)
    .from(fulfillments)
    .where(and(eq(fulfillments.orderId, params.id), eq(fulfillments.id, params.fulfillmentId)));
  if (!row) throw new DomainError('not-found', `Order ${params.id} has no fulfillment ${params.fulfillmentId}.`);
  return toFulfillment(row);
}

/** Newest first, like the other lists. */
const fulfillmentOrder = newestFirst<{ createdAt: Date; id: number }>(fulfillments.createdAt, fulfillments.id, 'integer', (row) => row.id);

export async function listFulfillments({ db, caller, query, cursors }: Access & { query: FulfillmentListQuery; cursors: CursorCodec }): Promise<Page<Fulfillment>> {
  await assertOrderVisible(db, caller, query.id);
  const binding = JSON.stringify(['fulfillments', query.id]);
  return listPage(
    { cursors, binding, terms: fulfillmentOrder, query },
    (page) => page.rowsOf(db.select(fulfillmentColumns).from(fulfillments).$dynamic(), eq(fulfillments.orderId, query.id)),
    toFulfillment,
  );
}
