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
import { isActiveOrder, orderItems, orders } from './orders.table.ts';
import { clip, DomainError, type FieldError } from '../../errors/problems.ts';
import { API_PREFIX } from '../../lib/api-paths.ts';
import { assertIfMatch } from '../../lib/preconditions.ts';
import type { Preconditions } from '../../trpc/context.ts';
import { sameMetadata, type Page } from '../common.schemas.ts';
import { keyPlaceholders, keysetCondition, keysetOrder, keyValues, pageOf, readPageRequest, limitOffset, type CursorCodec, type PageRequest, type SortTerm } from '../paging.ts';
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
  normalizeStatus,
  type Channel,
  type OrderStatus,
} from './orders.rules.ts';
import { ORDER_SORTS, Order, type Expansion, type OrderCreate, type OrderSort, type OrderDocument, type OrderListQuery, type OrderPatch, type OrderReplace } from './orders.schemas.ts';

export type { LoadedOrder } from './orders.representation.ts';

/** Who acts on which database: the first members of every service call. */
interface Access {
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

const orderColumns = {
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

const itemColumns = {
  id: orderItems.id,
  orderId: orderItems.orderId,
  position: orderItems.position,
  productId: orderItems.productId,
  quantity: orderItems.quantity,
  unitPrice: orderItems.unitPrice,
};

/** The representation as this service answers it, links under the API's base path. */
const represent = (order: LoadedOrder): Order => toOrder(order, API_PREFIX);

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

type StatusFilter = 'any' | 'active' | OrderStatus;

type ListRow = typeof orders.$inferSelect;

/** Each sort's terms: one direction for every term, so a page is one index range (the id breaks ties). */
const SORT_COLUMNS: Record<'created_at' | 'updated_at' | 'total', Omit<SortTerm<ListRow>, 'descending'>> = {
  created_at: { column: orders.createdAt, kind: 'instant', read: (row) => row.createdAt.toISOString() },
  updated_at: { column: orders.updatedAt, kind: 'instant', read: (row) => row.updatedAt.toISOString() },
  total: { column: orders.total, kind: 'bigint', read: (row) => row.total },
};
const idTerm: Omit<SortTerm<ListRow>, 'descending'> = { column: orders.id, kind: 'integer', read: (row) => row.id };

const SORT_TERMS = new Map<OrderSort, SortTerm<ListRow>[]>(
  ORDER_SORTS.map((sort) => {
    const descending = sort.startsWith('-');
    const field = SORT_COLUMNS[(descending ? sort.slice(1) : sort) as keyof typeof SORT_COLUMNS];
    return [sort, [{ ...field, descending }, { ...idTerm, descending }]];
  }),
);
const DEFAULT_SORT: OrderSort = '-created_at';

function sortTermsOf(sort: string | undefined): SortTerm<ListRow>[] {
  const terms = SORT_TERMS.get((sort ?? DEFAULT_SORT) as OrderSort);
  if (terms === undefined) {
    const allowed = ORDER_SORTS.join(', ');
    throw new DomainError('malformed-request', `Unknown sort "${clip(String(sort), 64)}". Allowed: ${allowed}.`, {
      errors: [{ field: 'sort', message: `must be one of ${allowed}` }],
    });
  }
  return terms;
}

/** What selects a list's rows besides the caller: each optional filter present or not. */
interface ListShape {
  whose: 'all' | 'own';
  status: StatusFilter;
  sort: OrderSort;
  metadata: boolean;
  createdGte: boolean;
  createdLt: boolean;
  direction: PageRequest['direction'];
}

const shapeKey = (shape: ListShape): string =>
  [shape.whose, shape.status, shape.sort, shape.metadata ? 'm' : '', shape.createdGte ? 'g' : '', shape.createdLt ? 'l' : '', shape.direction].join(':');

function parseShape(key: string): ListShape {
  const [whose, status, sort, metadata, createdGte, createdLt, direction] = key.split(':') as [ListShape['whose'], StatusFilter, OrderSort, string, string, string, PageRequest['direction']];
  return { whose, status, sort, metadata: metadata === 'm', createdGte: createdGte === 'g', createdLt: createdLt === 'l', direction };
}

/**
 * One statement per shape: everyone's or one customer's orders; by no status, `active`, or one
 * status; with or without a metadata containment and each bound of the creation range; in one of
 * the six sorts; from a page number or at a cursor's key (a closed set, built on first use). Each
 * sort has its index, everyone's and a customer's; the metadata filter its GIN index
 * (server/db/schema.ts; test/db/list-plans.test.ts), so a page costs the same at any depth by
 * cursor. The status is written into the statement, not bound (a closed set of eight): a
 * prepared statement's generic plan, planned for any status, walked every order in time order
 * filtering the status, which for a rare status reads the whole table.
 */
const orderList = statements('order_list', (db, key: string) => {
  const shape = parseShape(key);
  const terms = sortTermsOf(shape.sort);
  const filters = [];
  if (shape.whose === 'own') filters.push(eq(orders.customerId, sql.placeholder('customerId')));
  if (shape.status === 'active') filters.push(isActiveOrder(orders.status));
  else if (shape.status !== 'any') filters.push(eq(orders.status, sql.raw(`'${shape.status}'`)));
  if (shape.metadata) filters.push(sql`${orders.metadata} @> ${sql.placeholder('metadata')}::jsonb`);
  if (shape.createdGte) filters.push(sql`${orders.createdAt} >= ${sql.placeholder('createdGte')}::timestamptz`);
  if (shape.createdLt) filters.push(sql`${orders.createdAt} < ${sql.placeholder('createdLt')}::timestamptz`);
  if (shape.direction !== 'first') filters.push(keysetCondition(terms, shape.direction, keyPlaceholders(terms.length)));
  const matching = db.select(orderColumns).from(orders).where(and(...filters));
  // The metadata filter finds its orders first, through the GIN index, and sorts those: an
  // `offset 0` subquery is not merged into the outer query, so a generic plan (which cannot know
  // how rare the value is) never walks a sort index filtering every order by containment. Named
  // `orders`, so the sort's columns name the subquery's. (The offset is bound: drizzle leaves out a literal 0.)
  const source = shape.metadata ? matching.offset(sql.placeholder('fence')).as('orders') : undefined;
  const query = source ? db.select(orderColumns).from(source) : matching;
  return query
    .orderBy(...keysetOrder(terms, shape.direction))
    .limit(sql.placeholder('limit'))
    .offset(sql.placeholder('offset'));
});

/** The lines of `count` orders (1 to a page's limit): one statement per count. */
const linesOf = statements('order_lines_of', (db, count: number) =>
  db
    .select(itemColumns)
    .from(orderItems)
    .where(
      inArray(
        orderItems.orderId,
        Array.from({ length: count }, (_, i) => sql.placeholder(`id${i}`)),
      ),
    ),
);

export async function listOrders({ db, caller, query, cursors }: Access & { query: OrderListQuery; cursors: CursorCodec }): Promise<Page<Order>> {
  const own = ownCustomerId(caller);
  // A customer lists only their own orders: naming themself changes nothing, naming another is refused.
  if (own !== undefined && query.customer_id !== undefined && query.customer_id !== own) {
    throw new DomainError('forbidden', "Customers list only their own orders: customer_id may name only you.");
  }
  const customerId = own ?? query.customer_id;
  let statusShape: StatusFilter = 'any';
  let status: OrderStatus | undefined;
  if (query.status !== undefined) {
    if (query.status.toLowerCase() === 'active') {
      statusShape = 'active';
    } else {
      status = normalizeStatus(query.status);
      if (!status) {
        throw new DomainError('validation-error', `Unknown status "${query.status}".`, {
          errors: [{ field: 'status', message: 'must be an order status (any case), an upper-case alias, or active' }],
        });
      }
      statusShape = status;
    }
  }
  const sort = query.sort ?? DEFAULT_SORT;
  const terms = sortTermsOf(sort);
  // An empty metadata object (/trpc) filters nothing. Keys in one order, so the filter has one spelling.
  const metadata = query.metadata && Object.keys(query.metadata).length > 0 ? JSON.stringify(Object.fromEntries(Object.entries(query.metadata).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))) : undefined;
  // A cursor is good for the same filters and sort, whatever the status's spelling (`PAID`, `paid`);
  // the list as it was before sorts and filters keeps its cursors' binding.
  const extra = [query.customer_id ?? null, query.created_gte ?? null, query.created_lt ?? null, metadata ?? null, sort];
  const plain = extra.slice(0, 4).every((value) => value === null) && sort === DEFAULT_SORT;
  const binding = `orders:${status === undefined ? statusShape : 'status'}:${status ?? ''}${plain ? '' : `:${JSON.stringify(extra)}`}`;
  const request = readPageRequest(cursors, binding, terms, query);
  const shape: ListShape = {
    whose: customerId === undefined ? 'all' : 'own',
    status: statusShape,
    sort,
    metadata: metadata !== undefined,
    createdGte: query.created_gte !== undefined,
    createdLt: query.created_lt !== undefined,
    direction: request.direction,
  };
  const rows = await orderList(shapeKey(shape), db, {
    customerId,
    metadata,
    createdGte: query.created_gte,
    createdLt: query.created_lt,
    fence: 0,
    ...limitOffset(request),
    ...keyValues(request),
  });
  const ids = rows.slice(0, query.limit).map((row) => row.id);
  const items = ids.length ? await linesOf(ids.length, db, Object.fromEntries(ids.map((id, i) => [`id${i}`, id]))) : [];
  const byOrder = new Map<number, ItemRow[]>();
  for (const item of items) byOrder.set(item.orderId, [...(byOrder.get(item.orderId) ?? []), item]);
  const page = pageOf({ codec: cursors, binding, terms, request }, rows, (row) => represent({ row, items: byOrder.get(row.id) ?? [] }));
  // Expansions after the page is read: one statement each for the whole page (orders.expand.ts).
  return { ...page, data: await expandOrders({ db, caller, orders: page.data, expand: query.expand }) };
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
