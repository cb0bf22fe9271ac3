/** The cart lives in localStorage until it becomes an order: it survives the sign-in's redirect. */
import { useEffect, useState } from 'preact/hooks';

export interface CartLine {
  product_id: number;
  name: string;
  /** Minor units, as listed when added: the order takes the price of the moment it is placed. */
  price: number;
  currency: string;
  quantity: number;
  /**
   * The product's stock when last read (on adding, and each time the cart opens): a quantity is
   * capped at it, so the cart never holds more than the shop has. Absent in a cart kept before.
   */
  stock?: number;
}

/** A quantity the cart may hold: at least 1, at most the stock (when known) and an order line's 10,000. */
const capped = (quantity: number, stock: number | undefined): number => Math.max(1, Math.min(quantity, stock ?? 10_000, 10_000));

const KEY = 'storefront:cart';
const listeners = new Set<() => void>();

export function readCart(): CartLine[] {
  try {
    const value: unknown = JSON.parse(localStorage.getItem(KEY) ?? '[]');
    return Array.isArray(value) ? (value as CartLine[]) : [];
  } catch {
    return [];
  }
}

function write(lines: CartLine[]): void {
  if (lines.length === 0) localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, JSON.stringify(lines));
  for (const listener of listeners) listener();
}

export function addToCart(product: Omit<CartLine, 'quantity'>): void {
  const lines = readCart();
  const line = lines.find((l) => l.product_id === product.product_id);
  if (line) Object.assign(line, { stock: product.stock, quantity: capped(line.quantity + 1, product.stock) });
  else lines.push({ ...product, quantity: 1 });
  write(lines);
}

/** Sets a line's quantity, capped at the stock the cart knows; answers the quantity it holds. */
export function setQuantity(productId: number, quantity: number): number {
  let held = quantity;
  write(
    readCart().map((l) => {
      if (l.product_id !== productId) return l;
      held = capped(quantity, l.stock);
      return { ...l, quantity: held };
    }),
  );
  return held;
}

/**
 * Takes the stock just read for each product (by id) into the cart: a line beyond it is lowered
 * to it, a product sold out or gone is left for the shopper to remove. Answers the lines lowered.
 */
export function updateStock(stock: ReadonlyMap<number, number>): CartLine[] {
  const lowered: CartLine[] = [];
  const lines = readCart().map((l) => {
    const known = stock.get(l.product_id);
    if (known === undefined) return l;
    const quantity = known > 0 ? capped(l.quantity, known) : l.quantity;
    if (quantity < l.quantity) lowered.push({ ...l, quantity, stock: known });
    return { ...l, quantity, stock: known };
  });
  write(lines);
  return lowered;
}

export function removeFromCart(productId: number): void {
  write(readCart().filter((l) => l.product_id !== productId));
}

export const clearCart = (): void => write([]);

export function useCart(): CartLine[] {
  const [lines, setLines] = useState(readCart);
  useEffect(() => {
    const listener = () => setLines(readCart());
    listeners.add(listener);
    // Another tab of the shop changed the cart.
    const onStorage = (event: StorageEvent) => event.key === KEY && listener();
    addEventListener('storage', onStorage);
    return () => {
      listeners.delete(listener);
      removeEventListener('storage', onStorage);
    };
  }, []);
  return lines;
}
