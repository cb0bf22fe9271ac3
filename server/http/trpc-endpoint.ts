/**
 * The typed client's door, `/trpc`: the same procedures as the REST facade, with the same
 * context (`createContext`), the same auth, and problems in the error `data`.
 */
import type { AnyRouter } from '@trpc/server';
import { fastifyTRPCPlugin, type FastifyTRPCPluginOptions } from '@trpc/server/adapters/fastify';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/client.ts';
import { DomainError, logFailure, MAX_LISTED_ERRORS } from '../errors/problems.ts';
import { toDomainError } from '../errors/to-domain-error.ts';
import type { LiveEvents } from '../events/live.ts';
import type { CursorCodec } from '../lib/cursors.ts';
import { createContext, type Context, type IdempotencySettings } from '../trpc/context.ts';
import type { Settings } from '../lib/settings.ts';
import { domainTrpcError } from '../trpc/trpc.ts';

export interface TrpcEndpointOptions {
  router: AnyRouter;
  db: Db;
  /** The most calls one request may carry; more is a 400. */
  maxBatchSize: number;
  idempotency?: IdempotencySettings;
  cursors?: CursorCodec;
  /** The live events subscriptions read (server/events/live.ts). */
  live?: LiveEvents;
  /** The modules' settings (server/lib/settings.ts). */
  settings?: Settings;
}

export async function registerTrpcEndpoint(app: FastifyInstance, options: TrpcEndpointOptions): Promise<void> {
  const { db, idempotency, cursors, live, settings } = options;
  const trpcOptions: FastifyTRPCPluginOptions<AnyRouter>['trpcOptions'] = {
    router: options.router,
    allowMethodOverride: false,
    maxBatchSize: options.maxBatchSize,
    createContext: ({ req, info }): Context => {
      const ctx = createContext(req, { db, ...(idempotency ? { idempotency } : {}), ...(cursors ? { cursors } : {}), ...(live ? { live } : {}), ...(settings ? { settings } : {}) });
      // One key names one operation: in a batch it would bind every call (and mark them all replayed).
      // Thrown with the domain's tRPC code: tRPC makes any other error from here a 500-coded one.
      if (ctx.idempotencyKey !== undefined && info.calls.length > 1) {
        throw domainTrpcError(
          new DomainError('malformed-request', 'An Idempotency-Key applies to one call: send keyed calls unbatched.', {
            errors: [{ field: 'Idempotency-Key', message: 'cannot be used with a batch of several calls' }],
          }),
        );
      }
      // A batch of n calls lists MAX_LISTED_ERRORS field errors in all (at least one per call):
      // 100 calls each listing its own 20 would make one answer of a few kilobytes of input large.
      ctx.listedErrors = Math.max(1, Math.floor(MAX_LISTED_ERRORS / info.calls.length));
      return ctx;
    },
    // What the procedures put in the response bag, as on REST. A problem's own headers (Retry-After,
    // WWW-Authenticate, Allow...) as on REST too; errors are never cached, whatever the bag says.
    responseMeta: ({ ctx, errors }) => {
      // `ctx` is what createContext above returned (undefined when it threw).
      const bag = (ctx as Context | undefined)?.response.headers ?? {};
      if (errors.length === 0) return { headers: { ...bag } };
      return { headers: Object.assign({ ...bag }, { 'cache-control': 'no-store' }, ...errors.map((error) => toDomainError(error).headers)) };
    },
    onError: ({ error, req }) => {
      // What failed (a bug's stack included), not the generic problem the client gets; on the
      // request's logger, so the line carries its request and trace ids.
      logFailure(req.log, toDomainError(error), {}, 'trpc call failed');
    },
  };
  await app.register(async (scope) => {
    // A plain OPTIONS (a CORS preflight is answered before routing, server/http/cors.ts) is
    // answered as on REST: 204 with the methods /trpc serves (docs/api.md#http-refusals). The
    // adapter's catch-all route answered it 415 `text/plain` for want of a Content-Type.
    scope.addHook('onRequest', async (request, reply) => {
      if (request.method === 'OPTIONS') return reply.code(204).header('allow', TRPC_METHODS).send();
    });
    await scope.register(fastifyTRPCPlugin, { prefix: '/trpc', trpcOptions });
  });
}

/** The methods of /trpc: queries by GET, mutations and batches by POST. */
const TRPC_METHODS = 'GET, POST, OPTIONS';
