/**
 * What every request meets before its route: the headers every answer carries, and admission
 * (docs/api.md#authentication-and-authorization, docs/api.md#rate-limits): refused while the service stops, its
 * token verified once, counted against its limit, its `Accept` checked. Two Fastify plugins that
 * apply to the whole app (fastify-plugin), registered in this order before any route.
 */
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { TokenService } from '../auth/tokens.ts';
import { DomainError } from '../errors/problems.ts';
import type { Lifecycle } from './lifecycle.ts';
import type { RateLimiter } from './rate-limit.ts';

export interface SecurityHeadersOptions {
  /** Served over TLS: answers carry `Strict-Transport-Security`. */
  tls: boolean;
}

/** `X-Request-Id` and OWASP's REST headers on every answer: no sniffing, no framing (HTML pages set their own policy). */
export const securityHeaders = fp<SecurityHeadersOptions>(
  async (app, { tls }) => {
    app.addHook('onRequest', async (request, reply) => {
      reply.header('x-request-id', request.id);
      reply.header('x-content-type-options', 'nosniff');
      reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
      if (tls) reply.header('strict-transport-security', 'max-age=31536000');
    });
  },
  { name: 'security-headers' },
);

export interface AdmissionOptions {
  tokens: TokenService;
  rateLimiter: RateLimiter;
  lifecycle: Lifecycle;
}

/** Accept must allow JSON (problem+json included) or anything; otherwise 406. */
export function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept.split(',').some((range) => {
    const [type = '', ...params] = range.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q !== undefined && Number(q.slice(2)) === 0) return false;
    const media = type.trim();
    return media === '*/*' || media === 'application/*' || media === 'application/json' || media.endsWith('+json');
  });
}

const admit: FastifyPluginAsync<AdmissionOptions> = async (app, { tokens, rateLimiter, lifecycle }) => {
  app.decorateRequest('caller', null);
  app.addHook('onRequest', async (request, reply) => {
    if (lifecycle.phase === 'closed') {
      throw new DomainError('service-unavailable', 'The service is shutting down; retry on a new connection.', {
        headers: { 'retry-after': '1', connection: 'close' },
      });
    }
    const api = request.routeOptions.config.api === true;
    // The token is verified once, then the request is counted (per verified caller, else per client
    // address, a bad token included) before anything is refused: refusals count and carry RateLimit-*.
    let refusal: unknown;
    if (api || request.url.startsWith('/trpc/')) {
      try {
        request.caller = await tokens.authenticate(request.headers.authorization);
      } catch (error) {
        refusal = error;
      }
    }
    await rateLimiter.count(request, reply);
    if (api && !acceptsJson(request.headers.accept)) {
      throw new DomainError('not-acceptable', 'This API answers only application/json (and application/problem+json).');
    }
    if (refusal !== undefined) throw refusal;
  });
};

/** Refused while stopping, then authenticated, counted and content-negotiated, in that order. */
export const admission = fp(admit, { name: 'admission', dependencies: ['security-headers'] });
