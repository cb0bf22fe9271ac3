/**
 * Orders: creation, reads, writes and status moves (docs/api.md#resources, #order-states and #writes). Each write locks the
 * order, checks If-Match against its representation, and runs in one transaction. `lockOrder`
 * and `transition` are the seams for neighbouring modules (payments, fulfillments): they change
 * an order inside their own transaction with the same rules.
 */
import './orders.problems.ts';
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { mayMoveTo, mayOrderFor, mayReadOrder, ownCustomerId } from '../../auth/policy.ts';
import { invalidToken, type Caller } from '../../auth/tokens.ts';
import type { Db } from '../../db/client.ts';
import { transaction, type UnitOfWork } from '../../db/unit-of-work.ts';
import { statement, statements } from '../../db/statements.ts';
import { users } from '../../db/schema.ts';
import { payments } from '../payments/payments.table.ts';
import { products } from '../products/products.table.ts';
import { orderItems, orders } from './orders.table.ts';
import { DomainError, type FieldError } from '../../errors/problems.ts';
import { API_PREFIX } from '../../lib/api-paths.ts';
import { assertIfMatch } from '../../lib/preconditions.ts';
import type { Preconditions } from '../../trpc/context.ts';
import { sameMetadata } from '../common.schemas.ts';
import { releaseStock, reserveStock } from '../products/products.stock.ts';
import { refundRemaining } from '../refunds/refunds.ledger.ts';
import { orderEvents } from './orders.events.ts';
import { parseOrderDocument, patcherFor } from './orders.patch.ts';
import { expandOrders } from './orders.expand.ts';
import { orderTotal, toOrder, type ItemRow, type LoadedOrder } from './orders.representation.ts';
import {
  addressEditable,
  allowedNext,
  findTransition,
  holdsStock,
  itemsEditable,
  type Channel,
  type OrderStatus,
} from './orders.rules.ts';
import { Order, type Expansion, type OrderCreate, type OrderDocument, type OrderPatch, type OrderReplace } from './orders.schemas.ts';

export type { LoadedOrder } from './orders.representation.ts';

/** Who acts on which database: the first members of every service call. */
export interface Access {
  db: Db;
  caller: Caller;
}

interface ItemSpec {
  product_id: number;
  quantity: number;
}

interface PricedItem {
  productId: number;
  quantity: number;
  unitPrice: number;
}

export const orderColumns = {
  id: orders.id,
  customerId: orders.customerId,
  address: orders.address,
  status: orders.status,
  discountCode: orders.discountCode,
  currency: orders.currency,
  total: orders.total,
  metadata: orders.metadata,
  createdAt: orders.createdAt,
  updatedAt: orders.updatedAt,
};

export const itemColumns = {
  id: orderItems.id,
  orderId: orderItems.orderId,
  position: orderItems.position,
  productId: orderItems.productId,
  quantity: orderItems.quantity,
  unitPrice: orderItems.unitPrice,
};

/** The representation as this service answers it, links under the API's base path. */
export const represent = (order: LoadedOrder): Order => toOrder(order, API_PREFIX);

const notFound = (id: number) => new DomainError('not-found', `Order ${id} does not exist.`);
const notYours = () => new DomainError('forbidden', 'Customers create and change only their own orders.');

/**
 * `onlyOf`: a customer's id. Then another customer's order is not even read (nor, with `lock`,
 * locked): it is missing to them, and they can never hold or wait on its lock.
 */
/** The order row: `any` or `own` (a customer's only), read or locked FOR UPDATE. */
const orderRow = statements('order_row', (db, shape: 'any' | 'own' | 'any_locked' | 'own_locked') => {
  const id = eq(orders.id, sql.placeholder('id'));
  const query = db
    .select(orderColumns)
    .from(orders)
    .where(shape.startsWith('own') ? and(id, eq(orders.customerId, sql.placeholder('customerId'))) : id);
  return shape.endsWith('locked') ? query.for('update') : query;
});

const orderLines = statement('order_lines', (db) =>
  db
    .select(itemColumns)
    .from(orderItems)
    .where(eq(orderItems.orderId, sql.placeholder('id')))
    .orderBy(asc(orderItems.position)),
);

async function loadOrder(db: Db, id: number, lock: boolean, onlyOf?: number): Promise<LoadedOrder> {
  const shape = onlyOf === undefined ? (lock ? 'any_locked' : 'any') : lock ? 'own_locked' : 'own';
  const [row] = await orderRow(shape, db, { id, customerId: onlyOf });
  if (!row) throw notFound(id);
  const items = await orderLines(db, { id });
  return { row, items };
}

/** Someone else's order looks like a missing one to a customer. */
function assertVisible(caller: Caller, order: LoadedOrder): void {
  if (!mayReadOrder(caller, order.row)) throw notFound(order.row.id);
}

/**
 * Loads order `id` locked FOR UPDATE until `tx` ends, if `caller` may see it (404 otherwise).
 * Writes to one order serialize on this lock.
 */
export async function lockOrder(tx: UnitOfWork, { id, caller }: { id: number; caller: Caller }): Promise<LoadedOrder> {
  const order = await loadOrder(tx, id, true, ownCustomerId(caller));
  assertVisible(caller, order);
  return order;
}

/**
 * Which customer an order belongs to: a customer is always themself. The user row is read with
 * FOR KEY SHARE inside the order's transaction, so it cannot be deleted before the order that
 * refers to it is written: a signed token whose user no longer exists is 401 (the caller is
 * unknown), a `customer_id` naming nobody 422; neither reaches the foreign key as a 500.
 */
async function resolveCustomer(tx: UnitOfWork, caller: Caller, requested: number | undefined): Promise<number> {
  const own = ownCustomerId(caller);
  if (own !== undefined) {
    if (requested !== undefined && !mayOrderFor(caller, requested)) throw notYours();
    const self = await lockUser(tx, own);
    if (self === undefined) throw invalidToken('The user this access token was issued to does not exist.');
    return self;
  }
  if (requested === undefined) {
    throw new DomainError('validation-error', 'customer_id is required.', { errors: [{ field: 'customer_id', message: 'Required' }] });
  }
  if ((await lockUser(tx, requested)) === undefined) {
    throw new DomainError('validation-error', `User ${requested} does not exist.`, {
      errors: [{ field: 'customer_id', message: 'no such user' }],
    });
  }
  return requested;
}

/** The user's id if the row exists, locked against deletion until the transaction ends. */
const userKeyShare = statement('user_key_share', (db) =>
  db
    .select({ id: users.id })
    .from(users)
    .where(eq(users.id, sql.placeholder('id')))
    .for('key share'),
);

async function lockUser(tx: UnitOfWork, id: number): Promise<number | undefined> {
  const [user] = await userKeyShare(tx, { id });
  return user?.id;
}

/** Products by id, `count` of them (1 to MAX_ITEMS): one statement per count. */
const productsForPricing = statements('products_for_pricing', (db, count: number) =>
  db
    .select({ id: products.id, price: products.price, currency: products.currency, archivedAt: products.archivedAt })
    .from(products)
    .where(
      inArray(
        products.id,
        Array.from({ length: count }, (_, i) => sql.placeholder(`id${i}`)),
      ),
    ),
);

/** `{ id0: ids[0], id1: ids[1], ... }`, the values of an `in` list's placeholders. */
const idValues = (ids: readonly number[]): Record<string, number> => Object.fromEntries(ids.map((id, i) => [`id${i}`, id]));

/**
 * Prices the items: a product already in the order keeps the price it had when it was set; a new
 * one must be a live product in the order's currency (422 naming the item otherwise).
 */
async function priceItems(tx: UnitOfWork, items: ItemSpec[], currency: string, previous: ItemRow[]): Promise<PricedItem[]> {
  const kept = new Map(previous.map((item) => [item.productId, item.unitPrice]));
  const wanted = [...new Set(items.map((item) => item.product_id).filter((id) => !kept.has(id)))];
  const found = wanted.length ? await productsForPricing(wanted.length, tx, idValues(wanted)) : [];
  const byId = new Map(found.map((p) => [p.id, p]));
  const errors: FieldError[] = [];
  const priced = items.map((item, index) => {
    const keptPrice = kept.get(item.product_id);
    if (keptPrice !== undefined) return { productId: item.product_id, quantity: item.quantity, unitPrice: keptPrice };
    const product = byId.get(item.product_id);
    if (!product || product.archivedAt) {
      errors.push({ field: `items.${index}.product_id`, message: product ? 'product is archived' : 'no such product' });
    } else if (product.currency !== currency) {
      errors.push({ field: `items.${index}.product_id`, message: `product is priced in ${product.currency}, the order in ${currency}` });
    }
    return { productId: item.product_id, quantity: item.quantity, unitPrice: product?.price ?? 0 };
  });
  if (errors.length > 0) {
    throw new DomainError('validation-error', `Invalid items: ${errors.map((e) => e.field).join(', ')}.`, { errors });
  }
  return priced;
}

/** Replaces the order's lines; answers the stored rows, in position order. */
const deleteLines = statement('order_lines_delete', (db) => db.delete(orderItems).where(eq(orderItems.orderId, sql.placeholder('orderId'))));

/** `count` lines (1 to MAX_ITEMS) of one order: one statement per count. */
const insertLines = statements('order_lines_insert', (db, count: number) =>
  db
    .insert(orderItems)
    .values(
      Array.from({ length: count }, (_, position) => ({
        orderId: sql.placeholder('orderId'),
        position,
        productId: sql.placeholder(`productId${position}`),
        quantity: sql.placeholder(`quantity${position}`),
        unitPrice: sql.placeholder(`unitPrice${position}`),
      })),
    )
    .returning(itemColumns),
);

/**
 * `fresh`: the order was inserted in this transaction and has no lines yet, so none are deleted
 * (a statement fewer on every order POST, which pays for its event: docs/performance.md).
 */
async function writeItems(tx: UnitOfWork, orderId: number, priced: PricedItem[], fresh = false): Promise<ItemRow[]> {
  if (!fresh) await deleteLines(tx, { orderId });
  if (priced.length === 0) return [];
  const values: Record<string, number> = { orderId };
  priced.forEach((item, position) => {
    values[`productId${position}`] = item.productId;
    values[`quantity${position}`] = item.quantity;
    values[`unitPrice${position}`] = item.unitPrice;
  });
  return insertLines(priced.length, tx, values);
}

/** Writes the (locked) order's fields as they now are in `order.row`, and stamps updated_at. */
const updateOrder = statement('order_update', (db) =>
  db
    .update(orders)
    .set({
      customerId: sql`${sql.placeholder('customerId')}`,
      address: sql`${sql.placeholder('address')}`,
      status: sql`${sql.placeholder('status')}`,
      discountCode: sql`${sql.placeholder('discountCode')}`,
      currency: sql`${sql.placeholder('currency')}`,
      total: sql`${sql.placeholder('total')}`,
      metadata: sql`${sql.placeholder('metadata')}::jsonb`,
      updatedAt: sql`${sql.placeholder('updatedAt')}`,
    })
    .where(eq(orders.id, sql.placeholder('id')))
    .returning(orderColumns),
);

/** Writes the (locked) order's row as it now is, its total summed from its lines as they now are. */
async function saveOrder(tx: UnitOfWork, order: LoadedOrder): Promise<void> {
  const { id, customerId, address, status, discountCode, currency, metadata } = order.row;
  const total = orderTotal(order.items);
  // As drizzle sends a timestamp column's Date (a placeholder's value is sent as it is); jsonb as its text.
  const [row] = await updateOrder(tx, {
    id,
    customerId,
    address,
    status,
    discountCode,
    currency,
    total,
    metadata: JSON.stringify(metadata),
    updatedAt: new Date().toISOString(),
  });
  if (!row) throw notFound(id);
  order.row = row;
}

/**
 * The 409 of a move the state table refuses, for this module and its neighbours (payments,
 * fulfillments): `allowed` lists where `via` can take the order from `from`. `detail` replaces the
 * generic explanation where the caller knows better ("Order 7 is already paid.").
 */
export function invalidTransition(from: OrderStatus, to: OrderStatus, via: Channel, detail?: string): DomainError {
  const how =
    to === 'paid'
      ? ' An order becomes paid only through POST /payments.'
      : to === 'shipped'
        ? ' An order ships only through POST /orders/{id}/fulfillments.'
        : to === 'refunded'
          ? ' An order becomes refunded only through refunds of its payment (POST /payments/{id}/refunds).'
          : '';
  return new DomainError('invalid-state-transition', detail ?? `An order cannot move from ${from} to ${to} this way.${how}`, {
    extensions: { current_status: from, requested_status: to, allowed: allowedNext(from, via) },
  });
}

/**
 * Moves a locked order (from `lockOrder`) to `to` through `via`, inside the caller's transaction:
 * checks the state table and `caller`'s right to the move, runs its effects (confirm reserves
 * stock, cancel and refund release it, cancelling a paid order refunds it), and writes the new status. Throws, leaving the rollback to the
 * transaction, when any of it fails. `order` is updated to the stored row.
 */
export async function transition(tx: UnitOfWork, order: LoadedOrder, to: OrderStatus, via: Channel, caller: Caller): Promise<void> {
  const from = order.row.status;
  const before = represent(order);
  const move = findTransition(from, to, via);
  if (!move) throw invalidTransition(from, to, via);
  if (!mayMoveTo(caller, move)) throw new DomainError('forbidden', `Only an admin may set an order to ${to}.`);
  if (to === 'confirmed') {
    const errors: FieldError[] = [];
    if (order.items.length === 0) errors.push({ field: 'items', message: 'an order needs at least one item to be confirmed' });
    if (!order.row.address) errors.push({ field: 'address', message: 'an order needs an address to be confirmed' });
    if (errors.length > 0) {
      throw new DomainError('validation-error', `The order cannot be confirmed: missing ${errors.map((e) => e.field).join(', ')}.`, { errors });
    }
    await reserveStock(tx, order.items);
  }
  // Cancelling a paid order gives its money back in the same transaction (docs/api.md#refunds).
  if (to === 'cancelled' && from === 'paid') await refundRemaining(tx, order.row.id);
  if ((to === 'cancelled' || to === 'refunded') && holdsStock(from)) await releaseStock(tx, order.items);
  order.row.status = to;
  await saveOrder(tx, order);
  // Every move's event, whoever asked for it (PUT, an action, a payment, a shipment). No move
  // enters draft: the state table has none.
  if (to !== 'draft') await orderEvents.record(tx, { type: `order.${to}`, object: represent(order), previous: before });
}

function sameItems(current: ItemRow[], next: ItemSpec[]): boolean {
  return current.length === next.length && current.every((item, i) => item.productId === next[i]?.product_id && item.quantity === next[i]?.quantity);
}

/** Locks the order, checks If-Match, runs `change` in the same transaction, and answers the order as it then is. */
function changeOrder(
  { db, caller, id, preconditions }: Access & { id: number; preconditions: Preconditions },
  change: (tx: UnitOfWork, order: LoadedOrder) => Promise<void>,
): Promise<Order> {
  return transaction(db, async (tx) => {
    const order = await lockOrder(tx, { id, caller });
    assertIfMatch(preconditions, Order, represent(order));
    await change(tx, order);
    return represent(order);
  });
}

const insertOrder = statement('order_insert', (db) =>
  db
    .insert(orders)
    .values({
      customerId: sql.placeholder('customerId'),
      address: sql.placeholder('address'),
      discountCode: sql.placeholder('discountCode'),
      currency: sql.placeholder('currency'),
      total: sql.placeholder('total'),
      metadata: sql`${sql.placeholder('metadata')}::jsonb`,
      status: 'draft',
    })
    .returning(orderColumns),
);

export async function createOrder({ db, work, caller, input }: Access & { work?: UnitOfWork; input: OrderCreate }): Promise<Order> {
  if (input.status !== undefined && input.status !== 'draft') {
    throw new DomainError('validation-error', 'A new order is always a draft.', {
      errors: [{ field: 'status', message: 'must be draft (or omitted) when an order is created' }],
    });
  }
  return transaction(work ?? db, async (tx) => {
    const customerId = await resolveCustomer(tx, caller, input.customer_id);
    const currency = input.currency ?? 'USD';
    const priced = await priceItems(tx, input.items, currency, []);
    const [row] = await insertOrder(tx, {
      customerId,
      address: input.address ?? null,
      discountCode: input.discount_code ?? null,
      currency,
      total: priced.reduce((sum, item) => sum + item.unitPrice * item.quantity, 0),
      metadata: JSON.stringify(input.metadata ?? {}),
    });
    if (!row) throw new Error('insert returned no row');
    const order = represent({ row, items: await writeItems(tx, row.id, priced, true) });
    await orderEvents.record(tx, { type: 'order.created', object: order });
    return order;
  });
}

export async function getOrder({ db, caller, id, expand }: Access & { id: number; expand?: readonly Expansion[] | undefined }): Promise<Order> {
  const order = await loadOrder(db, id, false);
  assertVisible(caller, order);
  const [expanded = represent(order)] = await expandOrders({ db, caller, orders: [represent(order)], expand });
  return expanded;
}

/**
 * Applies a full writable document (PUT, or the result of a patch): omitted optional fields
 * become empty, read-only fields are ignored, and every rule of the state table applies.
 */
async function applyDocument(tx: UnitOfWork, caller: Caller, order: LoadedOrder, doc: OrderDocument): Promise<void> {
  const before = represent(order);
  const current = order.row;
  const status = current.status;
  const customerId = doc.customer_id ?? current.customerId;
  if (!mayOrderFor(caller, customerId)) throw notYours();
  const items: ItemSpec[] = (doc.items ?? []).map(({ product_id, quantity }) => ({ product_id, quantity }));
  const currency = doc.currency ?? current.currency;
  const address = doc.address ?? null;
  const discountCode = doc.discount_code ?? null;
  const metadata = doc.metadata ?? {};
  const nextStatus = doc.status ?? status;

  const itemsChanged = !sameItems(order.items, items);
  const draftOnly = itemsChanged || customerId !== current.customerId || currency !== current.currency;
  if (draftOnly && !itemsEditable(status)) {
    throw new DomainError('conflict', `Items, customer_id and currency change only while the order is a draft; it is ${status}.`);
  }
  if (address !== current.address && !addressEditable(status)) {
    throw new DomainError('conflict', `The address cannot change once the order has shipped; it is ${status}.`);
  }
  if (customerId !== current.customerId) await resolveCustomer(tx, caller, customerId);

  // Metadata is the client's own: it changes in any status.
  if (draftOnly || address !== current.address || discountCode !== current.discountCode || !sameMetadata(metadata, current.metadata)) {
    // A new currency re-prices every line (and checks each product is priced in it).
    const currencyChanged = currency !== current.currency;
    if (itemsChanged || currencyChanged) {
      const priced = await priceItems(tx, items, currency, currencyChanged ? [] : order.items);
      order.items = await writeItems(tx, current.id, priced);
    }
    Object.assign(current, { customerId, currency, address, discountCode, metadata });
    await saveOrder(tx, order);
    await orderEvents.record(tx, { type: 'order.updated', object: represent(order), previous: before });
  }
  // Last, so confirming checks the items and address just written.
  if (nextStatus !== status) await transition(tx, order, nextStatus, 'write', caller);
}

export function replaceOrder({ db, caller, input, preconditions }: Access & { input: OrderReplace; preconditions: Preconditions }): Promise<Order> {
  return changeOrder({ db, caller, id: input.id, preconditions }, (tx, order) => applyDocument(tx, caller, order, input));
}

/** PATCH: the patch applies to the order's representation; the result must be a valid PUT body. */
export function patchOrder({ db, caller, input, preconditions }: Access & { input: OrderPatch; preconditions: Preconditions }): Promise<Order> {
  const patch = patcherFor(input);
  return changeOrder({ db, caller, id: input.id, preconditions }, (tx, order) =>
    applyDocument(tx, caller, order, parseOrderDocument(patch(represent(order)))),
  );
}

/** The confirm and cancel actions; the status the order already has changes nothing (200, same ETag). */
export function transitionOrder({
  db,
  caller,
  id,
  to,
  via,
  preconditions,
}: Access & { id: number; to: OrderStatus; via: Channel; preconditions: Preconditions }): Promise<Order> {
  return changeOrder({ db, caller, id, preconditions }, async (tx, order) => {
    if (order.row.status !== to) await transition(tx, order, to, via, caller);
  });
}

export async function deleteOrder({ db, caller, id, preconditions }: Access & { id: number; preconditions: Preconditions }): Promise<void> {
  await transaction(db, async (tx) => {
    const order = await lockOrder(tx, { id, caller });
    assertIfMatch(preconditions, Order, represent(order));
    const [payment] = await tx.select({ id: payments.id }).from(payments).where(eq(payments.orderId, id)).limit(1);
    if (payment) throw new DomainError('order-has-payment', `Order ${id} has a payment and cannot be deleted.`);
    if (holdsStock(order.row.status)) await releaseStock(tx, order.items);
    await tx.delete(orders).where(eq(orders.id, id));
    await orderEvents.record(tx, { type: 'order.deleted', object: represent(order) });
  });
}
