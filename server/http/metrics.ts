/**
 * `GET /metrics` (docs/api.md#metrics): never public by default. It is served
 *
 * - on a port of its own (`METRICS_PORT`, bound to `METRICS_HOST`, 127.0.0.1 by default): a small
 *   server answering only `GET /metrics`, for a scraper on the host or a private network; and/or
 * - on the main port, when `METRICS_TOKEN` is set, to a request with `Authorization: Bearer
 *   <token>`. Any other request for it (no token, another token) is answered the 404 of an
 *   unknown path, so the endpoint stays invisible to the public.
 *
 * With neither, nothing is recorded and `/metrics` is an unknown path (404).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AnyRouter } from '@trpc/server';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ServiceMetrics, type MetricsSources } from './metrics-registry.ts';
import { listProcedures } from '../trpc/trpc-internals.ts';

export interface MetricsOptions {
  /** Serve `/metrics` on its own server at `host:port` (0: any free port). */
  port?: number | undefined;
  /** The metrics server's address; 127.0.0.1 by default. */
  host?: string | undefined;
  /** Serve `GET /metrics` on the main port to a bearer of this token. */
  token?: string | undefined;
}

export interface MetricsPluginOptions extends MetricsOptions, MetricsSources {
  /** The router `/trpc` serves: its procedures' paths label `/trpc` requests. */
  router: AnyRouter;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** In flight for the metrics: counted in by their hooks and not yet out (answered or abandoned). */
    metricsInFlight: boolean;
  }
}

const METRICS_PATH = '/metrics';
/** The label of a request no route matched (404): one value, however many paths are tried. */
export const UNMATCHED_ROUTE = 'unmatched';
/** `/trpc` as server/http/trpc-endpoint.ts registers it (fastifyTRPCPlugin, prefix `/trpc`). */
const TRPC_ROUTE = '/trpc/:path';
/** The label of a `/trpc` batch: one value for every combination of procedures. */
export const TRPC_BATCH_ROUTE = '/trpc/(batch)';

/**
 * The route label of a request: its template (`/api/v1/orders/:id`), `unmatched` when no route
 * matched, and on `/trpc` the procedure (`/trpc/orders.get`) when it is one the router has,
 * `/trpc/(batch)` for a batch, and the template for anything else.
 */
function routeLabel(request: FastifyRequest, procedures: ReadonlySet<string>): string {
  const template = request.routeOptions.url;
  if (template === undefined || template === '*' || template === '/*') return UNMATCHED_ROUTE;
  if (template !== TRPC_ROUTE) return template;
  const { path } = request.params as { path?: unknown };
  if (typeof path !== 'string') return template;
  if (path.includes(',')) return TRPC_BATCH_ROUTE;
  return procedures.has(path) ? `/trpc/${path}` : template;
}

/** Whether `authorization` is `Bearer <the token>`, compared in constant time. */
function bearerMatches(authorization: string | undefined, tokenDigest: Buffer): boolean {
  const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '');
  if (!match?.[1]) return false;
  // Digests of equal length, so neither the comparison nor its length check tells anything.
  return timingSafeEqual(createHash('sha256').update(match[1]).digest(), tokenDigest);
}

/**
 * Registers the metrics hooks and endpoints. Call it before any other `onRequest` hook is added,
 * so every request is counted from the start (one refused by a later hook included). Returns the
 * registry, or undefined when metrics are not served (neither a port nor a token: nothing is
 * recorded).
 */
export async function registerMetrics(app: FastifyInstance, options: MetricsPluginOptions): Promise<ServiceMetrics | undefined> {
  const { port, host = '127.0.0.1', token } = options;
  if (port === undefined && token === undefined) return undefined;
  const metrics = new ServiceMetrics({ pool: options.pool });
  const procedures: ReadonlySet<string> = new Set(listProcedures(options.router).map(({ path }) => path));

  // Callback hooks, not async ones: no promise per request for a few counter updates.
  app.decorateRequest('metricsInFlight', false);
  app.addHook('onRequest', (request, _reply, done) => {
    request.metricsInFlight = true;
    metrics.requestReceived();
    done();
  });
  // Requests refused before any hook (an undecodable URL) come to neither hook below: they were
  // never counted in. Each of the others is counted out once, by whichever comes first.
  app.addHook('onResponse', (request, reply, done) => {
    if (request.metricsInFlight) {
      request.metricsInFlight = false;
      metrics.requestEnded();
      metrics.requestAnswered(request.method, routeLabel(request, procedures), reply.statusCode, reply.elapsedTime / 1000);
    }
    done();
  });
  // A client gone before its answer: Fastify runs no onResponse for it, and it has no status.
  app.addHook('onRequestAbort', (request, done) => {
    if (request.metricsInFlight) {
      request.metricsInFlight = false;
      metrics.requestEnded();
    }
    done();
  });

  if (token !== undefined) {
    const tokenDigest = createHash('sha256').update(token).digest();
    app.get(METRICS_PATH, async (request, reply) => {
      if (!bearerMatches(request.headers.authorization, tokenDigest)) return reply.callNotFound();
      const text = await metrics.scrape();
      return reply.header('content-type', metrics.contentType).header('cache-control', 'no-store').send(text);
    });
  }

  if (port !== undefined) {
    const server = createServer((request, response) => void serveMetrics(metrics, request, response));
    // Listening is part of starting: a taken port fails `ready()` (and so `listen()`) loudly.
    app.addHook('onReady', async () => {
      server.listen(port, host);
      await Promise.race([once(server, 'listening'), once(server, 'error').then(([error]: unknown[]) => Promise.reject(error))]);
      const address = server.address();
      app.log.info({ address }, 'metrics served on their own port');
    });
    app.addHook('onClose', async () => closeServer(server));
  }
  return metrics;
}

/** The metrics server's one resource; anything else is 404, another method on it 405. */
async function serveMetrics(metrics: ServiceMetrics, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = (request.url ?? '').split('?')[0];
  if (path !== METRICS_PATH) {
    response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: this port serves only GET /metrics.\n');
    return;
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('Method not allowed.\n');
    return;
  }
  try {
    const text = await metrics.scrape();
    response.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
    response.end(request.method === 'HEAD' ? undefined : text);
  } catch {
    if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
    response.end('The metrics could not be collected.\n');
  }
}

async function closeServer(server: Server): Promise<void> {
  if (!server.listening) return;
  const closed = once(server, 'close');
  server.close();
  // A scraper's kept-alive connection must not hold the app's close.
  server.closeAllConnections();
  await closed;
}
