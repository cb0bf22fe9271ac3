/**
 * `expand` through the procedures (the typed client's door, server/testing.ts), and its cost
 * (docs/api.md#expand): one statement per expansion per page, whatever the page size, counted
 * from the statements the database is sent (drizzle's logger, `onQuery`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fulfillments } from '../../server/modules/fulfillments/fulfillments.table.ts';
import { payments } from '../../server/modules/payments/payments.table.ts';
import type { Expansion } from '../../server/modules/orders/orders.schemas.ts';
import { createTestHarness, type TestCaller, type TestHarness } from '../../server/testing.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { expectDomainError } from '../helpers/problems.ts';
import { productInput } from '../helpers/products.ts';

const sent: string[] = [];
let harness: TestHarness;
let admin: TestCaller;
let alice: { id: number; caller: TestCaller };

const EVERY: Expansion[] = ['items.product', 'customer', 'payments', 'fulfillments'];
const PAGE = 50;

beforeAll(async () => {
  harness = await createTestHarness({ database: await createTestDatabase({ onQuery: (text) => sent.push(text) }) });
  admin = harness.caller({ role: 'admin' });
  const a = await harness.createUser({ name: 'Alice' });
  alice = { id: a.user.id, caller: a.caller };
  // PAGE orders of two products each (a hundred products in all), each with a payment and a
  // fulfillment row, so every expansion has something for every order of the page.
  for (let i = 0; i < PAGE; i++) {
    const first = await admin.products.create(productInput({ stock: 10 }));
    const second = await admin.products.create(productInput({ stock: 10 }));
    const order = await alice.caller.orders.create({
      items: [
        { product_id: first.id, quantity: 1 },
        { product_id: second.id, quantity: 2 },
      ],
    });
    await harness.db.insert(payments).values({ orderId: order.id, amount: order.total, currency: 'USD', method: 'card' });
    await harness.db.insert(fulfillments).values({ orderId: order.id, status: 'requested' });
  }
}, 240_000);
afterAll(async () => {
  await harness?.close();
});

/** The statements `run` sends. */
async function statementsOf(run: () => Promise<unknown>): Promise<string[]> {
  sent.length = 0;
  await run();
  return [...sent];
}

describe('one statement per expansion per page, whatever the page size', () => {
  it.each([1, PAGE])('a page of %i orders: the list, its lines, and one statement per expansion', async (limit) => {
    const plain = await statementsOf(() => admin.orders.list({ limit }));
    const expanded = await statementsOf(async () => {
      const page = await admin.orders.list({ limit, expand: EVERY });
      expect(page.data).toHaveLength(limit);
      for (const order of page.data) {
        expect(order.items.every((item) => item.product?.id === item.product_id)).toBe(true);
        expect(order.customer?.id).toBe(alice.id);
        expect(order.payments).toHaveLength(1);
        expect(order.fulfillments).toHaveLength(1);
      }
    });
    expect(plain).toHaveLength(2);
    expect(expanded).toHaveLength(plain.length + EVERY.length);
    // Each expansion alone adds exactly one.
    for (const expansion of EVERY) {
      expect(await statementsOf(() => admin.orders.list({ limit, expand: [expansion, expansion] })), expansion).toHaveLength(plain.length + 1);
    }
  });

  it('one order read: the order, its lines, and one statement per expansion', async () => {
    const [order] = (await admin.orders.list({ limit: 1 })).data;
    if (!order) throw new Error('no order');
    const plain = await statementsOf(() => admin.orders.get({ id: order.id }));
    const expanded = await statementsOf(() => admin.orders.get({ id: order.id, expand: EVERY }));
    expect(expanded).toHaveLength(plain.length + EVERY.length);
  });

  it('customer for a caller who may read no user: null, and no statement for it', async () => {
    const service = harness.caller({ role: 'service', scopes: ['orders:read'] });
    const statements = await statementsOf(async () => {
      const page = await service.orders.list({ limit: PAGE, expand: ['customer'] });
      expect(page.data.every((order) => order.customer === null)).toBe(true);
    });
    expect(statements).toHaveLength(2);
  });
});

describe('the typed input', () => {
  it('an empty expand is a validation error (REST cannot send one either): leave it out', async () => {
    const [order] = (await alice.caller.orders.list({ limit: 1 })).data;
    if (!order) throw new Error('no order');
    const error = await expectDomainError(alice.caller.orders.get({ id: order.id, expand: [] }), 'UNPROCESSABLE_CONTENT', 'validation-error');
    expect(error.errors?.map((e) => e.field)).toEqual(['expand']);
  });

  it('a value outside the set is a validation error naming expand', async () => {
    // @ts-expect-error: the typed client takes only the four expansions.
    const call = admin.orders.get({ id: 1, expand: ['items.product.category'] });
    const error = await expectDomainError(call, 'UNPROCESSABLE_CONTENT', 'validation-error');
    expect(error.errors?.map((e) => e.field)).toEqual(['expand.0']);
  });
});
