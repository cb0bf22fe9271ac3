/**
 * Cross-origin requests from the browser origins a deployment names (`CORS_ORIGINS`,
 * docs/operations.md#configuration): none by default. Preflights are answered in the plugin's
 * onRequest hook, before routing and authentication.
 */
import cors from '@fastify/cors';
import fp from 'fastify-plugin';

export interface CorsPolicyOptions {
  /** `'*'`: any origin; a list: those; empty: no CORS headers at all. */
  origins: readonly string[] | '*';
}

export const corsPolicy = fp<CorsPolicyOptions>(
  async (app, { origins }) => {
    if (origins !== '*' && origins.length === 0) return;
    await app.register(cors, {
      origin: origins === '*' ? true : [...origins],
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      allowedHeaders: ['Authorization', 'Content-Type', 'If-Match', 'If-None-Match', 'If-Modified-Since', 'Idempotency-Key', 'X-Request-Id'],
      exposedHeaders: ['ETag', 'Last-Modified', 'Location', 'Link', 'X-Request-Id', 'Allow', 'Accept-Post', 'Accept-Patch', 'WWW-Authenticate', 'Retry-After', 'Idempotent-Replayed'],
      maxAge: 600,
    });
  },
  { name: 'cors-policy' },
);
