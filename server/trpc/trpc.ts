import { getTRPCErrorFromUnknown, initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { PUBLIC, refusal, type Policy, type RolePolicy } from '../auth/policy.ts';
import type { Caller } from '../auth/tokens.ts';
import { problemBody, problemTypes, type Problem } from '../errors/problems.ts';
import { toDomainError, toQueryDomainError } from '../errors/to-domain-error.ts';
import type { Context } from './context.ts';
import { idempotent, isCreatingOperation } from './idempotency.ts';
import { middlewareResult } from './trpc-internals.ts';

/** How the REST facade answers a procedure, beside trpc-to-openapi's method and path. */
export interface RestMeta {
  /** Success status; default 200. */
  status?: 200 | 201 | 202 | 204;
  /**
   * Reads only (default `private`): `public` -> `public, max-age=60`; `private` -> revalidate every
   * time; `no-store`. Writes always answer `no-store`, so the route table refuses it on them.
   */
  cache?: 'public' | 'private' | 'no-store';
  /** Path template under `/api/v1` filled from the output, e.g. `/products/{id}` -> `Location`. */
  location?: string;
  /** `item` gets `Last-Modified` from `updated_at`; `list` gets an RFC 8288 `Link` header. */
  kind?: 'item' | 'list';
  /**
   * PATCH: the body is a patch document of the request's Content-Type; the procedure gets
   * `{ ...pathParams, format: 'merge-patch' | 'json-patch', document: body }`.
   */
  patch?: boolean;
  /** Problem slugs this operation can answer besides the generic ones (for the OpenAPI document). */
  problems?: readonly (keyof typeof problemTypes)[];
  /**
   * Output fields shown only in the first answer of a creation (a client secret): never stored
   * with an `Idempotency-Key`, so a replay answers without them (server/trpc/idempotency.ts).
   */
  notReplayed?: readonly string[];
  /**
   * The next steps a client takes with this operation's answer beyond those its `location` names
   * (the OpenAPI document derives those): OpenAPI links, which schemathesis's stateful phase follows.
   */
  links?: readonly RestLink[];
}

/**
 * A next step from an operation's answer to another procedure: which of the target's path
 * parameters and body members come from which members of the answer, named by JSON pointer into
 * it, e.g. paying a confirmed order: `{ to: 'payments.create', body: { order_id: 'id', amount: 'total' } }`,
 * or ordering the first product of a page: `body: { items: [{ product_id: 'data/0/id', quantity: 1 }] }`.
 */
export interface RestLink {
  /** The target procedure's dotted path on the router. */
  to: string;
  /** Target path parameter -> pointer into the answer. */
  parameters?: Readonly<Record<string, string>>;
  /** Members of the target's body: every string a pointer into the answer, anything else as it is. */
  body?: Readonly<Record<string, unknown>>;
  /** What the step does, for the document. */
  description: string;
}

/** `policy`: who may call the procedure (server/auth/policy.ts); every procedure declares one. */
export type Meta = OpenApiMeta<{ rest?: RestMeta; policy?: Policy }>;

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    errorFormatter({ shape, error, ctx }) {
      const problem: Problem = problemBody(toDomainError(error), undefined, ctx?.requestId, ctx?.listedErrors);
      return {
        message: problem.detail,
        code: shape.code,
        data: { code: shape.data.code, httpStatus: problem.status, path: shape.data.path, problem },
      };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * Whatever a procedure (or `/trpc`'s createContext) threw, as a TRPCError whose code and cause are
 * the domain's: tRPC itself turns any other error into INTERNAL_SERVER_ERROR.
 */
export function domainTrpcError(error: unknown): TRPCError {
  const domain = toDomainError(error);
  return new TRPCError({ code: problemTypes[domain.slug].code, message: domain.message, cause: domain });
}

/**
 * The one middleware of every procedure, in this order:
 *
 * 1. the policy the procedure declares in `meta.policy` (server/auth/policy.ts), before its body
 *    runs, on every door alike: 401 without a token, 403 `forbidden` for a role it does not list,
 *    403 `insufficient-scope` (with its WWW-Authenticate challenge) for a token lacking its scope.
 *    A procedure without one is refused: a forgotten declaration fails closed, and the
 *    policy-coverage test names it;
 * 2. `Idempotency-Key` on every creating operation (POST answering 201/202;
 *    server/trpc/idempotency.ts), after the policy: a refused caller never touches a key. Other
 *    calls, and calls without a key, go straight on;
 * 3. whatever any of it, or the procedure, threw, as a TRPCError whose code and cause are the
 *    domain's; a query's input members its schema does not take are its unknown parameters (400
 *    `unknown-parameter`, as on REST; every input schema is strict, rest-routes.ts checks it).
 *
 * One middleware rather than three: each level of tRPC's chain copies the call's options twice.
 */
const guard = t.middleware(async ({ ctx, meta, path, type, getRawInput, next }) => {
  let result: Awaited<ReturnType<typeof next>>;
  try {
    const policy = meta?.policy;
    if (policy === undefined) throw new Error('This procedure declares no policy (meta.policy).');
    const refused = refusal(policy, ctx.caller);
    if (refused) throw refused;
    result =
      ctx.idempotencyKey !== undefined && isCreatingOperation(meta)
        ? await idempotent({
            ctx,
            meta,
            path,
            getRawInput,
            run: (db) => next({ ctx: { db } }),
            outputOf: (outcome) => (outcome.ok ? outcome.data : undefined),
            // A replay answers the stored output without calling next() (trpc-internals.ts says how).
            replay: (output) => middlewareResult<Awaited<ReturnType<typeof next>>>(output),
          })
        : await next();
  } catch (error) {
    // As tRPC itself would have passed it on from a middleware further down the chain.
    throw domainTrpcError(getTRPCErrorFromUnknown(error));
  }
  if (!result.ok) throw domainTrpcError(type === 'query' ? toQueryDomainError(result.error) : result.error);
  return result;
});

const baseProcedure = t.procedure.use(guard);

/**
 * The type of a procedure whose `ctx.caller` is never null. Only its type is used: the guard
 * refuses a null caller for every role policy (`refusal` answers 401 first), so no middleware
 * has to narrow it at run time.
 */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- built for its type only, never called
const withCaller = baseProcedure.use(({ ctx, next }) => next({ ctx: { caller: ctx.caller as Caller } }));

/** Anyone, with or without a token (`ctx.caller` may be null). */
export const publicProcedure = baseProcedure.meta({ policy: PUBLIC });

/**
 * A procedure admitting what `policy` admits, e.g.
 * `procedureFor({ roles: ['customer', 'admin', 'service'], scope: 'orders:read' })`: customers,
 * admins and service clients whose token grants orders:read (a person's token without a `scope`
 * claim grants what the role allows). Resource rules (whose order) stay in the service.
 */
export const procedureFor = (policy: RolePolicy): typeof withCaller => baseProcedure.meta({ policy }) as unknown as typeof withCaller;
