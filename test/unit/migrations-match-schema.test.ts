/**
 * CI fails on a stale migration (issue 37 item 3, docs/architecture.md#checks-that-keep-the-docs-true):
 * drizzle-kit's generate, run against a copy of drizzle/ with the schema's globs, writes nothing
 * (test/helpers/migration-drift.ts). A change to a table without its `npx drizzle-kit generate`
 * fails here, naming the files a generate would write.
 */
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { projectRoot } from '../../server/lib/project-root.ts';
import { migrationDrift } from '../helpers/migration-drift.ts';

it('the migrations in drizzle/ are what the schema generates', async () => {
  const { written, output } = await migrationDrift(projectRoot);
  expect(written, `run \`npx drizzle-kit generate --name <what changed>\`; drizzle-kit said:\n${output}`).toEqual([]);
});

const planted = mkdtempSync(join(tmpdir(), 'planted-schema-'));
afterAll(() => rmSync(planted, { recursive: true, force: true }));

it('a schema change no migration makes (a planted table file added to the globs) is drift, and names the migration a generate would write', async () => {
  // Beside the project's node_modules, so the planted file imports drizzle as the schema does.
  symlinkSync(join(projectRoot, 'node_modules'), join(planted, 'node_modules'), 'dir');
  writeFileSync(
    join(planted, 'planted.table.ts'),
    [
      "import { integer, pgTable, text } from 'drizzle-orm/pg-core';",
      "export const planted = pgTable('planted_drift', { id: integer('id').primaryKey(), extra: text('extra') });",
      '',
    ].join('\n'),
  );
  const { written, sql } = await migrationDrift(projectRoot, { extraSchema: [join(planted, 'planted.table.ts')] });
  expect(written.some((file) => /^\d{4}_.*\.sql$/.test(file))).toBe(true);
  expect(written).toContain('meta/_journal.json');
  expect(sql).toMatch(/CREATE TABLE "planted_drift"[^;]*"extra" text/);
});
