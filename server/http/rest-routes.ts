/**
 * The route table: one REST operation per procedure that declares `meta.openapi`, read once at
 * start. The facade (rest-adapter.ts) serves it, the OpenAPI document (openapi.ts) completes its
 * operations from it, and the client build (scripts/client-build.ts) documents procedures with it.
 */
import type { AnyRouter } from '@trpc/server';
import { forEachOpenApiProcedure, getInputOutputParsers, type OpenApiProcedureRecord } from 'trpc-to-openapi';
import { z } from 'zod';
import type { Policy } from '../auth/policy.ts';
import type { Meta, RestMeta } from '../trpc/meta.ts';
import { procedureRecord } from '../trpc/trpc-internals.ts';

/**
 * How a path or query parameter's text becomes input: integers as numbers, `true`/`false` as
 * booleans, a list (an array schema) as its values, whether the parameter is repeated or
 * comma-separated; a record (`metadata`) is a deepObject, `name[key]=value` for each member
 * (query-parameters.ts); the rest as given.
 */
export type ParamKind = 'int' | 'boolean' | 'string' | 'list' | 'deepObject';

export interface RestRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** OpenAPI form: `/products/{id}`. */
  path: string;
  /** The procedure's dotted path on the router, e.g. `products.get`. */
  procedurePath: string;
  summary: string | undefined;
  /** What the operation does, for the OpenAPI document (`meta.openapi.description`). */
  description: string | undefined;
  tags: string[];
  /** Who may call it (`meta.policy`); undefined only for a procedure that forgot it (refused at call time). */
  policy: Policy | undefined;
  /** The procedure's input (path, query and body fields together) and output schemas. */
  input: z.ZodObject;
  output: z.ZodType | undefined;
  rest: RestMeta;
  pathParams: Map<string, ParamKind>;
  queryParams: Map<string, ParamKind>;
  /** The values a list parameter takes, when its items are a closed set (an enum). */
  listChoices: Map<string, readonly string[]>;
  /** True when the input has fields that come from a JSON body. */
  hasBody: boolean;
  contentTypes: string[];
  /** Needs a token (trpc-to-openapi's `protect`, default true). */
  protect: boolean;
}

/** Wrappers that leave a parameter's base type as it is. */
type Wrapper = z.ZodOptional | z.ZodDefault | z.ZodNullable | z.ZodPrefault | z.ZodReadonly;

const isWrapper = (schema: z.core.$ZodType): schema is Wrapper =>
  schema instanceof z.ZodOptional ||
  schema instanceof z.ZodDefault ||
  schema instanceof z.ZodNullable ||
  schema instanceof z.ZodPrefault ||
  schema instanceof z.ZodReadonly;

const baseOf = (schema: z.core.$ZodType): z.core.$ZodType => {
  let base = schema;
  while (isWrapper(base)) base = base.unwrap();
  return base;
};

/** The base type of a parameter's schema, through Zod's public classes (`z.int()` is a ZodNumber). */
function paramKind(schema: z.core.$ZodType): ParamKind {
  const base = baseOf(schema);
  if (base instanceof z.ZodNumber) return 'int';
  if (base instanceof z.ZodBoolean) return 'boolean';
  if (base instanceof z.ZodRecord) return 'deepObject';
  return base instanceof z.ZodArray ? 'list' : 'string';
}

/** A list parameter's closed set of values (its items a `z.enum`), for the facade's format check. */
function listChoices(schema: z.core.$ZodType): readonly string[] | undefined {
  const base = baseOf(schema);
  if (!(base instanceof z.ZodArray)) return undefined;
  const element = baseOf(base.element);
  return element instanceof z.ZodEnum ? element.options.map(String) : undefined;
}

/** A member no input declares, to see whether an input schema refuses what it does not declare. */
const PROBE = '\u0000undeclared';

/**
 * Whether `input` refuses a member it does not declare (a `z.strictObject`), read by parsing one
 * through Zod's public API. REST refuses a query parameter an operation does not take, and /trpc
 * must refuse the same input member (docs/api.md#unknown-parameters): the schema decides there.
 */
function refusesUndeclared(input: z.ZodObject): boolean {
  const result = input.safeParse({ [PROBE]: true });
  return !result.success && result.error.issues.some((issue) => issue.code === 'unrecognized_keys' && issue.path.length === 0);
}

export function restRoutes(router: AnyRouter): RestRoute[] {
  const routes: RestRoute[] = [];
  // trpc-to-openapi's generator walks the same record with these same exported helpers, so the
  // facade serves exactly the operations the document describes.
  const procedures = procedureRecord(router) as OpenApiProcedureRecord;
  forEachOpenApiProcedure<Meta>(procedures, ({ path: procedurePath, procedure, meta }) => {
    const { openapi } = meta;
    const names = [...openapi.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
    const { inputParser, outputParser, hasInputsDefined } = getInputOutputParsers(procedure);
    // A list's input may be left out (`.prefault({})`); REST always passes its query as an object.
    let input: z.core.$ZodType = inputParser;
    while (isWrapper(input)) input = input.unwrap();
    if (!(input instanceof z.ZodObject)) throw new Error(`${procedurePath}: a REST operation's input must be an object`);
    // A procedure without `.input()` reads no input at all (tRPC never passes it on); on REST it takes no parameter.
    if (hasInputsDefined && !refusesUndeclared(input)) {
      throw new Error(
        `${procedurePath}: the input must be a z.strictObject, so /trpc refuses an unknown member as REST refuses an unknown parameter (docs/api.md#unknown-parameters).`,
      );
    }
    const shape = input.shape;
    const pathParams = new Map<string, ParamKind>();
    const queryParams = new Map<string, ParamKind>();
    const choices = new Map<string, readonly string[]>();
    for (const [key, schema] of Object.entries(shape)) {
      if (names.includes(key)) pathParams.set(key, paramKind(schema));
      else queryParams.set(key, paramKind(schema));
      const values = listChoices(schema);
      if (values !== undefined) choices.set(key, values);
    }
    const bodyMethod = openapi.method === 'POST' || openapi.method === 'PUT' || openapi.method === 'PATCH';
    if (openapi.method !== 'GET' && meta.rest?.cache !== undefined) {
      // A setting the facade would ignore (writes are never cached) must not read as if it counted.
      throw new Error(`${procedurePath}: meta.rest.cache applies to reads only; ${openapi.method} answers no-store.`);
    }
    routes.push({
      method: openapi.method,
      path: openapi.path,
      procedurePath,
      summary: openapi.summary,
      description: openapi.description,
      tags: openapi.tags ?? [],
      policy: meta.policy,
      input,
      output: outputParser,
      rest: meta.rest ?? {},
      pathParams,
      queryParams: bodyMethod ? new Map() : queryParams,
      listChoices: bodyMethod ? new Map() : choices,
      hasBody: bodyMethod && (queryParams.size > 0 || meta.rest?.patch !== undefined),
      contentTypes: openapi.contentTypes ?? ['application/json'],
      protect: openapi.protect !== false,
    });
  });
  return routes;
}
