/**
 * Health (liveness and the database) and readiness (docs/api.md#health-and-readiness): unversioned, GET and
 * HEAD only, never cached. A rate-limit store that does not answer is `degraded`, still 200: the
 * service works (the limiter fails open); only the database and the service's phase decide 503.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Database } from '../db/client.ts';
import type { Lifecycle } from './lifecycle.ts';
import type { RateLimiter } from './rate-limit.ts';
import { refuseUnknownQueryParameters } from './query-parameters.ts';
import { registerMethodFallbacks } from './rest-adapter.ts';

/** Operations of the OpenAPI document like any other: no query parameter (docs/api.md#unknown-parameters). */
const NO_PARAMETERS: ReadonlySet<string> = new Set();

export interface HealthDeps {
  database: Database;
  rateLimiter: RateLimiter;
  lifecycle: Lifecycle;
}

export function registerHealth(app: FastifyInstance, { database, rateLimiter, lifecycle }: HealthDeps): void {
  /** `usable`: whether the service itself would take requests, the database aside. */
  async function answer(reply: FastifyReply, usable: boolean, pingDatabase: boolean): Promise<FastifyReply> {
    const [databaseUp, limitStore] = await Promise.all([pingDatabase && database.ping(2000), rateLimiter.storeState()]);
    const up = usable && databaseUp;
    const status = !up ? 'unavailable' : limitStore === 'unavailable' ? 'degraded' : 'ok';
    return reply
      .code(up ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status, checks: { database: databaseUp ? 'ok' : 'unavailable', ...(limitStore ? { rate_limit_store: limitStore } : {}) } });
  }

  // Liveness and the database; 503 from SIGTERM on (docs/api.md#graceful-stop), as it always answered.
  app.get('/api/health', { config: { api: true } }, async (request, reply) => {
    refuseUnknownQueryParameters(request, NO_PARAMETERS);
    const stopping = lifecycle.phase !== 'starting' && lifecycle.phase !== 'serving';
    return answer(reply, !stopping, !stopping);
  });

  // Whether to send requests here: not before the bootstrap is done, not from SIGTERM on (so a load
  // balancer stops sending before the drain), not while the database does not answer.
  app.get('/api/health/ready', { config: { api: true } }, async (request, reply) => {
    refuseUnknownQueryParameters(request, NO_PARAMETERS);
    return answer(reply, lifecycle.phase === 'serving', true);
  });

  registerMethodFallbacks(
    app,
    new Map([
      ['/api/health', new Set(['GET', 'HEAD'])],
      ['/api/health/ready', new Set(['GET', 'HEAD'])],
    ]),
  );
}
