/**
 * Columns the resource tables share (server/db/schema.ts and every module's `<name>.table.ts`).
 */
import { jsonb, timestamp } from 'drizzle-orm/pg-core';

/**
 * A resource's own key-value data (docs/api.md#metadata): at most 50 string values, checked by the
 * schemas. jsonb, so the order list's `metadata[key]=value` filter is a containment (`@>`) a GIN
 * index answers.
 */
export const metadata = () => jsonb('metadata').$type<Record<string, string>>().notNull().default({});

export const timestamps = {
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
};
