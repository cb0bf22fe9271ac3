/** The cart lives in localStorage until it becomes an order: it survives the sign-in's redirect. */
import { useEffect, useState } from 'preact/hooks';

export interface CartLine {
  product_id: number;
  name: string;
  /** Minor units, as listed when added: the order takes the price of the moment it is placed. */
  price: number;
  currency: string;
  quantity: number;
}

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
  if (line) line.quantity += 1;
  else lines.push({ ...product, quantity: 1 });
  write(lines);
}

export function setQuantity(productId: number, quantity: number): void {
  write(readCart().map((l) => (l.product_id === productId ? { ...l, quantity } : l)));
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
