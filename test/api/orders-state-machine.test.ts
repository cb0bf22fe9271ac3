/**
 * The order state machine (docs/api.md#order-states), pinned pair by pair: every (from, to) over the
 * eight statuses through an admin PATCH, and the confirm and cancel actions from every status.
 */
import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { ORDER_STATUSES } from '../../server/modules/orders/orders.table.ts';
import { type TestUser, useTestApp } from '../helpers/app.ts';
import { MERGE_PATCH, orderAction, orderInStatus, ORDERS, ownLinks, readOrder, type OrderBody, type OrderStatus as Status } from '../helpers/orders.ts';
import { expectProblem } from '../helpers/problems.ts';
import { createProduct } from '../helpers/products.ts';

/**
 * The statuses of docs/api.md#order-states, from the one definition (test/unit/orders-rules.test.ts
 * pins its eight); the tables below are written out per status, so they are checked, not echoed,
 * and a new status does not compile until it has its row.
 */
const STATUSES: readonly Status[] = ORDER_STATUSES;

/** Moves that a PUT/PATCH status may make (docs/api.md#order-states); the rest go through other doors or nowhere. */
const WRITE_ALLOWED: Record<Status, Status[]> = {
  draft: ['confirmed', 'cancelled'],
  confirmed: ['cancelled'],
  paid: [],
  shipped: ['delivered'],
  delivered: ['completed'],
  completed: [],
  cancelled: [],
  refunded: [],
};

let owner: TestUser;
let productId: number;

const t = useTestApp();
beforeAll(async () => {
  owner = await t.createUser('customer');
  productId = (await createProduct(t, { stock: 1_000_000 })).id;
});

/** An order as read, and its ETag: what a refused move must leave as it was. */
async function read(id: number): Promise<{ order: OrderBody; etag: string }> {
  const { order, etag } = await readOrder(t, id);
  return { order, etag };
}

const action = (id: number, name: 'confirm' | 'cancel', token = t.admin.token): Promise<LightMyRequestResponse> => orderAction(t, id, name, token);

/** An order of the owner's in `status`, with one item and an address (the kit's `orderInStatus`). */
const makeOrder = (status: Status): Promise<OrderBody> =>
  orderInStatus(t, status, owner, { items: [{ product_id: productId, quantity: 1 }], address: '1 State St' });

function patchStatus(id: number, status: string): Promise<LightMyRequestResponse> {
  return t.request({
    method: 'PATCH',
    url: `${ORDERS}/${id}`,
    headers: MERGE_PATCH,
    payload: JSON.stringify({ status }),
    token: t.admin.token,
  });
}

const pairs = STATUSES.flatMap((from) => STATUSES.map((to) => [from, to] as const));
const kind = (from: Status, to: Status) => (from === to ? 'no-op' : WRITE_ALLOWED[from].includes(to) ? 'allowed' : 'refused');

describe('Status through PUT/PATCH follows the state table (admin PATCH {"status": to})', () => {
  it.each(pairs.filter(([from, to]) => kind(from, to) === 'allowed'))('%s -> %s is allowed: 200 with the new status', async (from, to) => {
    const order = await makeOrder(from);
    const res = await patchStatus(order.id, to);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<OrderBody>().status).toBe(to);
    const after = await read(order.id);
    expect(after.order.status).toBe(to);
    expect(res.headers.etag).toBe(after.etag);
  });

  it.each(pairs.filter(([from, to]) => kind(from, to) === 'no-op'))('%s -> %s (same status) changes nothing: 200 and the same ETag', async (from, to) => {
    const order = await makeOrder(from);
    const before = await read(order.id);
    const res = await patchStatus(order.id, to);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers.etag).toBe(before.etag);
    expect(await read(order.id)).toEqual(before);
  });

  it.each(pairs.filter(([from, to]) => kind(from, to) === 'refused'))(
    '%s -> %s is 409 invalid-state-transition listing the allowed next statuses; nothing changes',
    async (from, to) => {
      const order = await makeOrder(from);
      const before = await read(order.id);
      const res = await patchStatus(order.id, to);
      const problem = expectProblem(res, 409, 'invalid-state-transition');
      expect([...(problem.allowed ?? ['(missing)'])].sort()).toEqual([...WRITE_ALLOWED[from]].sort());
      expect(await read(order.id)).toEqual(before);
    },
  );
});

describe('Status input accepts any case and the upper-case names; output is lower-case', () => {
  it.each([
    ['CONFIRMED', 'confirmed'],
    ['Confirmed', 'confirmed'],
    ['CANCELLED', 'cancelled'],
  ])('PATCH {"status": "%s"} on a draft answers status %s', async (input, output) => {
    const order = await makeOrder('draft');
    const res = await patchStatus(order.id, input);
    expect(res.statusCode).toBe(200);
    expect(res.json<OrderBody>().status).toBe(output);
  });

  it('CREATED on a draft is the same status: a no-op', async () => {
    const order = await makeOrder('draft');
    const before = await read(order.id);
    const res = await patchStatus(order.id, 'CREATED');
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe(before.etag);
  });

  it('an unknown status is 422 naming status', async () => {
    const order = await makeOrder('draft');
    const res = await patchStatus(order.id, 'lost');
    expect(res.statusCode).toBe(422);
    expect(res.json<{ errors: { field: string }[] }>().errors.map((e) => e.field)).toContain('status');
  });
});

/** What each action does from each status: the move it makes, a no-op, or 409. */
const ACTIONS: Record<'confirm' | 'cancel', Record<Status, 'moves' | 'no-op' | 'refused'>> = {
  confirm: { draft: 'moves', confirmed: 'no-op', paid: 'refused', shipped: 'refused', delivered: 'refused', completed: 'refused', cancelled: 'refused', refunded: 'refused' },
  cancel: { draft: 'moves', confirmed: 'moves', paid: 'moves', shipped: 'refused', delivered: 'refused', completed: 'refused', cancelled: 'no-op', refunded: 'refused' },
};
const TARGET = { confirm: 'confirmed', cancel: 'cancelled' } as const;

const actionCases = (['confirm', 'cancel'] as const).flatMap((name) => STATUSES.map((from) => [name, from, ACTIONS[name][from]] as const));

describe('The confirm and cancel actions from every status', () => {
  it.each(actionCases)('POST /%s from %s: %s', async (name, from, outcome) => {
    const order = await makeOrder(from);
    const before = await read(order.id);
    const res = await action(order.id, name);
    if (outcome === 'refused') {
      const problem = expectProblem(res, 409, 'invalid-state-transition');
      expect(Array.isArray(problem.allowed)).toBe(true);
      expect(problem.allowed).not.toContain(TARGET[name]);
      expect(await read(order.id)).toEqual(before);
      return;
    }
    expect(res.statusCode, res.body).toBe(200);
    const answered = res.json<OrderBody>();
    expect(answered.status).toBe(outcome === 'moves' ? TARGET[name] : from);
    const after = await read(order.id);
    expect(answered).toEqual(after.order);
    if (outcome === 'no-op') expect(after).toEqual(before);
  });

  /** docs/api.md#order-states and issue 9: each status's `_links` besides `self`, as `name -> method path`. */
  const LINKS: Record<Status, Record<string, string>> = {
    draft: { confirm: 'POST {self}/confirm', cancel: 'POST {self}/cancel' },
    confirmed: { cancel: 'POST {self}/cancel', pay: 'POST /api/v1/payments' },
    paid: { cancel: 'POST {self}/cancel', 'send-to-fulfillment': 'POST {self}/send-to-fulfillment', fulfillments: 'GET {self}/fulfillments' },
    shipped: { fulfillments: 'GET {self}/fulfillments' },
    delivered: { fulfillments: 'GET {self}/fulfillments' },
    completed: { fulfillments: 'GET {self}/fulfillments' },
    cancelled: {},
    refunded: {},
  };

  it.each(STATUSES.map((status) => [status] as const))('an order in %s links exactly the actions it allows', async (status) => {
    const order = await makeOrder(status);
    const self = `${ORDERS}/${order.id}`;
    const expected = Object.fromEntries(
      Object.entries(LINKS[status]).map(([name, spec]) => {
        const [method = '', href = ''] = spec.split(' ');
        return [name, { href: href.replace('{self}', self), method }];
      }),
    );
    expect(ownLinks(order._links)).toEqual({ self: { href: self, method: 'GET' }, ...expected });
  });
});
