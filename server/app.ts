import { randomUUID } from 'node:crypto';
import { METHODS } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { TokenService } from './auth/tokens.ts';
import type { Database } from './db/client.ts';
import { DomainError } from './errors/problems.ts';
import { fastifyTrustProxy, type TrustProxy } from './lib/client-address.ts';
import { projectRoot } from './lib/project-root.ts';
import { admission, securityHeaders } from './http/admission.ts';
import { corsPolicy } from './http/cors.ts';
import { registerDocs } from './http/docs.ts';
import { registerHealth } from './http/health.ts';
import { Lifecycle } from './http/lifecycle.ts';
import { buildOpenApiDocument } from './http/openapi.ts';
import { answerClientError } from './http/client-errors.ts';
import { defaultHttpTimeouts, serverTimeoutOptions, type HttpTimeouts } from './http/timeouts.ts';
import { registerJsonParser } from './http/json-body.ts';
import { registerMetrics, type MetricsOptions } from './http/metrics.ts';
import { traceContextLogger } from './http/trace-context.ts';
import { handleError, sendProblem } from './http/problem-reply.ts';
import { registerOAuth, type OAuthOptions } from './oauth/register.ts';
import { oauthOpenApi } from './oauth/openapi-paths.ts';
import { registerRateLimit, type RateLimiter, type RateLimitOptions } from './http/rate-limit.ts';
import { purgeJob } from './db/purge.ts';
import { registerRestRoutes } from './http/rest-adapter.ts';
import { registerTrpcEndpoint } from './http/trpc-endpoint.ts';
import { appRouter } from './router.ts';
import { routerOf, settingsFrom, type AppModule, type SettingsOf } from './modules/module.ts';
import { modules as appModules } from './modules/modules.ts';
import { Settings } from './lib/settings.ts';
import { CursorCodec, processCursors } from './lib/cursors.ts';
import { defaultIdempotencySettings, type IdempotencySettings } from './trpc/context.ts';
import { purgeExpiredKeys } from './trpc/idempotency.ts';
import { LiveEvents } from './events/live.ts';
import { readLiveEvents } from './modules/events/events.live.ts';

export interface CoreAppOptions {
  database: Database;
  tokens: TokenService;
  bodyLimit?: number;
  /**
   * Which proxies' `X-Forwarded-*` to believe (server/lib/client-address.ts): a hop count (`true`
   * is 1: only the nearest proxy), or the proxies' addresses and CIDR ranges; none by default.
   */
  trustProxy?: TrustProxy | boolean;
  logger?: FastifyServerOptions['logger'];
  /**
   * Requests (tRPC calls) per window per caller (`sub`, else client IP), counted in Redis when
   * `redisUrl` is set (shared by every instance), else in this process's memory. Every response
   * carries RateLimit-*.
   */
  rateLimit?: RateLimitOptions;
  /** Browser origins allowed by CORS (`'*'`: any); none by default. */
  corsOrigins?: string[] | '*';
  /** PEM certificate and key: serve HTTPS (and send HSTS). */
  tls?: { cert: string; key: string };
  /**
   * Idempotency keys: kept `ttlHours` (default 24), a request waits at most `waitTimeoutMs`
   * (default 10 s) for the first with its key; expired keys are purged every `purgeIntervalMs`
   * (default 10 minutes).
   */
  idempotency?: Partial<IdempotencySettings> & { purgeIntervalMs?: number };
  /**
   * The authorization server under /oauth (server/oauth/settings.ts): issuer (PUBLIC_URL), refresh
   * token lifetime, its stricter rate limit, the sign-in backoff, the key of its HMACs.
   */
  oauth?: OAuthOptions;
  /** The secret list cursors are signed with (every instance the same; main.ts: JWT_SECRET). */
  cursorSecret?: string;
  /** `GET /metrics` on a port of its own and/or to a bearer of a token (server/http/metrics.ts); neither: none. */
  metrics?: MetricsOptions;
  /** How long a client may take to send a request, and stay idle between requests (http/timeouts.ts). */
  http?: Partial<HttpTimeouts>;
}

/**
 * What `buildApp` takes: the service's options, the module list (server/modules/modules.ts unless
 * given: a test mounts a module of its own by adding it), every module's settings (`settings`, as
 * config.ts read them; each module's defaults otherwise), and, by module name, settings that
 * override them field by field (a test's `<name>: { ... }`).
 */
export type AppOptions<Modules extends readonly AppModule[] = typeof appModules> = CoreAppOptions & { modules?: Modules; settings?: Settings } & SettingsOf<Modules>;

declare module 'fastify' {
  interface FastifyInstance {
    /** This process's live order events (server/events/live.ts): its subscribers, its feed. */
    live: LiveEvents;
  }
  interface FastifyContextConfig {
    /** JSON API route: content negotiation applies. */
    api?: boolean;
    /** Body media types the route accepts, for `Accept-Post`/`Accept-Patch` on a 415. */
    accepts?: string;
  }
}

const packageVersion = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;

/** One JSON line per request, on completion (no headers, tokens or bodies). */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = { method: request.method, url: request.url.split('?')[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime) };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request');
  }
}

/** The most calls one `/trpc` request may carry; the typed client batches fewer. */
export const MAX_TRPC_BATCH = 100;

/** The methods some route serves; any other method Node parses answers 405 on a known path. */
const SERVED_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Builds the whole service; never listens (tests use `inject`). Closing it closes the database. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance>;
/** With a module list of its own (a test's): the options take its modules' settings by name. */
export async function buildApp<const Modules extends readonly AppModule[]>(options: AppOptions<Modules>): Promise<FastifyInstance>;
export async function buildApp(options: CoreAppOptions & { modules?: readonly AppModule[]; settings?: Settings }): Promise<FastifyInstance> {
  const { database, tokens } = options;
  const modules: readonly AppModule[] = options.modules ?? appModules;
  const router = options.modules ? routerOf(options.modules) : appRouter;
  // Each module's settings, overridden by the options named after it.
  const settings = settingsFrom(modules, options.settings ?? new Settings(), options as unknown as Readonly<Record<string, object | undefined>>);
  await tokens.ready();
  // Registered below, once the app exists; the router refuses nothing before the app is ready.
  let limiter: RateLimiter | undefined = undefined;
  const timeouts = serverTimeoutOptions({ ...defaultHttpTimeouts, ...options.http });
  const app: FastifyInstance = Fastify({
    ...(options.tls ? { https: { ...options.tls, ...timeouts.server } } : { http: timeouts.server }),
    // Slow clients are cut off (issue 21): headers, the whole request, idle keep-alive.
    requestTimeout: timeouts.requestTimeout,
    keepAliveTimeout: timeouts.keepAliveTimeout,
    logger: options.logger ?? false,
    logController: new OneLinePerRequest(),
    // Every line of a request carries its W3C trace id beside its request id.
    childLoggerFactory: traceContextLogger,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    trustProxy: fastifyTrustProxy(options.trustProxy),
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    // `/trpc/<name>,<name>,...`: a batch of MAX_TRPC_BATCH calls must fit in one path parameter.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 8192 },
    // Node's own refusals (431, 400 before routing, 408) as problems too.
    clientErrorHandler: (error, socket) => answerClientError(error, socket, app.log),
    // Requests on kept-alive sockets during close get our 503 problem (onRequest), not Fastify's.
    return503OnClosing: false,
    // Errors the router raises before any route (undecodable URL, over-long parameter).
    // No hook runs for these, so they are counted here (and past the limit answer 429).
    frameworkErrors: async (error, request, reply) => {
      try {
        await limiter?.count(request, reply);
      } catch (limited) {
        return handleError(limited, request, reply);
      }
      return handleError(error, request, reply);
    },
  });

  // First of the hooks, so every request is counted (server/http/metrics.ts).
  const metrics = await registerMetrics(app, { ...options.metrics, router, pool: database.poolState });

  const lifecycle = new Lifecycle(app.server, options.tls !== undefined);
  app.decorate('lifecycle', lifecycle);

  registerJsonParser(app);
  // Every method Node parses reaches the router, so a known path answers 405 + Allow for any
  // method it lacks (TRACE, PROPFIND, QUERY...), not 404. None of them is served, so none has
  // its body read (QUERY would otherwise be refused for a missing Content-Type before the 405).
  // CONNECT names no path.
  for (const method of METHODS) {
    if (method === 'CONNECT' || SERVED_METHODS.has(method)) continue;
    app.addHttpMethod(method, { hasBody: false, overrideExisting: app.supportedMethods.includes(method) });
  }

  // `app.close()`, after the drain or without one (tests): the database is about to close, so
  // requests still arriving are refused.
  app.addHook('preClose', async () => {
    lifecycle.refuse();
  });

  const rateLimiter = await registerRateLimit(app, options.rateLimit ?? { max: 600, timeWindow: '1 minute' }, MAX_TRPC_BATCH);
  limiter = rateLimiter;
  await app.register(securityHeaders, { tls: options.tls !== undefined });
  await app.register(admission, { tokens, rateLimiter, lifecycle });
  app.setErrorHandler((error, request, reply) => handleError(error, request, reply));
  app.setNotFoundHandler((request, reply) => sendProblem(request, reply, new DomainError('not-found', `No resource at ${request.url.split('?')[0]}.`)));
  const { purgeIntervalMs = 10 * 60_000, ...idempotencyOverrides } = options.idempotency ?? {};
  const idempotency: IdempotencySettings = { ...defaultIdempotencySettings, ...idempotencyOverrides, onReplay: metrics?.recordReplay };
  // Without a secret, the process's own key: cursors then hold within this process only.
  const cursors = options.cursorSecret === undefined ? processCursors : new CursorCodec(options.cursorSecret);
  // Expired idempotency keys and every module's background jobs: started once the app is ready,
  // stopped before the database closes.
  const jobs = [
    purgeJob(app.log, purgeIntervalMs, 'expired idempotency keys', () => purgeExpiredKeys(database.db)),
    ...modules.flatMap((module) => module.jobs?.({ db: database.db, listen: database.listen, log: app.log, settings }) ?? []),
  ];
  // Live order events for subscriptions (server/events/live.ts): their streams end when the
  // drain begins, and the LISTEN stops before the database closes.
  const live = new LiveEvents(database.db, database.listen, readLiveEvents, {
    onError: (error) => app.log.error({ err: error }, 'live events: reading notified events failed'),
  });
  lifecycle.whenClosing(() => live.stop());
  app.decorate('live', live);
  app.addHook('onReady', async () => {
    await Promise.all(jobs.map((job) => job.start()));
  });
  app.addHook('onClose', async () => {
    // The jobs first: a delivery in flight records its outcome while the database is open.
    await Promise.all([...jobs.map((job) => job.stop()), live.close()]);
    await database.close();
  });

  await app.register(corsPolicy, { origins: options.corsOrigins ?? [] });

  registerRestRoutes(app, { router, db: database.db, idempotency, cursors, settings });
  await registerOAuth(app, { db: database.db, tokens, tls: options.tls !== undefined, options: options.oauth });

  registerHealth(app, { database, rateLimiter, lifecycle });

  await registerDocs(app, { document: JSON.stringify(buildOpenApiDocument(router, packageVersion, [oauthOpenApi()])) });

  // The typed client's door: same procedures and context as REST, problems in the error `data`.
  // The typed client sends at most 50 calls a request (its `maxItems`); more than MAX_TRPC_BATCH get a 400.
  await registerTrpcEndpoint(app, { router, db: database.db, maxBatchSize: MAX_TRPC_BATCH, idempotency, cursors, live, settings });

  return app;
}

