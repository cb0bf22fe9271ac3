import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { migrationsFolder } from '../../server/db/client.ts';
import { TEMPLATE_DATABASE, withDatabase } from './postgres-url.ts';

/** Migrates a template database once; each test file then copies it (fast, isolated). */
export default async function setup(): Promise<() => Promise<void>> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set');
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${TEMPLATE_DATABASE} with (force)`);
  await admin.unsafe(`create database ${TEMPLATE_DATABASE}`);
  const template = postgres(withDatabase(url, TEMPLATE_DATABASE), { max: 1, onnotice: () => {} });
  await migrate(drizzle(template), { migrationsFolder });
  await template.end();
  await admin.end();
  return async () => {
    const cleanup = postgres(url, { max: 1, onnotice: () => {} });
    const leftovers = await cleanup<{ datname: string }[]>`select datname from pg_database where datname ~ '^order_service_t_[0-9a-f]+$'`;
    for (const { datname } of leftovers) await cleanup.unsafe(`drop database if exists ${datname} with (force)`);
    await cleanup.unsafe(`drop database if exists ${TEMPLATE_DATABASE} with (force)`);
    await cleanup.end();
  };
}
