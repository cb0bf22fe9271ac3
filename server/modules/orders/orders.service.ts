import { and, asc, desc, eq, gte, inArray, sql } from 'drizzle-orm';
import { invalidToken, type Caller } from '../../auth/tokens.ts';
import type { Db } from '../../db/client.ts';
import { orderItems, orders, payments, products, users } from '../../db/schema.ts';
import { DomainError, type FieldError } from '../../errors/problems.ts';
import { assertIfMatch } from '../../lib/preconditions.ts';
import type { Preconditions } from '../../trpc/context.ts';
import { iso, MAX_STOCK, toPage, type Page } from '../common.schemas.ts';
import { API_PREFIX } from '../../http/paths.ts';
import {
  ACTIVE_STATUSES,
  addressEditable,
  allowedNext,
  findTransition,
  holdsStock,
  itemsEditable,
  normalizeStatus,
  type Channel,
  type OrderStatus,
} from './orders.rules.ts';
import type { Order, OrderCreate, OrderDocument, OrderListQuery, OrderReplace } from './orders.schemas.ts';

type OrderRow = typeof orders.$inferSelect;
type ItemRow = typeof orderItems.$inferSelect;

interface LoadedOrder {
  row: OrderRow;
  items: ItemRow[];
}

interface ItemSpec {
  product_id: number;
  quantity: number;
}

export function toOrder({ row, items }: LoadedOrder): Order {
  const status = row.status as OrderStatus;
  const self = `${API_PREFIX}/orders/${row.id}`;
  const links: Order['_links'] = { self: { href: self, method: 'GET' } };
  if (findTransition(status, 'confirmed', 'confirm')) links.confirm = { href: `${self}/confirm`, method: 'POST' };
  if (findTransition(status, 'cancelled', 'cancel')) links.cancel = { href: `${self}/cancel`, method: 'POST' };
  const lines = [...items]
    .sort((a, b) => a.position - b.position)
    .map((item) => ({
      product_id: item.productId,
      quantity: item.quantity,
      unit_price: item.unitPrice,
      line_total: item.unitPrice * item.quantity,
    }));
  return {
    id: row.id,
    customer_id: row.customerId,
    items: lines,
    address: row.address,
    status,
    discount_code: row.discountCode,
    currency: row.currency,
    total: lines.reduce((sum, line) => sum + line.line_total, 0),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    _links: links,
  };
}

const notFound = (id: number) => new DomainError('not-found', `Order ${id} does not exist.`);
const isAdmin = (caller: Caller) => caller.role === 'admin';
const isCustomer = (caller: Caller) => caller.role === 'customer';

/** Customers see only their own orders; anyone else's looks like a missing one. */
function assertVisible(caller: Caller, row: OrderRow): void {
  if (isCustomer(caller) && row.customerId !== caller.userId) throw notFound(row.id);
}

async function loadOrder(db: Db, id: number, lock: boolean): Promise<LoadedOrder> {
  const query = db.select().from(orders).where(eq(orders.id, id));
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw notFound(id);
  const items = await db.select().from(orderItems).where(eq(orderItems.orderId, id)).orderBy(asc(orderItems.position));
  return { row, items };
}

/**
 * Which customer an order belongs to: a customer is always themself. The user row is read with
 * FOR KEY SHARE inside the order's transaction, so it cannot be deleted before the order that
 * refers to it is written: a signed token whose user no longer exists is 401 (the caller is
 * unknown), a `customer_id` naming nobody 422; neither reaches the foreign key as a 500.
 */
async function resolveCustomer(db: Db, caller: Caller, requested: number | undefined): Promise<number> {
  if (isCustomer(caller)) {
    if (requested !== undefined && requested !== caller.userId) {
      throw new DomainError('forbidden', 'Customers create and change only their own orders.');
    }
    const self = caller.userId === undefined ? undefined : await lockUser(db, caller.userId);
    if (self === undefined) throw invalidToken('The user this access token was issued to does not exist.');
    return self;
  }
  if (requested === undefined) {
    throw new DomainError('validation-error', 'customer_id is required.', { errors: [{ field: 'customer_id', message: 'Required' }] });
  }
  if ((await lockUser(db, requested)) === undefined) {
    throw new DomainError('validation-error', `User ${requested} does not exist.`, {
      errors: [{ field: 'customer_id', message: 'no such user' }],
    });
  }
  return requested;
}

/** The user's id if the row exists, locked against deletion until the transaction ends. */
async function lockUser(db: Db, id: number): Promise<number | undefined> {
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.id, id)).for('key share');
  return user?.id;
}

/**
 * Prices the items: a product already in the order keeps the price it had when it was set; a new
 * one must be a live product in the order's currency (422 naming the item otherwise).
 */
async function priceItems(db: Db, items: ItemSpec[], currency: string, previous: ItemRow[]): Promise<{ productId: number; quantity: number; unitPrice: number }[]> {
  const kept = new Map(previous.map((item) => [item.productId, item.unitPrice]));
  const wanted = [...new Set(items.map((item) => item.product_id).filter((id) => !kept.has(id)))];
  const found = wanted.length
    ? await db
        .select({ id: products.id, price: products.price, currency: products.currency, archivedAt: products.archivedAt })
        .from(products)
        .where(inArray(products.id, wanted))
    : [];
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
async function writeItems(db: Db, orderId: number, priced: { productId: number; quantity: number; unitPrice: number }[]): Promise<ItemRow[]> {
  await db.delete(orderItems).where(eq(orderItems.orderId, orderId));
  if (priced.length === 0) return [];
  return db
    .insert(orderItems)
    .values(priced.map((item, position) => ({ orderId, position, ...item })))
    .returning();
}

/** Sums quantities per product, in product id order (a fixed lock order avoids deadlocks). */
function perProduct(items: ItemRow[]): [number, number][] {
  const totals = new Map<number, number>();
  for (const item of items) totals.set(item.productId, (totals.get(item.productId) ?? 0) + item.quantity);
  return [...totals].sort(([a], [b]) => a - b);
}

/** Reserves stock for every line or for none: the caller's transaction rolls back on failure. */
async function reserveStock(db: Db, items: ItemRow[]): Promise<void> {
  const short: number[] = [];
  for (const [productId, quantity] of perProduct(items)) {
    const updated = await db
      .update(products)
      .set({ stock: sql`${products.stock} - ${quantity}`, updatedAt: new Date() })
      .where(and(eq(products.id, productId), gte(products.stock, quantity)))
      .returning({ id: products.id });
    if (updated.length === 0) short.push(productId);
  }
  if (short.length > 0) {
    const errors = items
      .map((item, index) => ({ item, index }))
      .filter(({ item }) => short.includes(item.productId))
      .map(({ item, index }) => ({ field: `items.${index}.quantity`, message: `not enough stock of product ${item.productId}` }));
    throw new DomainError('insufficient-stock', `Not enough stock for ${errors.map((e) => e.field).join(', ')}; nothing was reserved.`, {
      errors,
      extensions: { product_ids: short },
    });
  }
}

/**
 * Puts reserved units back. Stock is at most MAX_STOCK (the product schema), but many orders may
 * have reserved from it before an admin set it to the maximum again: the sum is computed in
 * bigint and capped at MAX_STOCK (or at a larger stock stored before the bound existed), so a
 * cancel or DELETE can never fail on integer overflow and leave the order stuck.
 */
async function releaseStock(db: Db, items: ItemRow[]): Promise<void> {
  for (const [productId, quantity] of perProduct(items)) {
    await db
      .update(products)
      .set({
        stock: sql`least(${products.stock}::bigint + ${quantity}, greatest(${products.stock}, ${MAX_STOCK}))`,
        updatedAt: new Date(),
      })
      .where(eq(products.id, productId));
  }
}

function invalidTransition(from: OrderStatus, to: OrderStatus, via: Channel): DomainError {
  const allowed = allowedNext(from, via);
  const how =
    to === 'paid' ? ' An order becomes paid only through POST /payments.' : to === 'shipped' ? ' An order ships only through POST /orders/{id}/fulfillments.' : '';
  return new DomainError('invalid-state-transition', `An order cannot move from ${from} to ${to} this way.${how}`, {
    extensions: { current_status: from, requested_status: to, allowed },
  });
}

/**
 * Moves an order to `to` through `via`: checks the table and the caller's right, runs the
 * move's effects (stock), and records the new status. The order must be locked by the caller.
 */
export async function moveStatus(db: Db, caller: Caller, order: LoadedOrder, to: OrderStatus, via: Channel): Promise<void> {
  const from = order.row.status as OrderStatus;
  const transition = findTransition(from, to, via);
  if (!transition) throw invalidTransition(from, to, via);
  if (transition.adminOnly && !isAdmin(caller)) {
    throw new DomainError('forbidden', `Only an admin may set an order to ${to}.`);
  }
  if (to === 'confirmed') {
    const errors: FieldError[] = [];
    if (order.items.length === 0) errors.push({ field: 'items', message: 'an order needs at least one item to be confirmed' });
    if (!order.row.address) errors.push({ field: 'address', message: 'an order needs an address to be confirmed' });
    if (errors.length > 0) {
      throw new DomainError('validation-error', `The order cannot be confirmed: missing ${errors.map((e) => e.field).join(', ')}.`, { errors });
    }
    await reserveStock(db, order.items);
  }
  if (to === 'cancelled' && holdsStock(from)) await releaseStock(db, order.items);
  order.row.status = to;
}

function sameItems(current: ItemRow[], next: ItemSpec[]): boolean {
  return current.length === next.length && current.every((item, i) => item.productId === next[i]?.product_id && item.quantity === next[i]?.quantity);
}

/** Locks, checks visibility and If-Match, runs `change`, and answers the (re)loaded order. */
async function withLockedOrder(
  db: Db,
  caller: Caller,
  id: number,
  preconditions: Preconditions,
  change: (tx: Db, order: LoadedOrder) => Promise<boolean>,
): Promise<Order> {
  return db.transaction(async (tx) => {
    const order = await loadOrder(tx, id, true);
    assertVisible(caller, order.row);
    assertIfMatch(preconditions, toOrder(order));
    const changed = await change(tx, order);
    if (!changed) return toOrder(order);
    const [row] = await tx
      .update(orders)
      .set({
        customerId: order.row.customerId,
        address: order.row.address,
        status: order.row.status,
        discountCode: order.row.discountCode,
        currency: order.row.currency,
        updatedAt: new Date(),
      })
      .where(eq(orders.id, id))
      .returning();
    if (!row) throw notFound(id);
    return toOrder({ row, items: order.items });
  });
}

export async function createOrder(db: Db, caller: Caller, input: OrderCreate): Promise<Order> {
  if (input.status !== undefined && input.status !== 'draft') {
    throw new DomainError('validation-error', 'A new order is always a draft.', {
      errors: [{ field: 'status', message: 'must be draft (or omitted) when an order is created' }],
    });
  }
  return db.transaction(async (tx) => {
    const customerId = await resolveCustomer(tx, caller, input.customer_id);
    const currency = input.currency ?? 'USD';
    const priced = await priceItems(tx, input.items, currency, []);
    const [row] = await tx
      .insert(orders)
      .values({ customerId, address: input.address ?? null, discountCode: input.discount_code ?? null, currency, status: 'draft' })
      .returning();
    if (!row) throw new Error('insert returned no row');
    return toOrder({ row, items: await writeItems(tx, row.id, priced) });
  });
}

export async function getOrder(db: Db, caller: Caller, id: number): Promise<Order> {
  const order = await loadOrder(db, id, false);
  assertVisible(caller, order.row);
  return toOrder(order);
}

export async function listOrders(db: Db, caller: Caller, query: OrderListQuery): Promise<Page<Order>> {
  const filters = [];
  if (isCustomer(caller)) filters.push(eq(orders.customerId, caller.userId as number));
  if (query.status !== undefined) {
    if (query.status.toLowerCase() === 'active') {
      filters.push(inArray(orders.status, [...ACTIVE_STATUSES]));
    } else {
      const status = normalizeStatus(query.status);
      if (!status) {
        throw new DomainError('validation-error', `Unknown status "${query.status}".`, {
          errors: [{ field: 'status', message: 'must be an order status (any case), an upper-case alias, or active' }],
        });
      }
      filters.push(eq(orders.status, status));
    }
  }
  const rows = await db
    .select()
    .from(orders)
    .where(and(...filters))
    .orderBy(desc(orders.createdAt), desc(orders.id))
    .limit(query.limit + 1)
    .offset((query.page - 1) * query.limit);
  const ids = rows.slice(0, query.limit).map((row) => row.id);
  const items = ids.length ? await db.select().from(orderItems).where(inArray(orderItems.orderId, ids)) : [];
  const byOrder = new Map<number, ItemRow[]>();
  for (const item of items) byOrder.set(item.orderId, [...(byOrder.get(item.orderId) ?? []), item]);
  return toPage(rows, query.page, query.limit, (row) => toOrder({ row, items: byOrder.get(row.id) ?? [] }));
}

/**
 * Applies a full writable document (PUT, or the result of a patch): omitted optional fields
 * become empty, read-only fields are ignored, and every rule of the state table applies.
 * Answers whether anything changed.
 */
async function applyDocument(tx: Db, caller: Caller, order: LoadedOrder, doc: OrderDocument): Promise<boolean> {
  const current = order.row;
  const status = current.status as OrderStatus;
  const customerId = doc.customer_id ?? current.customerId;
  if (isCustomer(caller) && customerId !== caller.userId) {
    throw new DomainError('forbidden', 'Customers create and change only their own orders.');
  }
  const items: ItemSpec[] = (doc.items ?? []).map(({ product_id, quantity }) => ({ product_id, quantity }));
  const currency = doc.currency ?? current.currency;
  const address = doc.address ?? null;
  const discountCode = doc.discount_code ?? null;
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

  const changed = draftOnly || address !== current.address || discountCode !== current.discountCode || nextStatus !== status;
  if (!changed) return false;

  // A new currency re-prices every line (and checks each product is priced in it).
  const currencyChanged = currency !== current.currency;
  current.customerId = customerId;
  current.currency = currency;
  current.address = address;
  current.discountCode = discountCode;
  if (itemsChanged || currencyChanged) {
    const priced = await priceItems(tx, items, currency, currencyChanged ? [] : order.items);
    order.items = await writeItems(tx, current.id, priced);
  }
  if (nextStatus !== status) await moveStatus(tx, caller, order, nextStatus, 'write');
  return true;
}

export function replaceOrder(db: Db, caller: Caller, input: OrderReplace, preconditions: Preconditions): Promise<Order> {
  return withLockedOrder(db, caller, input.id, preconditions, (tx, order) => applyDocument(tx, caller, order, input));
}

/** PATCH: the patch applies to the order's representation; the result must be a valid PUT body. */
export function patchOrder(
  db: Db,
  caller: Caller,
  id: number,
  patch: (representation: Order) => unknown,
  parse: (document: unknown) => OrderDocument,
  preconditions: Preconditions,
): Promise<Order> {
  return withLockedOrder(db, caller, id, preconditions, (tx, order) => applyDocument(tx, caller, order, parse(patch(toOrder(order)))));
}

export function transitionOrder(db: Db, caller: Caller, id: number, to: OrderStatus, via: Channel, preconditions: Preconditions): Promise<Order> {
  return withLockedOrder(db, caller, id, preconditions, async (tx, order) => {
    if (order.row.status === to) return false; // same status: nothing to do, 200 with the same ETag
    await moveStatus(tx, caller, order, to, via);
    return true;
  });
}

export async function deleteOrder(db: Db, caller: Caller, id: number, preconditions: Preconditions): Promise<void> {
  await db.transaction(async (tx) => {
    const order = await loadOrder(tx, id, true);
    assertVisible(caller, order.row);
    assertIfMatch(preconditions, toOrder(order));
    const [payment] = await tx.select({ id: payments.id }).from(payments).where(eq(payments.orderId, id)).limit(1);
    if (payment) throw new DomainError('order-has-payment', `Order ${id} has a payment and cannot be deleted.`);
    if (holdsStock(order.row.status as OrderStatus)) await releaseStock(tx, order.items);
    await tx.delete(orders).where(eq(orders.id, id));
  });
}
