/**
 * The database handle's type, in a file of its own: the opening (client.ts) and the transaction
 * layer (unit-of-work.ts) both name it, and neither imports the other's job for it.
 */
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type * as schema from './schema.ts';

export type Schema = typeof schema;
/** Either driver's database; a transaction's handle (a `UnitOfWork`) is one too, for reads. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
