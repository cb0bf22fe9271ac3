import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  // A module may keep its tables in its own folder (docs/architecture.md#adding-a-module).
  schema: ['./server/db/schema.ts', './server/modules/*/*.table.ts'],
  out: './drizzle',
});
