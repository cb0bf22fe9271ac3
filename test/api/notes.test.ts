/**
 * Staff notes on orders over REST (docs/api.md#order-notes): admins and service clients with
 * `notes:manage` write and read them; a customer never reads them, not even on their own order,
 * nor through the order's timeline; deleting the order deletes its notes. The proof that a module
 * is a local change (docs/architecture.md#adding-a-module).
 */
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { events } from '../../server/db/schema.ts';
import { orderNotes } from '../../server/modules/notes/notes.table.ts';
import type { OrderNote } from '../../server/modules/notes/notes.schemas.ts';
import { useTestApp } from '../helpers/app.ts';
import { createOrderScene, draftOrder, ORDERS, type OrderBody, type OrderScene } from '../helpers/orders.ts';
import { expectProblem } from '../helpers/problems.ts';

let scene: OrderScene;
let order: OrderBody;

const t = useTestApp();
beforeAll(async () => {
  scene = await createOrderScene(t);
  order = await draftOrder(t, scene);
});

const notesOf = (id: number) => `${ORDERS}/${id}/notes`;
const write = (id: number, body: unknown, token = t.admin.token) => t.request({ method: 'POST', url: notesOf(id), token, payload: body as Record<string, unknown> });

describe('order notes', () => {
  it('an admin writes a note: 201, its Location reads it back, signed with the admin', async () => {
    const res = await write(order.id, { body: 'Customer called: leave it with the neighbour.' });
    expect(res.statusCode).toBe(201);
    const note = res.json<OrderNote>();
    expect(note).toMatchObject({ order_id: order.id, author_id: t.admin.id, body: 'Customer called: leave it with the neighbour.' });
    expect(res.headers.location).toBe(`/api/v1/orders/${order.id}/notes/${note.id}`);
    const again = await t.request({ method: 'GET', url: String(res.headers.location), token: t.admin.token });
    expect(again.json()).toEqual(note);
  });

  it('lists an order\'s notes newest first; a service client with notes:manage writes unsigned ones', async () => {
    const fresh = await draftOrder(t, scene);
    const support = await t.serviceToken(['notes:manage']);
    const first = (await write(fresh.id, { body: 'first' })).json<OrderNote>();
    const second = await write(fresh.id, { body: 'second' }, support);
    expect(second.statusCode).toBe(201);
    expect(second.json<OrderNote>().author_id).toBeNull();
    const list = await t.request({ method: 'GET', url: notesOf(fresh.id), token: support });
    expect(list.statusCode).toBe(200);
    expect(list.json<{ data: OrderNote[] }>().data.map((note) => note.body)).toEqual(['second', 'first']);
    expect(list.json<{ data: OrderNote[] }>().data.at(-1)).toEqual(first);
  });

  it("every order links to its notes (a link this module declares on orders); staff follow it, a customer who does is refused", async () => {
    const own = await draftOrder(t, scene, { owner: scene.alice });
    const asOwner = await t.request({ method: 'GET', url: `${ORDERS}/${own.id}`, token: scene.alice.token });
    const link = asOwner.json<OrderBody>()._links.notes;
    expect(link).toEqual({ href: notesOf(own.id), method: 'GET' });
    // The same links for every caller, whatever their role (so one ETag for all).
    const asAdmin = await t.request({ method: 'GET', url: `${ORDERS}/${own.id}`, token: t.admin.token });
    expect(asAdmin.json<OrderBody>()._links).toEqual(asOwner.json<OrderBody>()._links);
    expect(asAdmin.headers.etag).toBe(asOwner.headers.etag);
    expect((await t.request({ method: 'GET', url: String(link?.href), token: t.admin.token })).statusCode).toBe(200);
    expectProblem(await t.request({ method: 'GET', url: String(link?.href), token: scene.alice.token }), 403, 'forbidden');
    // The OpenAPI document describes it as a member of every order's `_links`.
    const doc = (await t.request({ method: 'GET', url: '/api/openapi.json' })).json<{ components: { schemas: Record<string, { properties: Record<string, { description?: string }> }> } }>();
    expect(doc.components.schemas.OrderLinks?.properties.notes?.description).toContain('notes:manage');
  });

  it('a customer reads no notes, not even on their own order (403), and writes none', async () => {
    const owner = scene.alice;
    const own = await draftOrder(t, scene, { owner });
    expectProblem(await t.request({ method: 'GET', url: notesOf(own.id), token: owner.token }), 403, 'forbidden');
    expectProblem(await write(own.id, { body: 'mine' }, owner.token), 403, 'forbidden');
    expect(await t.db.select().from(orderNotes).where(eq(orderNotes.orderId, own.id))).toEqual([]);
  });

  it('a service client without notes:manage is refused with insufficient-scope', async () => {
    const reader = await t.serviceToken(['orders:read']);
    expect(expectProblem(await t.request({ method: 'GET', url: notesOf(order.id), token: reader }), 403, 'insufficient-scope').scope).toBe('notes:manage');
  });

  it('a note on a missing order is 404; an empty or unknown member is 422/400 and writes nothing', async () => {
    expectProblem(await write(2_000_000_000, { body: 'x' }), 404, 'not-found');
    expectProblem(await t.request({ method: 'GET', url: notesOf(2_000_000_000), token: t.admin.token }), 404, 'not-found');
    const fresh = await draftOrder(t, scene);
    expectProblem(await write(fresh.id, { body: '' }), 422, 'validation-error');
    expectProblem(await write(fresh.id, { body: 'x', author_id: 1 }), 422, 'validation-error');
    expect(await t.db.select().from(orderNotes).where(eq(orderNotes.orderId, fresh.id))).toEqual([]);
  });

  it("writes an order_note.created event outside the order's timeline (its customer reads the timeline)", async () => {
    const fresh = await draftOrder(t, scene);
    const note = (await write(fresh.id, { body: 'checked the address' })).json<OrderNote>();
    const written = await t.db.select().from(events).where(eq(events.type, 'order_note.created'));
    const mine = written.filter((row) => row.data.object.id === note.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]?.orderId).toBeNull();
  });

  it('deleting the order deletes its notes', async () => {
    const fresh = await draftOrder(t, scene);
    await write(fresh.id, { body: 'soon gone' });
    const deleted = await t.request({ method: 'DELETE', url: `${ORDERS}/${fresh.id}`, token: t.admin.token });
    expect(deleted.statusCode).toBe(204);
    expect(await t.db.select().from(orderNotes).where(eq(orderNotes.orderId, fresh.id))).toEqual([]);
  });
});
