/**
 * Events called directly, with no HTTP (server/testing.ts): the events a purchase writes, as a
 * caller reads them (docs/api.md#events), and the rules of who reads them.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EVENTS_CHANNEL } from '../../server/events/outbox.ts';
import { createTestHarness, type TestCaller, type TestHarness } from '../../server/testing.ts';
import { createTestDatabase, onPostgres } from '../helpers/db.ts';
import { withoutLinks } from '../helpers/events.ts';
import { expectDomainError } from '../helpers/problems.ts';
import { productInput } from '../helpers/products.ts';

let harness: TestHarness;
let admin: TestCaller;
let alice: TestCaller;
let bob: TestCaller;

beforeAll(async () => {
  harness = await createTestHarness(onPostgres ? { database: await createTestDatabase() } : {});
  admin = harness.caller({ role: 'admin' });
  alice = (await harness.createUser({ name: 'Alice' })).caller;
  bob = (await harness.createUser({ name: 'Bob' })).caller;
});
afterAll(async () => {
  await harness?.close();
});

describe('the events of an order through createCaller', () => {
  it('a paid order: its timeline holds its creation, confirmation, payment and payment move, newest first', async () => {
    const product = await admin.products.create(productInput({ price: 500, stock: 10 }));
    const draft = await alice.orders.create({ items: [{ product_id: product.id, quantity: 2 }], address: '1 Caller Ct' });
    await alice.orders.confirm({ id: draft.id });
    const payment = await alice.payments.create({ order_id: draft.id, amount: 1000, method: 'card' });
    const timeline = await alice.events.listForOrder({ id: draft.id, limit: 10 });
    expect(timeline.data.map((e) => e.type)).toEqual(['order.paid', 'payment.created', 'order.confirmed', 'order.created']);
    expect(timeline.data[1]?.data.object).toEqual(withoutLinks(payment));
    const listed = await admin.events.list({ order_id: draft.id, type: 'payment.*' });
    expect(listed.data.map((e) => e.id)).toEqual([timeline.data[1]?.id]);
    expect(await admin.events.get({ id: timeline.data[0]?.id ?? '' })).toEqual(timeline.data[0]);
  });

  it('refunds: a partial one is payment.refunded with the old amount_refunded; the rest of a paid order moves it to refunded; a cancelled paid order refunds too', async () => {
    const product = await admin.products.create(productInput({ price: 500, stock: 10 }));
    const paidOrder = async () => {
      const draft = await alice.orders.create({ items: [{ product_id: product.id, quantity: 2 }], address: '1 Caller Ct' });
      await alice.orders.confirm({ id: draft.id });
      return { order: draft, payment: await alice.payments.create({ order_id: draft.id, amount: 1000, method: 'card' }) };
    };
    const { order, payment } = await paidOrder();
    await admin.refunds.create({ id: payment.id, amount: 300 });
    await admin.refunds.create({ id: payment.id });
    const timeline = (await alice.events.listForOrder({ id: order.id, limit: 10 })).data;
    expect(timeline.map((e) => e.type)).toEqual(['order.refunded', 'payment.refunded', 'payment.refunded', 'order.paid', 'payment.created', 'order.confirmed', 'order.created']);
    const [, full, partial] = timeline;
    expect(partial?.data.object).toMatchObject({ id: payment.id, amount_refunded: 300 });
    expect(partial?.data.previous_attributes).toEqual({ amount_refunded: 0, updated_at: payment.updated_at });
    expect(full?.data.object).toEqual(withoutLinks(await alice.payments.get({ id: payment.id })));
    expect(full?.data.previous_attributes).toMatchObject({ amount_refunded: 300 });

    const cancelled = await paidOrder();
    await alice.orders.cancel({ id: cancelled.order.id });
    const types = (await alice.events.listForOrder({ id: cancelled.order.id, limit: 3 })).data.map((e) => e.type);
    expect(types.slice(0, 2).sort()).toEqual(['order.cancelled', 'payment.refunded']);
  });

  it("another customer's timeline is not-found; GET /events is for admins and events:read", async () => {
    const draft = await alice.orders.create({ items: [] });
    await expectDomainError(bob.events.listForOrder({ id: draft.id }), 'NOT_FOUND', 'not-found');
    await expectDomainError(alice.events.list(), 'FORBIDDEN', 'forbidden');
    await expectDomainError(harness.caller({ role: 'service', scopes: ['orders:read'] }).events.list(), 'FORBIDDEN', 'insufficient-scope');
    expect((await harness.caller({ role: 'service', scopes: ['events:read'] }).events.list({ limit: 1 })).data).toHaveLength(1);
  });

  it("the live updates' channel hears an order's events, not a product's (they carry only orders)", async () => {
    const heard: string[] = [];
    const unlisten = await harness.database.listen(EVENTS_CHANNEL, (id) => heard.push(id), () => undefined);
    try {
      const input = productInput({ stock: 5 });
      const product = await admin.products.create(input);
      await admin.products.replace({ ...input, id: product.id, name: `${input.name} v2` });
      const order = await alice.orders.create({ items: [{ product_id: product.id, quantity: 1 }], address: '1 Caller Ct' });
      const timeline = await alice.events.listForOrder({ id: order.id, limit: 10 });
      const created = timeline.data.find((event) => event.type === 'order.created');
      // Notifications arrive in commit order: once the order's is here, the product's would be.
      await vi.waitFor(() => expect(heard).toContain(created?.id), { timeout: 10_000 });
      const all = await admin.events.list({ limit: 10 });
      const others = all.data.filter((event) => !event.type.startsWith('order.')).map((event) => event.id);
      expect(others.length).toBeGreaterThanOrEqual(2);
      expect(heard.filter((id) => others.includes(id))).toEqual([]);
    } finally {
      await unlisten();
    }
  });

  it('an unknown type filter is a validation error naming type', async () => {
    await expectDomainError(admin.events.list({ type: 'order.nope' }), 'UNPROCESSABLE_CONTENT', 'validation-error');
  });
});
