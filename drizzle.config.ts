import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  // A module keeps its tables in its own folder, `<name>.table.ts`; db/schema.ts holds the tables
  // below the modules (docs/architecture.md#adding-a-module).
  schema: ['./server/db/schema.ts', './server/modules/*/*.table.ts'],
  out: './drizzle',
});
