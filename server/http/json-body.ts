/**
 * The one JSON body parser of the service (application/json and both patch media types), on
 * top of Fastify's own (prototype-poisoning protection included). It adds what Fastify's does
 * not: a bound on nesting, checked at parse time, so no later step (validation, patching,
 * fingerprints) can be driven into a stack overflow; and an empty body on an operation that
 * takes none (`POST /orders/{id}/confirm` with `Content-Type: application/json`) is no body.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '../errors/problems.ts';

/** The deepest nesting of arrays and objects a body may have (an order document needs 4). */
export const MAX_JSON_DEPTH = 32;

const JSON_MEDIA_TYPES = ['application/json', 'application/merge-patch+json', 'application/json-patch+json'];

/**
 * Whether JSON text nests arrays/objects deeper than `limit` (the top level is depth 1). One
 * pass over the text, before anything parses it; brackets inside strings do not count.
 */
function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index++; // a backslash escapes the next character
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x5b || code === 0x7b) {
      if (++depth > limit) return true;
    } else if (code === 0x5d || code === 0x7d) {
      depth--;
    }
  }
  return false;
}

/** 400 for JSON text nested deeper than MAX_JSON_DEPTH, wherever it arrives (body, `/trpc` input). */
function assertJsonDepth(text: string): void {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new DomainError('malformed-request', `The JSON nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`);
  }
}

/** Routes that take a body say which media types (`config.accepts`); others take none. */
const takesBody = (request: FastifyRequest): boolean => request.routeOptions.config?.accepts !== undefined || request.url.startsWith('/trpc');

export function registerJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // JSON only: no text/plain bodies.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  // Patch documents are JSON too; each route still checks the types it accepts (415 otherwise).
  app.addContentTypeParser(JSON_MEDIA_TYPES, { parseAs: 'string' }, (request, body: string, done) => {
    if (body === '' && !takesBody(request)) {
      done(null, undefined);
      return;
    }
    try {
      assertJsonDepth(body);
    } catch (error) {
      done(error as DomainError, undefined);
      return;
    }
    parseJson(request, body, done);
  });
  // tRPC's plugin reads its bodies itself (and GET inputs from the query): same bound there.
  app.addHook('preHandler', async (request) => {
    if (!request.url.startsWith('/trpc/')) return;
    if (typeof request.body === 'string') assertJsonDepth(request.body);
    const input = (request.query as Record<string, unknown> | undefined)?.input;
    if (typeof input === 'string') assertJsonDepth(input);
  });
}
