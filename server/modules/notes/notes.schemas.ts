import { z } from 'zod';
import { Id, listOf, PageQuery, pageExample, requestExample, responseExample, text, Timestamp } from '../common.schemas.ts';

export const MAX_NOTE_LENGTH = 2000;

export const OrderNote = z
  .object({
    id: Id,
    order_id: Id,
    author_id: Id.nullable().meta({ description: 'The admin who wrote it; null for a service client, or once that user is deleted.' }),
    body: z.string().min(1).max(MAX_NOTE_LENGTH),
    created_at: Timestamp,
  })
  .meta({ id: 'OrderNote', description: "A staff note on an order: never shown to the order's customer, never changed once written." });
export type OrderNote = z.infer<typeof OrderNote>;

export const NoteInput = z.strictObject({
  id: Id.meta({ description: 'The order.' }),
  body: text(1, MAX_NOTE_LENGTH).meta({ description: `The note, 1 to ${MAX_NOTE_LENGTH} characters.`, example: 'Customer called: leave the parcel with the neighbour.' }),
});
export type NoteInput = z.infer<typeof NoteInput>;

export const NoteParams = z.strictObject({
  id: Id.meta({ description: 'The order.' }),
  noteId: Id.meta({ description: 'The note.' }),
});
export type NoteParams = z.infer<typeof NoteParams>;

export const NoteListQuery = z.strictObject({
  id: Id.meta({ description: 'The order.' }),
  ...PageQuery,
});
export type NoteListQuery = z.infer<typeof NoteListQuery>;

export const OrderNoteList = listOf(OrderNote).meta({ id: 'OrderNoteList' });

// Examples for the OpenAPI document (validated against the schemas by test/api/openapi.test.ts).
const note: OrderNote = {
  id: 4,
  order_id: 17,
  author_id: 1,
  body: 'Customer called: leave the parcel with the neighbour.',
  created_at: '2026-02-01T10:15:00.000Z',
};
requestExample(NoteInput, { id: 17, body: 'Customer called: leave the parcel with the neighbour.' });
responseExample(OrderNote, note);
responseExample(OrderNoteList, pageExample([note]));
