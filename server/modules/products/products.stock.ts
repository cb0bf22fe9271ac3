/**
 * Stock reservation, for the modules that take products out of stock and put them back (orders
 * today; fulfillments next). Each function runs inside the caller's transaction, so a reservation
 * is part of the write that needs it and rolls back with it.
 */
import './products.problems.ts';
import { and, eq, gte, sql } from 'drizzle-orm';
import type { UnitOfWork } from '../../db/unit-of-work.ts';
import { products } from './products.table.ts';
import { DomainError } from '../../errors/problems.ts';
import { MAX_STOCK } from '../common.schemas.ts';

/** One line of an order (or of anything that holds stock): how many units of which product. */
export interface StockLine {
  productId: number;
  quantity: number;
}

/** Sums quantities per product, in product id order (a fixed lock order avoids deadlocks). */
function perProduct(lines: readonly StockLine[]): [number, number][] {
  const totals = new Map<number, number>();
  for (const line of lines) totals.set(line.productId, (totals.get(line.productId) ?? 0) + line.quantity);
  return [...totals].sort(([a], [b]) => a - b);
}

/**
 * Reserves stock for every line or for none: on a shortage it throws `insufficient-stock`
 * naming the lines (`items.N.quantity`) and products, and the caller's transaction rolls back
 * whatever was already taken.
 */
export async function reserveStock(tx: UnitOfWork, lines: readonly StockLine[]): Promise<void> {
  const short: number[] = [];
  for (const [productId, quantity] of perProduct(lines)) {
    const updated = await tx
      .update(products)
      .set({ stock: sql`${products.stock} - ${quantity}`, updatedAt: new Date() })
      .where(and(eq(products.id, productId), gte(products.stock, quantity)))
      .returning({ id: products.id });
    if (updated.length === 0) short.push(productId);
  }
  if (short.length > 0) {
    const errors = lines
      .map((line, index) => ({ line, index }))
      .filter(({ line }) => short.includes(line.productId))
      .map(({ line, index }) => ({ field: `items.${index}.quantity`, message: `not enough stock of product ${line.productId}` }));
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
export async function releaseStock(tx: UnitOfWork, lines: readonly StockLine[]): Promise<void> {
  for (const [productId, quantity] of perProduct(lines)) {
    await tx
      .update(products)
      .set({
        stock: sql`least(${products.stock}::bigint + ${quantity}, greatest(${products.stock}, ${MAX_STOCK}))`,
        updatedAt: new Date(),
      })
      .where(eq(products.id, productId));
  }
}
