/**
 * `expand` on order reads (docs/api.md#expand): related resources embedded in orders already
 * read, as their own GETs answer them. Each expansion is one statement for the whole page,
 * whatever its size (the ids travel as one text parameter, so one prepared statement serves
 * every page): never one query per order or per item.
 */
import { desc, sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { mayReadUser } from '../../auth/policy.ts';
import type { Caller } from '../../auth/tokens.ts';
import type { Db } from '../../db/client.ts';
import { statement } from '../../db/statements.ts';
import { users } from '../../db/schema.ts';
import { fulfillments } from '../fulfillments/fulfillments.table.ts';
import { payments } from '../payments/payments.table.ts';
import { products } from '../products/products.table.ts';
import { fulfillmentColumns, toFulfillment } from '../fulfillments/fulfillments.representation.ts';
import { paymentColumns, toPayment } from '../payments/payments.representation.ts';
import { productColumns, toProduct } from '../products/products.service.ts';
import { toUser, userColumns } from '../users/users.service.ts';
import type { Expansion, Order } from './orders.schemas.ts';

/** `column` is one of the ids in the `ids` placeholder, a comma list. */
const amongIds = (column: PgColumn): SQL => sql`${column} = any(string_to_array(${sql.placeholder('ids')}, ',')::int[])`;

const productsById = statement('expand_products', (db) => db.select(productColumns).from(products).where(amongIds(products.id)));

const usersById = statement('expand_users', (db) => db.select(userColumns).from(users).where(amongIds(users.id)));

const paymentsOfOrders = statement('expand_payments', (db) =>
  db
    .select(paymentColumns)
    .from(payments)
    .where(amongIds(payments.orderId))
    .orderBy(desc(payments.createdAt), desc(payments.id)),
);

const fulfillmentsOfOrders = statement('expand_fulfillments', (db) =>
  db
    .select(fulfillmentColumns)
    .from(fulfillments)
    .where(amongIds(fulfillments.orderId))
    .orderBy(desc(fulfillments.createdAt), desc(fulfillments.id)),
);

const idList = (ids: Iterable<number>): string => [...new Set(ids)].join(',');

function groupBy<T>(rows: readonly T[], key: (row: T) => number): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const row of rows) {
    const group = groups.get(key(row));
    if (group) group.push(row);
    else groups.set(key(row), [row]);
  }
  return groups;
}

/**
 * `orders` with what `expand` asks for (duplicates mean nothing more), in their order. Without
 * an expansion they are answered as they are, so the representation is unchanged. `customer` is
 * the user for a caller who may read it (yourself, or anyone as an admin or a service with
 * `users:read`), `null` otherwise: the field says it was asked for, without telling who.
 */
export async function expandOrders({ db, caller, orders, expand }: { db: Db; caller: Caller; orders: Order[]; expand: readonly Expansion[] | undefined }): Promise<Order[]> {
  const wanted = new Set(expand);
  if (wanted.size === 0 || orders.length === 0) return orders;
  const orderIds = idList(orders.map((order) => order.id));

  const [productRows, userRows, paymentRows, fulfillmentRows] = await Promise.all([
    wanted.has('items.product') ? productsById(db, { ids: idList(orders.flatMap((order) => order.items.map((item) => item.product_id))) }) : undefined,
    wanted.has('customer') ? readableUsers(db, caller, orders) : undefined,
    wanted.has('payments') ? paymentsOfOrders(db, { ids: orderIds }) : undefined,
    wanted.has('fulfillments') ? fulfillmentsOfOrders(db, { ids: orderIds }) : undefined,
  ]);
  const productById = new Map(productRows?.map((row) => [row.id, toProduct(row)]));
  const userById = new Map(userRows?.map((row) => [row.id, toUser(row)]));
  const paymentsByOrder = groupBy(paymentRows ?? [], (row) => row.orderId);
  const fulfillmentsByOrder = groupBy(fulfillmentRows ?? [], (row) => row.orderId);

  return orders.map((order) => {
    const expanded: Order = { ...order };
    if (productRows) expanded.items = order.items.map((item) => ({ ...item, product: productById.get(item.product_id) }));
    if (userRows) expanded.customer = userById.get(order.customer_id) ?? null;
    // A payment's links follow its order's status, which the order at hand has.
    if (paymentRows) expanded.payments = (paymentsByOrder.get(order.id) ?? []).map((row) => toPayment(row, order.status));
    if (fulfillmentRows) expanded.fulfillments = (fulfillmentsByOrder.get(order.id) ?? []).map(toFulfillment);
    return expanded;
  });
}

/** The customers of `orders` that `caller` may read: one statement, or none when it may read none. */
async function readableUsers(db: Db, caller: Caller, orders: readonly Order[]) {
  const ids = orders.map((order) => order.customer_id).filter((id) => mayReadUser(caller, id));
  return ids.length === 0 ? [] : usersById(db, { ids: idList(ids) });
}
