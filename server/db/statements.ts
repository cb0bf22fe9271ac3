/**
 * Statements built once: a hot query's SQL text and result mapping are made by drizzle's
 * `.prepare(name)` the first time it runs, and every later run only binds its values
 * (`sql.placeholder(...)`), on any database or transaction handle. Building a query with
 * drizzle's builder on every request (entity checks, selection building, SQL text assembly) was
 * about a tenth of the service's CPU time on a product read (issue 12 profiles).
 *
 * A transaction is a handle of its own, made per transaction; the statement is remade on it from
 * the first build, without building SQL (drizzle-internals.ts, the one reach into drizzle's
 * internals, says why and how). A named prepared query is also prepared on the PostgreSQL
 * server, per connection and by its text, so the server parses and plans it once per connection;
 * PGlite runs the same text.
 */
import type { Db } from './client.ts';
import { prepareOn, recipeOf, sessionOf, type PreparedQuery, type QueryRecipe } from './drizzle-internals.ts';

/** A query builder that can be prepared: a select, insert, update or delete. */
interface Preparable {
  prepare(name: string): PreparedQuery;
}

type Result<B extends Preparable> = Awaited<ReturnType<ReturnType<B['prepare']>['execute']>>;

/**
 * `name`: unique per query shape (PostgreSQL sees the text, not the name). `build` makes the
 * query on the handle given, with `sql.placeholder(key)` for every value; it runs once.
 */
export function statement<B extends Preparable>(name: string, build: (db: Db) => B): (db: Db, values?: Record<string, unknown>) => Promise<Result<B>> {
  let recipe: QueryRecipe | undefined;
  const byHandle = new WeakMap<Db, PreparedQuery>();
  return (db, values = {}) => {
    let prepared = byHandle.get(db);
    if (prepared === undefined) {
      if (recipe === undefined) {
        prepared = build(db).prepare(name);
        recipe = recipeOf(prepared, name);
      } else {
        prepared = prepareOn(sessionOf(db), recipe);
      }
      byHandle.set(db, prepared);
    }
    return prepared.execute(values) as Promise<Result<B>>;
  };
}

/**
 * Statements of several shapes (a list's filters, an `in` list's length), each built once, on
 * first use: `key` names the shape (bounded: a shape is never made of a request's values).
 */
export function statements<K extends string | number, B extends Preparable>(
  name: string,
  build: (db: Db, key: K) => B,
): (key: K, db: Db, values?: Record<string, unknown>) => Promise<Result<B>> {
  return shapedStatements(name, String, build);
}

/**
 * Statements of several shapes described by an object (which filters a list has, its sort, where
 * its page starts): `keyOf` names a shape for the statement's name and its cache, and `build` gets
 * the shape itself, so no shape is spelled into a text and parsed back.
 */
export function shapedStatements<S, B extends Preparable>(
  name: string,
  keyOf: (shape: S) => string,
  build: (db: Db, shape: S) => B,
): (shape: S, db: Db, values?: Record<string, unknown>) => Promise<Result<B>> {
  const byKey = new Map<string, (db: Db, values?: Record<string, unknown>) => Promise<Result<B>>>();
  return (shape, db, values) => {
    const key = keyOf(shape);
    let run = byKey.get(key);
    if (run === undefined) {
      run = statement(`${name}_${key.replace(/\W/g, '_')}`, (handle) => build(handle, shape));
      byKey.set(key, run);
    }
    return run(db, values);
  };
}
