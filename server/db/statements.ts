/**
 * Statements built once: a hot query's SQL text and result mapping are made by drizzle the first
 * time it runs, and every later run only binds its values (`sql.placeholder(...)`), on any
 * database or transaction handle. Building a query with drizzle's builder on every request
 * (entity checks, selection building, SQL text assembly) was about a tenth of the service's CPU
 * time on a product read (issue 12 profiles).
 *
 * drizzle's own `.prepare()` binds a query to the handle it was built on; a transaction is a
 * handle of its own, made per transaction. So the text and fields of the first build are kept,
 * and each handle's session makes its own prepared query from them (a plain object: no SQL is
 * built), kept for as long as that handle lives. On PostgreSQL the statement is also prepared on
 * the server, per connection (see `preparing` in client.ts); PGlite runs the same text. Rows are
 * mapped by a mapper made once per statement (`rowMapper`), not per row by drizzle's.
 */
import { Column, is, SQL, Subquery } from 'drizzle-orm';
import type { PgSession } from 'drizzle-orm/pg-core';
import type { Db } from './client.ts';

/** What `.prepare(name)` answers, as far as this module uses it. */
interface Prepared {
  execute(values?: Record<string, unknown>): Promise<unknown>;
}

/** A query builder that can be prepared: a select, insert, update or delete. */
interface Preparable {
  prepare(name: string): Prepared;
}

/** drizzle's internals a prepared query is remade from (the same for both drivers). */
interface PreparedInternals {
  getQuery(): { sql: string; params: unknown[] };
  isResponseInArrayMode(): boolean;
  fields?: unknown;
  customResultMapper?: unknown;
  queryMetadata?: unknown;
  joinsNotNullableMap?: unknown;
}

type PrepareArgs = Parameters<PgSession['prepareQuery']>;

/** What a prepared query is made of, without the handle it was first built on. */
interface Template {
  query: PrepareArgs[0];
  fields: PrepareArgs[1];
  arrayMode: boolean;
  customResultMapper: PrepareArgs[4];
  queryMetadata: PrepareArgs[5];
  joinsNotNullableMap: unknown;
}

/** A selected field as drizzle orders them: where it goes in the row object, and what it is. */
interface SelectedField {
  path: string[];
  field: unknown;
}

interface Decoder {
  mapFromDriverValue(value: unknown): unknown;
}

/** What decodes a field's driver value: drizzle's own choice in `mapResultRow` (drizzle-orm/utils). */
function decoderOf(field: unknown): Decoder {
  // `decoder` is internal to drizzle's SQL (the type says so; the value is there).
  const decoderOfSql = (query: unknown) => (query as { decoder: Decoder }).decoder;
  if (is(field, Column)) return field;
  if (is(field, SQL)) return decoderOfSql(field);
  if (is(field, Subquery)) return decoderOfSql(field._.sql);
  return decoderOfSql((field as SQL.Aliased).sql);
}

/**
 * A statement's rows, mapped as drizzle's `mapResultRow` maps them (each value
 * decoded by its column, null kept, objects nested along each field's path), with each field's
 * decoder and path found once, when the statement is made, instead of per row and field
 * (`is()` checks, a path iterator, a reduce): drizzle's row mapping was most of its share of a
 * list's CPU time. `undefined` for a selection that nests the columns of a table a join may leave
 * missing (a left join's): drizzle's mapper nulls that object (`joinsNotNullableMap`), so it keeps
 * that case.
 */
export function rowMapper(fields: readonly SelectedField[], joinsNotNullableMap?: Record<string, boolean>): ((rows: unknown[][]) => Record<string, unknown>[]) | undefined {
  const flat = fields.every(({ path }) => path.length === 1);
  // drizzle reads the join map only for two-level paths, and nulls only a table it marks nullable.
  const nullable = joinsNotNullableMap !== undefined && Object.values(joinsNotNullableMap).some((notNull) => !notNull);
  if (!flat && nullable) return undefined;
  const decoders = fields.map(({ field }) => decoderOf(field));
  const keys = fields.map(({ path }) => path[0] as string);
  const mapRow = flat
    ? (row: unknown[]) => {
        const result: Record<string, unknown> = {};
        for (let i = 0; i < keys.length; i++) {
          const value = row[i];
          result[keys[i] as string] = value === null ? null : (decoders[i] as Decoder).mapFromDriverValue(value);
        }
        return result;
      }
    : (row: unknown[]) => {
        const result: Record<string, unknown> = {};
        fields.forEach(({ path }, i) => {
          let node = result;
          for (const chunk of path.slice(0, -1)) node = (node[chunk] ??= {}) as Record<string, unknown>;
          const value = row[i];
          node[path[path.length - 1] as string] = value === null ? null : (decoders[i] as Decoder).mapFromDriverValue(value);
        });
        return result;
      };
  return (rows) => rows.map(mapRow);
}

function templateOf(prepared: Prepared): Template {
  const p = prepared as unknown as PreparedInternals;
  const fields = p.fields as SelectedField[] | undefined;
  const mapper = p.customResultMapper ?? (fields === undefined ? undefined : rowMapper(fields, p.joinsNotNullableMap as Record<string, boolean> | undefined));
  return {
    query: p.getQuery(),
    fields: p.fields as PrepareArgs[1],
    arrayMode: p.isResponseInArrayMode(),
    customResultMapper: mapper as PrepareArgs[4],
    queryMetadata: p.queryMetadata as PrepareArgs[5],
    joinsNotNullableMap: p.joinsNotNullableMap,
  };
}

type Result<B extends Preparable> = Awaited<ReturnType<ReturnType<B['prepare']>['execute']>>;

const sessionOf = (db: Db): PgSession => (db as unknown as { _: { session: PgSession } })._.session;

/**
 * `name`: unique per query shape (PostgreSQL sees the text, not the name). `build` makes the
 * query on the handle given, with `sql.placeholder(key)` for every value; it runs once.
 */
export function statement<B extends Preparable>(name: string, build: (db: Db) => B): (db: Db, values?: Record<string, unknown>) => Promise<Result<B>> {
  let template: Template | undefined;
  const bySession = new WeakMap<PgSession, Prepared>();
  return (db, values = {}) => {
    const session = sessionOf(db);
    let prepared = bySession.get(session);
    if (prepared === undefined) {
      template ??= templateOf(build(db).prepare(name));
      const t = template;
      const made = session.prepareQuery(t.query, t.fields, name, t.arrayMode, t.customResultMapper, t.queryMetadata);
      (made as unknown as PreparedInternals).joinsNotNullableMap = t.joinsNotNullableMap;
      prepared = made as unknown as Prepared;
      bySession.set(session, prepared);
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
  const byKey = new Map<K, (db: Db, values?: Record<string, unknown>) => Promise<Result<B>>>();
  return (key, db, values) => {
    let run = byKey.get(key);
    if (run === undefined) {
      run = statement(`${name}_${String(key).replace(/\W/g, '_')}`, (handle) => build(handle, key));
      byKey.set(key, run);
    }
    return run(db, values);
  };
}
