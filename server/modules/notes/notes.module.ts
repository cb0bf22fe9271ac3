/** The order notes module (docs/api.md#order-notes): what it brings (docs/architecture.md#adding-a-module). */
import { defineModule } from '../module.ts';
import { notesRouter } from './notes.router.ts';
import { orderNotes } from './notes.table.ts';

export const notesModule = defineModule({ name: 'notes', router: notesRouter, tables: [orderNotes] });
