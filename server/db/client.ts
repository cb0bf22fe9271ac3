import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import * as schema from './schema.ts';

export type Schema = typeof schema;
/** Either driver's database; a transaction handle is assignable to it too. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** Answers true when the database responds to a trivial query in time. */
  ping(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}

export const migrationsFolder = resolve(dirname(fileURLToPath(import.meta.url)), '../../drizzle');

export interface OpenDatabaseOptions {
  /** `postgres://...`, `memory://`, or undefined for PGlite under `dataDir`. */
  url: string | undefined;
  dataDir: string;
  poolSize?: number;
  /** An already created PGlite instance (tests clone a migrated one). */
  pglite?: PGlite;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const { url } = options;
  if (url && /^postgres(ql)?:\/\//.test(url)) {
    const client = postgres(url, {
      max: options.poolSize ?? 10,
      onnotice: () => {},
      connection: { application_name: 'order-service' },
    });
    const db = drizzlePostgres(client, { schema }) as unknown as Db;
    await migratePostgres(drizzlePostgres(client), { migrationsFolder });
    return {
      db,
      kind: 'postgres',
      ping: (timeoutMs) => pingDb(db, timeoutMs),
      close: () => client.end({ timeout: 5 }),
    };
  }
  let pglite = options.pglite;
  if (!pglite) {
    if (url === 'memory://') {
      pglite = new PGlite();
    } else {
      mkdirSync(options.dataDir, { recursive: true });
      pglite = new PGlite(resolve(options.dataDir, 'pgdata'));
    }
  }
  const client = pglite;
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  await migratePglite(drizzlePglite(client), { migrationsFolder });
  return {
    db,
    kind: 'pglite',
    ping: (timeoutMs) => pingDb(db, timeoutMs),
    close: async () => {
      if (!client.closed) await client.close();
    },
  };
}

async function pingDb(db: Db, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolvePing) => {
    timer = setTimeout(() => resolvePing(false), timeoutMs);
  });
  try {
    return await Promise.race([db.execute(sql`select 1`).then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
