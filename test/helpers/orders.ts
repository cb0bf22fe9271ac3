/**
 * Orders for tests, typed from the module's schemas: what a client sends (`z.input` of
 * OrderCreate) and what the service answers (`z.infer` of Order), with the HTTP calls the order
 * tests share and a way to put an order in any status.
 */
import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { z } from 'zod';
import { ORDER_STATUSES, orders } from '../../server/modules/orders/orders.table.ts';
import { payments } from '../../server/modules/payments/payments.table.ts';
import { products } from '../../server/modules/products/products.table.ts';
import { refunds } from '../../server/modules/refunds/refunds.table.ts';
import { orderLinks } from '../../server/modules/orders/orders.links.ts';
import { isPaid, type OrderStatus } from '../../server/modules/orders/orders.rules.ts';
import type { Order, OrderCreate, OrderItemInput, OrderList } from '../../server/modules/orders/orders.schemas.ts';
import type { TestApp, TestUser } from './app.ts';
import { createProduct, type ProductBody } from './products.ts';

export type { OrderStatus };
export const ORDERS = '/api/v1/orders';
export const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' } as const;
export const JSON_PATCH = { 'content-type': 'application/json-patch+json' } as const;

/** A POST /orders body (and `orders.create` input) as a client writes it. */
export type OrderInputBody = z.input<typeof OrderCreate>;
export type OrderItemInputBody = z.input<typeof OrderItemInput>;
export type OrderBody = z.infer<typeof Order>;
export type OrderListBody = z.infer<typeof OrderList>;

type Headers = Record<string, string>;

/** Creates an order over HTTP as `token`'s user and returns it (expects 201). */
export async function createOrder(t: TestApp, body: OrderInputBody, token: string): Promise<OrderBody> {
  const res = await t.request({ method: 'POST', url: ORDERS, payload: body, token });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<OrderBody>();
}

/** GET an order (as the admin unless told), with its ETag. */
export async function readOrder(t: TestApp, id: number, token = t.admin.token): Promise<{ res: LightMyRequestResponse; order: OrderBody; etag: string }> {
  const res = await t.request({ method: 'GET', url: `${ORDERS}/${id}`, token });
  expect(res.statusCode, res.body).toBe(200);
  return { res, order: res.json<OrderBody>(), etag: String(res.headers.etag) };
}

/** The state after a refused write is the state before it: same body, same ETag. */
export async function expectOrderUnchanged(t: TestApp, before: { order: OrderBody; etag: string }): Promise<void> {
  const after = await readOrder(t, before.order.id);
  expect(after.order).toEqual(before.order);
  expect(after.etag).toBe(before.etag);
}

/** PATCH with any document: tests send malformed ones on purpose. Merge patch unless `headers` say otherwise. */
export function patchOrder(t: TestApp, id: number, doc: unknown, token: string, headers: Headers = MERGE_PATCH): Promise<LightMyRequestResponse> {
  return t.request({ method: 'PATCH', url: `${ORDERS}/${id}`, headers, payload: JSON.stringify(doc), token });
}

/** PUT with any document (serialized here, so invalid documents reach the service as sent). */
export function putOrder(t: TestApp, id: number, doc: unknown, token: string, headers: Headers = {}): Promise<LightMyRequestResponse> {
  return t.request({ method: 'PUT', url: `${ORDERS}/${id}`, headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(doc), token });
}

export function orderAction(t: TestApp, id: number, name: 'confirm' | 'cancel', token: string, headers: Headers = {}): Promise<LightMyRequestResponse> {
  return t.request({ method: 'POST', url: `${ORDERS}/${id}/${name}`, headers, token });
}

/** Writes a status straight to the row: for the statuses no door of this service reaches yet. */
export async function forceStatus(t: TestApp, id: number, status: OrderStatus): Promise<void> {
  await t.db.update(orders).set({ status }).where(eq(orders.id, id));
}

/** A product's stock as stored. */
export async function stockOf(t: TestApp, productId: number): Promise<number> {
  const [row] = await t.db.select({ stock: products.stock }).from(products).where(eq(products.id, productId));
  if (!row) throw new Error(`product ${productId} not found`);
  return row.stock;
}

/** The statuses from paid on, in the order an order passes them (the one definition's order). */
const PAID_AND_LATER: readonly OrderStatus[] = ORDER_STATUSES.filter(isPaid);

/**
 * Moves `owner`'s draft on to `status` the way the service allows it: confirmed and cancelled by
 * the actions, paid by a payment row (payments are not served yet), the later states (refunded
 * included, with its refund row) by direct writes. Returns the order as read afterwards.
 */
export async function advanceOrder(t: TestApp, draft: OrderBody, status: OrderStatus, owner: TestUser): Promise<OrderBody> {
  if (status === 'draft') return draft;
  if (status === 'cancelled') expect((await orderAction(t, draft.id, 'cancel', owner.token)).statusCode).toBe(200);
  else if (status === 'refunded') {
    // Paid, then refunded in full: the payment and its one refund as the refund would write them.
    expect((await orderAction(t, draft.id, 'confirm', owner.token)).statusCode).toBe(200);
    const [payment] = await t.db
      .insert(payments)
      .values({ orderId: draft.id, amount: draft.total, amountRefunded: draft.total, currency: 'USD', method: 'card' })
      .returning({ id: payments.id });
    if (draft.total > 0 && payment) await t.db.insert(refunds).values({ paymentId: payment.id, amount: draft.total, currency: 'USD' });
    await forceStatus(t, draft.id, 'refunded');
  } else {
    expect((await orderAction(t, draft.id, 'confirm', owner.token)).statusCode).toBe(200);
    if (PAID_AND_LATER.includes(status)) {
      await t.db.insert(payments).values({ orderId: draft.id, amount: draft.total, currency: 'USD', method: 'card' });
      for (const next of PAID_AND_LATER.slice(0, PAID_AND_LATER.indexOf(status) + 1)) await forceStatus(t, draft.id, next);
    }
  }
  const { order } = await readOrder(t, draft.id);
  expect(order.status).toBe(status);
  return order;
}

/** An order of `owner`'s in `status`, created from `body` and moved on by `advanceOrder`. */
export async function orderInStatus(t: TestApp, status: OrderStatus, owner: TestUser, body: OrderInputBody): Promise<OrderBody> {
  return advanceOrder(t, await createOrder(t, body, owner.token), status, owner);
}

/** Two customers and two products with stock to spare: what most order tests start from. */
export interface OrderScene {
  alice: TestUser;
  bob: TestUser;
  /** 1999 a unit. */
  shirt: ProductBody;
  /** 550 a unit. */
  mug: ProductBody;
}

export async function createOrderScene(t: TestApp): Promise<OrderScene> {
  return {
    alice: await t.createUser('customer'),
    bob: await t.createUser('customer'),
    shirt: await createProduct(t, { price: 1999, stock: 100_000 }),
    mug: await createProduct(t, { price: 550, stock: 100_000 }),
  };
}

export interface DraftOptions {
  /** Alice unless told. */
  owner?: TestUser;
  /** Two shirts and a mug unless told. */
  items?: OrderItemInputBody[];
  /** `null` leaves the address out. */
  address?: string | null;
  discount_code?: string;
}

/** A draft in the scene: alice's two shirts and a mug, to 1 Main St, unless `options` say otherwise. */
export function draftOrder(t: TestApp, scene: OrderScene, options: DraftOptions = {}): Promise<OrderBody> {
  const items = options.items ?? [
    { product_id: scene.shirt.id, quantity: 2 },
    { product_id: scene.mug.id, quantity: 1 },
  ];
  const address = options.address === null ? {} : { address: options.address ?? '1 Main St, Springfield' };
  const discount = options.discount_code === undefined ? {} : { discount_code: options.discount_code };
  return createOrder(t, { items, ...address, ...discount }, (options.owner ?? scene.alice).token);
}

/**
 * An order's own `_links` (its moves and relations), without those other modules declare on it
 * (order notes' `notes`, server/modules/orders/orders.links.ts): a test of the order's links
 * holds when a module adds one; the module's own test checks its link.
 */
export function ownLinks<L extends object>(links: L): Partial<L> {
  const declared = new Set(orderLinks.names());
  return Object.fromEntries(Object.entries(links).filter(([name]) => !declared.has(name))) as Partial<L>;
}
