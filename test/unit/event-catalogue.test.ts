/**
 * The event catalogue (docs/api.md#events): gathered from each module's own declaration, it holds
 * every type the contract names, one `order.<status>` per status an order enters, and nothing twice.
 */
import { describe, expect, it } from 'vitest';
import { ORDER_STATUSES } from '../../server/modules/orders/orders.table.ts';
import { declareTypes, eventTypes } from '../../server/events/catalogue.ts';
// Loading the router loads every module, and with it every module's declaration.
import '../../server/router.ts';

describe('every module declares its event types beside its procedures, gathered into one catalogue', () => {
  it('holds the types the API promises (refunds add payment.refunded and order.refunded with their module)', () => {
    const types = [...eventTypes().keys()];
    expect(types).toEqual(
      expect.arrayContaining([
        'order.created',
        'order.updated',
        'order.confirmed',
        'order.paid',
        'order.shipped',
        'order.delivered',
        'order.completed',
        'order.cancelled',
        'order.deleted',
        'payment.created',
        'fulfillment.created',
        'fulfillment.updated',
        'product.created',
        'product.updated',
        'product.archived',
        'user.created',
        'user.updated',
        'user.deleted',
      ]),
    );
  });

  it('an order.<status> for every status but draft (a draft is entered only by order.created)', () => {
    const statusTypes = [...eventTypes().keys()].filter((type) => type.startsWith('order.') && (ORDER_STATUSES as readonly string[]).includes(type.slice(6)));
    expect(statusTypes.sort()).toEqual(ORDER_STATUSES.filter((status) => status !== 'draft').map((status) => `order.${status}`).sort());
  });

  it('every type has a description, and a type declared twice is refused at load', () => {
    for (const [type, description] of eventTypes()) expect(description, type).toMatch(/\w/);
    expect(() => declareTypes({ 'order.paid': 'again' })).toThrow(/declared twice/);
    expect(() => declareTypes({ 'Order.Paid': 'bad name' } as never)).toThrow(/resource/);
  });
});
