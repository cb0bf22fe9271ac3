/**
 * Migrations as a deploy step (docs/api.md#migrations): `npm run migrate` applies them alone, and
 * `MIGRATE_ON_START=false` (openDatabase's `migrate: false`) applies nothing and refuses a
 * database that lacks one of them, so an instance never serves an older schema than its code.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import { MigrationsPendingError, migrationsFolder, openDatabase } from '../../server/db/client.ts';
import { onPostgres } from '../helpers/db.ts';
import { dropDatabase, withDatabase } from '../helpers/postgres-url.ts';

const root = resolve(import.meta.dirname, '../..');
const migrationCount = readdirSync(migrationsFolder).filter((name) => name.endsWith('.sql')).length;
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A database with nothing in it: an empty PostgreSQL database, or a PGlite data directory not yet created. */
async function emptyDatabase(): Promise<{ url: string | undefined; dataDir: string }> {
  if (onPostgres) {
    const server = process.env.TEST_DATABASE_URL;
    if (!server) throw new Error('TEST_DATABASE_URL is not set');
    const name = `order_service_migrate_${process.pid}_${Date.now()}`;
    const admin = postgres(server, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    await admin.end();
    cleanups.push(() => dropDatabase(server, name));
    return { url: withDatabase(server, name), dataDir: '' };
  }
  const parent = mkdtempSync(join(tmpdir(), 'order-service-migrate-'));
  cleanups.push(() => rmSync(parent, { recursive: true, force: true }));
  return { url: undefined, dataDir: join(parent, 'data') };
}

describe('migrations as a step of their own', () => {
  it('MIGRATE_ON_START=false refuses a database that lacks migrations, naming how many and the command', async () => {
    // PGlite in memory: an empty database without initialising a data directory on disk.
    const { url, dataDir } = onPostgres ? await emptyDatabase() : { url: 'memory://', dataDir: '' };
    const opening = openDatabase({ url, dataDir, migrate: false });
    await expect(opening).rejects.toBeInstanceOf(MigrationsPendingError);
    await expect(opening).rejects.toMatchObject({ pending: migrationCount, message: expect.stringContaining('npm run migrate') });
  });

  it('npm run migrate applies them; then a start that must not migrate opens the database', { timeout: 120_000 }, async () => {
    const { url, dataDir } = await emptyDatabase();
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: url, DATA_DIR: dataDir };
    if (url === undefined) delete env.DATABASE_URL;
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'server/migrate.ts'], { cwd: root, env, encoding: 'utf8', timeout: 110_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('Migrations applied');

    const database = await openDatabase({ url, dataDir, migrate: false });
    try {
      expect(await database.ping()).toBe(true);
    } finally {
      await database.close();
    }
  });

  it('MIGRATE_ON_START defaults to true and takes only true or false', () => {
    expect(loadConfig({ DATABASE_URL: 'memory://' }).migrateOnStart).toBe(true);
    expect(loadConfig({ DATABASE_URL: 'memory://', MIGRATE_ON_START: 'false' }).migrateOnStart).toBe(false);
    expect(() => loadConfig({ DATABASE_URL: 'memory://', MIGRATE_ON_START: 'no' })).toThrow(/MIGRATE_ON_START/);
  });
});
