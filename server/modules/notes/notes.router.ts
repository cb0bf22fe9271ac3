import './notes.scopes.ts';
import { declareTag } from '../../lib/api-tags.ts';
import { procedureFor, router } from '../../trpc/trpc.ts';
import { orderLinks } from '../orders/orders.links.ts';
import { NoteInput, NoteListQuery, NoteParams, OrderNote, OrderNoteList } from './notes.schemas.ts';
import * as notes from './notes.service.ts';

// Staff only: admins and service clients (a support tool) with notes:manage; a customer never
// reads the notes on their order (docs/api.md#order-notes).
const staff = procedureFor({ roles: ['admin', 'service'], scope: 'notes:manage' });
const tags = [declareTag('notes', 'Staff notes on orders: admins and service clients with `notes:manage` annotate an order ("customer called"); a note is never changed, is deleted with its order, and is never shown to the order\'s customer.')];

// Every order links to its notes. Links are the same for every caller (docs/api.md#order-states):
// following this one takes `notes:manage`, so a customer who does is refused (403).
orderLinks.declare('notes', {
  method: 'GET',
  description: "The order's staff notes: admins and service clients with `notes:manage` (anyone else is refused, 403).",
  href: (_order, self) => `${self}/notes`,
});

export const notesRouter = router({
  create: staff
    .meta({
      openapi: { method: 'POST', path: '/orders/{id}/notes', tags, summary: 'Write a staff note on an order', description: "Adds a note to an order (201 with its `Location`). Notes are never changed, are deleted with their order, and are never shown to the order's customer." },
      rest: { status: 201, location: '/orders/{order_id}/notes/{id}', kind: 'item', problems: ['not-found'] },
    })
    .input(NoteInput)
    .output(OrderNote)
    .mutation(({ ctx, input }) => notes.addNote({ db: ctx.db, work: ctx.work, caller: ctx.caller, input })),

  get: staff
    .meta({
      openapi: { method: 'GET', path: '/orders/{id}/notes/{noteId}', tags, summary: "Read one of an order's staff notes" },
      rest: { kind: 'item', cache: 'private', problems: ['not-found'] },
    })
    .input(NoteParams)
    .output(OrderNote)
    .query(({ ctx, input }) => notes.getNote({ db: ctx.db, caller: ctx.caller, params: input })),

  list: staff
    .meta({
      openapi: { method: 'GET', path: '/orders/{id}/notes', tags, summary: "List an order's staff notes, newest first", description: "An order's notes, newest first, paged; an order without any lists none." },
      rest: { kind: 'list', cache: 'private', problems: ['not-found'] },
    })
    .input(NoteListQuery)
    .output(OrderNoteList)
    .query(({ ctx, input }) => notes.listNotes({ db: ctx.db, caller: ctx.caller, query: input, cursors: ctx.cursors })),
});
