import { randomBytes } from 'node:crypto';

let sequence = 0;

/** A valid product body; override any field. SKUs are unique per call. */
export function productInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  sequence += 1;
  return {
    sku: `SKU-${sequence}-${randomBytes(3).toString('hex')}`,
    name: `Product ${sequence}`,
    description: 'A fine product',
    category: 'apparel',
    price: 1000 + sequence,
    currency: 'USD',
    stock: 10,
    ...overrides,
  };
}

export function userInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  sequence += 1;
  return {
    email: `user-${sequence}-${randomBytes(3).toString('hex')}@example.com`,
    name: `User ${sequence}`,
    password: 'a-long-enough-password',
    ...overrides,
  };
}
