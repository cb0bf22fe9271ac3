/**
 * Cross-origin requests from the browser origins a deployment names (`CORS_ORIGINS`,
 * docs/operations.md#configuration): none by default. Preflights are answered in the plugin's
 * onRequest hook, before routing and authentication.
 */
import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

export interface CorsPolicyOptions {
  /** `'*'`: any origin; a list: those; empty: no CORS headers at all. */
  origins: readonly string[] | '*';
}

/**
 * A CORS preflight is an OPTIONS carrying both Origin and Access-Control-Request-Method (Fetch
 * standard, "CORS-preflight request"). Any other OPTIONS is a plain one and is routed, answered
 * as without CORS: 204 with `Allow`, or a problem (docs/api.md#http-refusals). @fastify/cors's
 * strict mode answered it 400 `text/plain` "Invalid Preflight Request" (issue 36 item 14).
 */
const isPreflight = (request: FastifyRequest): boolean =>
  // Present and not empty: @fastify/cors's strict check treats an empty header as missing, and
  // answers the preflight it was handed 400 `text/plain`.
  request.method === 'OPTIONS' && Boolean(request.headers.origin) && Boolean(request.headers['access-control-request-method']);

export const corsPolicy = fp<CorsPolicyOptions>(
  async (app, { origins }) => {
    if (origins !== '*' && origins.length === 0) return;
    const options: FastifyCorsOptions = {
      origin: origins === '*' ? true : [...origins],
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      allowedHeaders: ['Authorization', 'Content-Type', 'If-Match', 'If-None-Match', 'If-Modified-Since', 'Idempotency-Key', 'X-Request-Id'],
      exposedHeaders: ['ETag', 'Last-Modified', 'Location', 'Link', 'X-Request-Id', 'Allow', 'Accept-Post', 'Accept-Patch', 'WWW-Authenticate', 'Retry-After', 'Idempotent-Replayed'],
      maxAge: 600,
    };
    const plainOptions: FastifyCorsOptions = { ...options, preflight: false };
    // The plugin's public per-request seam: a preflight gets the preflight answer, anything else
    // only the CORS headers of its own answer.
    await app.register(cors, { delegator: (request, done) => done(null, isPreflight(request) ? options : plainOptions) });
  },
  { name: 'cors-policy' },
);
