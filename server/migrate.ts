/**
 * `npm run migrate`: applies the migrations in `drizzle/` to the configured database
 * (DATABASE_URL, else PGlite under DATA_DIR) and exits, for deploys that migrate once before
 * starting instances with `MIGRATE_ON_START=false`.
 */
import { ConfigError, loadDatabaseConfig } from './config.ts';
import { DataDirectoryLockedError, openDatabase } from './db/client.ts';

try {
  const config = loadDatabaseConfig();
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: 1, timeouts: { connectTimeoutMs: config.connectTimeoutMs } });
  await database.close();
  console.log(`Migrations applied (${database.kind === 'pglite' ? `PGlite${config.databaseUrl === 'memory://' ? ' in memory' : ` in ${config.dataDir}`}` : 'PostgreSQL'}).`);
} catch (error) {
  if (error instanceof ConfigError || error instanceof DataDirectoryLockedError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}
