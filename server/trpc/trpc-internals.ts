/**
 * Our one reach into tRPC's internals (checked on @trpc/server 11.x); everything else in the
 * project goes through this file or tRPC's public API. tRPC v11 has no public way to
 *
 * - list a router's procedures with their kind and meta: trpc-to-openapi's own generator reads
 *   `router._def.procedures` for it, and so do we (the REST route table, metrics labels, the
 *   tests that cover every procedure);
 * - let a middleware answer a result without calling `next()` (an idempotent replay answers the
 *   stored output instead of running the procedure): its result type carries a compile-time brand
 *   that only `next()` produces.
 *
 * test/unit/trpc-internals.test.ts checks each of these against the installed tRPC and fails,
 * naming this file, if an upgrade changes what it relies on. The client build's type printer
 * (scripts/client-router-types.ts) reads the same definition in the router's type, by the names
 * exported here.
 */
import type { AnyTRPCProcedure, AnyTRPCRouter, TRPCProcedureType } from '@trpc/server';

const SEAM = 'server/trpc/trpc-internals.ts';
const KINDS: readonly TRPCProcedureType[] = ['query', 'mutation', 'subscription'];

/** A procedure of a router, by its dotted path (`products.get`). */
export interface ProcedureEntry<TMeta> {
  path: string;
  kind: TRPCProcedureType;
  meta: TMeta | undefined;
  procedure: AnyTRPCProcedure;
}

/** The internal definition a procedure carries (`procedure._def`), as far as we read it. */
interface ProcedureDef {
  type?: unknown;
  meta?: unknown;
}

function changed(what: string): Error {
  return new Error(`tRPC's internals changed: ${what}. The upgrade breaks ${SEAM}; adapt it there (and only there).`);
}

/**
 * The router's procedures keyed by dotted path, as tRPC keeps them (`router._def.procedures`):
 * the record trpc-to-openapi's `forEachOpenApiProcedure` and `getInputOutputParsers` take.
 * Lazy routers (`lazy(() => import(...))`) are refused: their procedures are not there until loaded.
 */
export function procedureRecord(router: AnyTRPCRouter): Record<string, AnyTRPCProcedure> {
  const def = (router as { _def?: { procedures?: unknown; lazy?: unknown } })._def;
  if (typeof def !== 'object' || def === null || typeof def.procedures !== 'object' || def.procedures === null) {
    throw changed('a router has no `_def.procedures` record');
  }
  if (typeof def.lazy === 'object' && def.lazy !== null && Object.keys(def.lazy).length > 0) {
    throw new Error(`${SEAM}: lazy routers are not supported (their procedures cannot be listed before they load): ${Object.keys(def.lazy).join(', ')}`);
  }
  return def.procedures as Record<string, AnyTRPCProcedure>;
}

/** Every procedure of the router, with its kind and meta, in the router's order. */
export function listProcedures<TMeta>(router: AnyTRPCRouter): ProcedureEntry<TMeta>[] {
  return Object.entries(procedureRecord(router)).map(([path, procedure]) => {
    const def = (procedure as { _def?: ProcedureDef })._def;
    const kind = def?.type;
    if (typeof kind !== 'string' || !KINDS.includes(kind as TRPCProcedureType)) {
      throw changed(`procedure "${path}" has no \`_def.type\` among ${KINDS.join(', ')} (got ${JSON.stringify(kind)})`);
    }
    return { path, kind: kind as TRPCProcedureType, meta: def?.meta as TMeta | undefined, procedure };
  });
}

/**
 * What a middleware returns to answer `data` without running the rest of the chain. tRPC reads
 * only `ok` and `data` of a successful result (and passes it on unchanged through the middlewares
 * above); the result type's brand is what makes middlewares return `next()`'s result, which a
 * replay, by design, does not call. `R` is the middleware's own result type (`ReturnType<next>`).
 */
export function middlewareResult<R>(data: unknown): R {
  return { ok: true, data } as unknown as R;
}

/**
 * The property names of tRPC's router and procedure types that the client build's type printer
 * walks (`AppRouter['_def']['record']`, `procedure['_def']['type' | '$types']`, the root's
 * `_def._config.$types`): tRPC's public inference types (`inferRouterInputs`, ...) give inputs
 * and outputs but not a procedure's kind nor the nesting. The seam test checks these names on
 * the installed types.
 */
export const routerTypeMembers = {
  def: '_def',
  record: 'record',
  config: '_config',
  types: '$types',
  kind: 'type',
} as const;
