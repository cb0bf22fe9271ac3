/**
 * The test-only jottings module's table (test/api/module-list.test.ts). It lives under test/, so
 * drizzle.config.ts (`server/modules/*\/*.table.ts`) never reads it: no migration makes it; the test
 * creates it (JOTTINGS_TABLE_SQL).
 */
import { sql } from 'drizzle-orm';
import { boolean, pgTable, serial, text } from 'drizzle-orm/pg-core';

export const jottings = pgTable('test_jottings', {
  id: serial('id').primaryKey(),
  body: text('body').notNull(),
  done: boolean('done').notNull().default(false),
});

/** What a migration would say for the table above, run by the test on its own database. */
export const JOTTINGS_TABLE_SQL = sql`create table if not exists test_jottings (id serial primary key, body text not null, done boolean not null default false)`;
