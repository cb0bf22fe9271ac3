import { randomBytes } from 'node:crypto';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { migrationsFolder } from '../../server/db/client.ts';
import { dropDatabase, withDatabase } from './postgres-url.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Migrated template database of this run; test files copy it. */
    postgresTemplate: string;
  }
}

/**
 * Migrates a template database once per run; each test file then copies it (fast, isolated).
 * Names carry a run tag, so two runs on one cluster never touch each other's databases.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set');
  const run = randomBytes(4).toString('hex');
  const template = `order_service_tpl_${run}`;
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${template}`);
  const client = postgres(withDatabase(url, template), { max: 1, onnotice: () => {} });
  await migrate(drizzle(client), { migrationsFolder });
  await client.end();
  await admin.end();
  project.provide('postgresTemplate', template);
  return async () => {
    const cleanup = postgres(url, { max: 1, onnotice: () => {} });
    const leftovers = await cleanup<{ datname: string }[]>`select datname from pg_database where datname like ${`${template}%`}`;
    await cleanup.end();
    for (const { datname } of leftovers) await dropDatabase(url, datname);
  };
}
