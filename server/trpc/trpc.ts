import { getTRPCErrorFromUnknown, initTRPC, TRPCError } from '@trpc/server';
import { PUBLIC, refusal, type RolePolicy } from '../auth/policy.ts';
import type { Caller } from '../auth/tokens.ts';
import { problemBody, problemType, type Problem } from '../errors/problems.ts';
import { toDomainError, toQueryDomainError } from '../errors/to-domain-error.ts';
import type { Context } from './context.ts';
import { honoursIdempotencyKey, idempotent } from './idempotency.ts';
import type { Meta } from './meta.ts';
import { middlewareResult } from './trpc-internals.ts';

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    // Server-sent events for subscriptions (`orders.onChange`, docs/api.md#live-updates): a ping
    // every 15 s keeps proxies (nginx's 60 s proxy_read_timeout) from cutting a quiet stream, and
    // a client that hears nothing for 40 s reconnects (a dead connection). A stream ends after
    // 15 minutes, the access token's default lifetime: its client reconnects with a token of now.
    // It also ends at its own token's exp, and when its user is deleted or its sign-in revoked
    // (server/events/live.ts).
    sse: {
      ping: { enabled: true, intervalMs: 15_000 },
      client: { reconnectAfterInactivityMs: 40_000 },
      maxDurationMs: 15 * 60_000,
    },
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
  return new TRPCError({ code: problemType(domain.slug).code, message: domain.message, cause: domain });
}

/**
 * The one middleware of every procedure, in this order:
 *
 * 1. the policy the procedure declares in `meta.policy` (server/auth/policy.ts), before its body
 *    runs, on every door alike: 401 without a token, 403 `forbidden` for a role it does not list,
 *    403 `insufficient-scope` (with its WWW-Authenticate challenge) for a token lacking its scope.
 *    A procedure without one is refused: a forgotten declaration fails closed, and the
 *    policy-coverage test names it;
 * 2. `Idempotency-Key` on every creating operation (POST answering 201/202, or declaring
 *    `meta.rest.honoursIdempotencyKey`; server/trpc/idempotency.ts), after the policy: a refused
 *    caller never touches a key; the procedure's `meta.prepare` runs first, outside the key's transaction (meta.ts). Other
 *    calls, and calls without a key, go straight on;
 * 3. whatever any of it, or the procedure, threw, as a TRPCError whose code and cause are the
 *    domain's; a query's (or a subscription's: both are GETs) input members its schema does not
 *    take are its unknown parameters (400 `unknown-parameter`, as on REST; every input schema is
 *    strict, rest-routes.ts checks it).
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
    const keyed = ctx.idempotencyKey !== undefined && honoursIdempotencyKey(meta);
    // Before the key's transaction, so no connection is held while it waits (meta.ts, Prepare).
    const prepared = keyed && meta?.prepare ? await meta.prepare(await getRawInput(), ctx) : undefined;
    result =
      keyed
        ? await idempotent({
            ctx,
            meta,
            path,
            getRawInput,
            // The key's unit of work goes to the procedure under its own name: `ctx.db` stays the pool.
            run: (work) => next({ ctx: { work, prepared } }),
            outputOf: (outcome) => (outcome.ok ? outcome.data : undefined),
            // A replay answers the stored output without calling next() (trpc-internals.ts says how).
            replay: (output) => middlewareResult<Awaited<ReturnType<typeof next>>>(output),
          })
        : await next();
  } catch (error) {
    // As tRPC itself would have passed it on from a middleware further down the chain.
    throw domainTrpcError(getTRPCErrorFromUnknown(error));
  }
  // A subscription's input travels in the query string too (a GET on /trpc): the same rule.
  if (!result.ok) throw domainTrpcError(type === 'mutation' ? result.error : toQueryDomainError(result.error));
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
