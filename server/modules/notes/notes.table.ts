/**
 * The notes table, beside its module (drizzle.config.ts reads every `<name>.table.ts`), so a
 * module's storage is declared in its own folder too. Deleting an order deletes its notes.
 */
import { index, integer, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';
import { users } from '../../db/schema.ts';
import { orders } from '../orders/orders.table.ts';

export const orderNotes = pgTable(
  'order_notes',
  {
    id: serial('id').primaryKey(),
    orderId: integer('order_id')
      .notNull()
      .references(() => orders.id, { onDelete: 'cascade' }),
    /** The admin who wrote it; null for a service client, or once the user is deleted. */
    authorId: integer('author_id').references(() => users.id, { onDelete: 'set null' }),
    body: text('body').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    // An order's notes, newest first (its list).
    index('order_notes_order_created_idx').on(t.orderId, t.createdAt, t.id),
  ],
);
