/**
 * Our one reach into drizzle-orm's internals (checked on drizzle-orm 0.45); everything else goes
 * through drizzle's public API. drizzle's `.prepare(name)` binds a prepared query to the handle it
 * was built on, and a transaction is a handle of its own, made per transaction: with the public
 * API alone, a statement used in a transaction is built anew (selection, SQL text, entity checks)
 * in every transaction. Measured on 26 Nov on the bench's write cases, that building was 18% of the
 * service's busy time (order and payment POSTs, whose statements all run in a transaction).
 *
 * So a prepared query is remade on another handle from what the first one was built of: its SQL
 * text and parameters, its selected fields and its result mode, passed to that handle's session
 * (`session.prepareQuery`, the one call drizzle's own `.prepare()` ends in). No SQL is built, and
 * rows are mapped, and errors wrapped, by drizzle as for any prepared query.
 *
 * test/db/drizzle-internals.test.ts remakes a select and an insert on a transaction's handle, on
 * both drivers, and fails, naming this file, if an upgrade changes what it
 * relies on.
 */
import type { PgSession } from 'drizzle-orm/pg-core';
import type { Db } from './client.ts';

const SEAM = 'server/db/drizzle-internals.ts';

/** What a prepared query (`.prepare(name)`) answers, as far as the project uses it. */
export interface PreparedQuery {
  execute(values?: Record<string, unknown>): Promise<unknown>;
}

/** The parts of a prepared query it is remade from (both drivers keep the same). */
interface PreparedParts {
  getQuery(): { sql: string; params: unknown[] };
  isResponseInArrayMode(): boolean;
  fields?: unknown;
  customResultMapper?: unknown;
  queryMetadata?: unknown;
  joinsNotNullableMap?: unknown;
}

type PrepareArgs = Parameters<PgSession['prepareQuery']>;

/** A prepared query's recipe, kept without the handle it was first built on. */
export interface QueryRecipe {
  readonly name: string;
  readonly query: PrepareArgs[0];
  readonly fields: PrepareArgs[1];
  readonly arrayMode: boolean;
  readonly customResultMapper: PrepareArgs[4];
  readonly queryMetadata: PrepareArgs[5];
  readonly joinsNotNullableMap: unknown;
}

function changed(what: string): Error {
  return new Error(`drizzle-orm's internals changed: ${what}. The upgrade breaks ${SEAM}; adapt it there (and only there).`);
}

/** The recipe of a query drizzle prepared (`build(db).prepare(name)`). */
export function recipeOf(prepared: PreparedQuery, name: string): QueryRecipe {
  const parts = prepared as unknown as PreparedParts;
  if (typeof parts.getQuery !== 'function' || typeof parts.isResponseInArrayMode !== 'function') {
    throw changed('a prepared query has no getQuery() or isResponseInArrayMode()');
  }
  const query = parts.getQuery();
  if (typeof query?.sql !== 'string' || !Array.isArray(query.params)) throw changed('getQuery() answers no { sql, params }');
  return {
    name,
    query,
    fields: parts.fields as PrepareArgs[1],
    arrayMode: parts.isResponseInArrayMode(),
    customResultMapper: parts.customResultMapper as PrepareArgs[4],
    queryMetadata: parts.queryMetadata as PrepareArgs[5],
    joinsNotNullableMap: parts.joinsNotNullableMap,
  };
}

/** The session a handle (the pool's database or a transaction) runs its queries on. */
export function sessionOf(db: Db): PgSession {
  const session = (db as unknown as { _?: { session?: PgSession } })._?.session;
  if (typeof session?.prepareQuery !== 'function') throw changed('a database handle has no `_.session.prepareQuery`');
  return session;
}

/** The recipe prepared on `session`, as `.prepare(name)` on a query built on its handle would be. */
export function prepareOn(session: PgSession, recipe: QueryRecipe): PreparedQuery {
  const made = session.prepareQuery(recipe.query, recipe.fields, recipe.name, recipe.arrayMode, recipe.customResultMapper, recipe.queryMetadata);
  // Read by drizzle's row mapper for nested selections over a left join; set after construction.
  (made as unknown as PreparedParts).joinsNotNullableMap = recipe.joinsNotNullableMap;
  return made as unknown as PreparedQuery;
}
