/**
 * The order state machine (docs/api.md#order-states) as one table. Every way of changing a status
 * (PUT/PATCH, the confirm and cancel actions, payments, refunds, fulfillments) asks this table.
 */
import { ORDER_STATUSES, type OrderStatus } from './orders.table.ts';

export { ORDER_STATUSES, type OrderStatus };

/** How a move is requested. */
export type Channel = 'write' | 'confirm' | 'cancel' | 'payment' | 'fulfillment' | 'refund';

interface Transition {
  from: OrderStatus;
  to: OrderStatus;
  via: readonly Channel[];
  adminOnly?: boolean;
}

export const TRANSITIONS: readonly Transition[] = [
  { from: 'draft', to: 'confirmed', via: ['confirm', 'write'] },
  { from: 'draft', to: 'cancelled', via: ['cancel', 'write'] },
  { from: 'confirmed', to: 'cancelled', via: ['cancel', 'write'] },
  { from: 'confirmed', to: 'paid', via: ['payment'] },
  { from: 'paid', to: 'shipped', via: ['fulfillment'] },
  { from: 'shipped', to: 'delivered', via: ['write'], adminOnly: true },
  { from: 'delivered', to: 'completed', via: ['write'], adminOnly: true },
  // Money moves only by an explicit action: cancelling a paid order refunds it in full, and a
  // refund that leaves nothing of the payment refunds the order (docs/api.md#refunds).
  { from: 'paid', to: 'cancelled', via: ['cancel'] },
  { from: 'paid', to: 'refunded', via: ['refund'] },
  { from: 'delivered', to: 'refunded', via: ['refund'] },
  { from: 'completed', to: 'refunded', via: ['refund'] },
];

export function findTransition(from: OrderStatus, to: OrderStatus, via: Channel): Transition | undefined {
  return TRANSITIONS.find((t) => t.from === from && t.to === to && t.via.includes(via));
}

/** Statuses an order in `from` can move to through `via` (the `allowed` list of a 409). */
export function allowedNext(from: OrderStatus, via: Channel): OrderStatus[] {
  return TRANSITIONS.filter((t) => t.from === from && t.via.includes(via)).map((t) => t.to);
}

/** An order may be paid (POST /payments) exactly when the table lets a payment make it paid. */
export const awaitsPayment = (status: OrderStatus): boolean => findTransition(status, 'paid', 'payment') !== undefined;

/**
 * An order may be sent to fulfillment or shipped exactly when the table lets a fulfillment make
 * it shipped: a fulfillment request is the first half of that move.
 */
export const awaitsShipment = (status: OrderStatus): boolean => findTransition(status, 'shipped', 'fulfillment') !== undefined;

/** Statuses an order reaches only after it was paid. */
const PAID_OR_LATER: readonly OrderStatus[] = ['paid', 'shipped', 'delivered', 'completed'];
export const isPaid = (status: OrderStatus): boolean => PAID_OR_LATER.includes(status);

/** From payment on, an order can have fulfillments (its `fulfillments` link). */
export const mayHaveFulfillments = isPaid;

/**
 * A payment of an order in these statuses may be refunded in part (docs/api.md#refunds); in full
 * only where the table lets a refund make the order refunded (not while shipped).
 */
export const acceptsRefund = isPaid;

/** Items, customer and currency change only in draft; the address until the order ships. */
export const itemsEditable = (status: OrderStatus): boolean => status === 'draft';
export const addressEditable = (status: OrderStatus): boolean => status === 'draft' || status === 'confirmed' || status === 'paid';

/** Statuses in which the order holds reserved stock: from confirm until it ships. */
export const holdsStock = (status: OrderStatus): boolean => status === 'confirmed' || status === 'paid';

/** The `active` listing filter (beside the column, which its partial indexes need). */
export { ACTIVE_STATUSES } from './orders.table.ts';

/** Every word a status input may be, lower-cased: the statuses and the upper-case schema's `CREATED`. */
const STATUS_BY_WORD: ReadonlyMap<string, OrderStatus> = new Map([...ORDER_STATUSES.map((status) => [status, status] as const), ['created', 'draft']]);

/**
 * Any case, and the upper-case schema's names (`CREATED` = draft). Undefined when unknown; a Map,
 * so inherited names (`constructor`, `__proto__`) are no status.
 */
export function normalizeStatus(value: string): OrderStatus | undefined {
  return STATUS_BY_WORD.get(value.trim().toLowerCase());
}
