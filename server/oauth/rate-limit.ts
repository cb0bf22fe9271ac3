/**
 * The stricter limit of the sign-in and token endpoints (docs/signing-in.md#limits-and-backoff): `max` requests per
 * window per client address (an IPv6 client by its /64) on POST /oauth/token, /oauth/authorize and /oauth/revoke, on top of
 * the service-wide limit. It uses the service's rate-limit store (server/http/rate-limit.ts:
 * Redis when REDIS_URL is set, so every instance shares the count; else each process's memory) and, like
 * the service-wide limit, fails open when that store does not answer.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../errors/problems.ts';
import { addressKey } from '../lib/client-address.ts';

export function oauthRateLimit(app: FastifyInstance, options: { max: number; timeWindow: string | number }) {
  const limit = app.createRateLimit({
    max: options.max,
    timeWindow: options.timeWindow,
    keyGenerator: (request) => `oauth:ip:${addressKey(request.ip)}`,
    skipOnError: true,
  });
  return async function countOAuthRequest(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const outcome = await limit(request);
    // With skipOnError a store error reads as nothing counted, which no counted request leaves.
    if (outcome.isAllowed || outcome.remaining === outcome.max) return;
    const reset = Math.max(1, outcome.ttlInSeconds);
    // The stricter limit's numbers replace the service-wide ones on these routes.
    reply.header('ratelimit-limit', outcome.max).header('ratelimit-remaining', outcome.remaining).header('ratelimit-reset', reset);
    if (outcome.isExceeded) {
      throw new DomainError(
        'rate-limited',
        `Too many sign-in and token requests from this address: the limit is ${outcome.max} per ${Math.ceil(outcome.timeWindow / 1000)} s; retry in ${reset} s.`,
        { headers: { 'retry-after': String(reset) } },
      );
    }
  };
}
