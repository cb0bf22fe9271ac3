/**
 * Staff notes on orders (docs/api.md#order-notes): admins and service clients annotate an order
 * ("customer called", "address checked"); a note is written once and never changed, deleted with
 * its order, and never shown to the order's customer. Writing one takes the order's lock, so a
 * note never lands on an order being deleted.
 */
import { and, eq } from 'drizzle-orm';
import type { Caller } from '../../auth/tokens.ts';
import type { Db } from '../../db/client.ts';
import { transaction, type UnitOfWork } from '../../db/unit-of-work.ts';
import { orders } from '../orders/orders.table.ts';
import { DomainError } from '../../errors/problems.ts';
import type { Page } from '../common.schemas.ts';
import { lockOrder } from '../orders/orders.service.ts';
import { listPage, newestFirst, type CursorCodec } from '../paging.ts';
import { noteEvents } from './notes.events.ts';
import type { NoteInput, NoteListQuery, NoteParams, OrderNote } from './notes.schemas.ts';
import { orderNotes } from './notes.table.ts';

interface Access {
  db: Db;
  caller: Caller;
}

type NoteRow = typeof orderNotes.$inferSelect;

const toNote = (row: NoteRow): OrderNote => ({
  id: row.id,
  order_id: row.orderId,
  author_id: row.authorId,
  body: row.body,
  created_at: row.createdAt.toISOString(),
});

export async function addNote({ db, work, caller, input }: Access & { work?: UnitOfWork; input: NoteInput }): Promise<OrderNote> {
  return transaction(work ?? db, async (tx) => {
    await lockOrder(tx, { id: input.id, caller });
    const authorId = caller.role === 'service' ? null : caller.userId;
    const [row] = await tx.insert(orderNotes).values({ orderId: input.id, authorId, body: input.body }).returning();
    if (!row) throw new Error('note insert returned no row');
    const note = toNote(row);
    await noteEvents.record(tx, { type: 'order_note.created', object: note });
    return note;
  });
}

export async function getNote({ db, params }: Access & { params: NoteParams }): Promise<OrderNote> {
  const [row] = await db
    .select()
    .from(orderNotes)
    .where(and(eq(orderNotes.orderId, params.id), eq(orderNotes.id, params.noteId)));
  if (!row) throw new DomainError('not-found', `Order ${params.id} has no note ${params.noteId}.`);
  return toNote(row);
}

/** Newest first, like the other lists. */
const noteOrder = newestFirst<{ createdAt: Date; id: number }>(orderNotes.createdAt, orderNotes.id, 'integer', (row) => row.id);

export async function listNotes({ db, query, cursors }: Access & { query: NoteListQuery; cursors: CursorCodec }): Promise<Page<OrderNote>> {
  const [order] = await db.select({ id: orders.id }).from(orders).where(eq(orders.id, query.id));
  if (!order) throw new DomainError('not-found', `Order ${query.id} does not exist.`);
  const binding = JSON.stringify(['order_notes', query.id]);
  return listPage({ cursors, binding, terms: noteOrder, query }, (page) => page.rowsOf(db.select().from(orderNotes).$dynamic(), eq(orderNotes.orderId, query.id)), toNote);
}
