import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { inject } from 'vitest';
import { openDatabase, type Database, type OpenDatabaseOptions } from '../../server/db/client.ts';
import { dropDatabase, withDatabase } from './postgres-url.ts';

export const testDbKind: 'pglite' | 'postgres' = process.env.TEST_DB === 'postgres' ? 'postgres' : 'pglite';
export const onPostgres = testDbKind === 'postgres';

/**
 * A fresh, migrated database for one test file: in-memory PGlite, or on PostgreSQL a copy of
 * the migrated template made by the global setup. `close()` drops the copy. `onQuery` sees every
 * statement's text (to count them).
 */
export async function createTestDatabase(options: Pick<OpenDatabaseOptions, 'onQuery'> = {}): Promise<Database> {
  if (!onPostgres) return openDatabase({ url: 'memory://', dataDir: '', ...options });
  const copy = await copyTemplateDatabase();
  const database = await openDatabase({ url: copy.url, dataDir: '', poolSize: 20, ...options });
  return {
    ...database,
    close: async () => {
      await database.close();
      await copy.drop();
    },
  };
}

/** PostgreSQL only: a database of its own, copied from the migrated template; `drop()` removes it. */
export async function copyTemplateDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set');
  const template = inject('postgresTemplate');
  const name = `${template}_${randomBytes(6).toString('hex')}`;
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name} template ${template}`);
  await admin.end();
  return { url: withDatabase(url, name), drop: () => dropDatabase(url, name) };
}
