/**
 * The one JSON body parser of the service (application/json and both patch media types), on
 * top of Fastify's own (prototype-poisoning protection included). It adds what Fastify's does
 * not: bounds on nesting and on the members of each object and array, checked before parsing, so
 * no later step (validation, patching, fingerprints) can be driven into a stack overflow or into
 * work out of proportion to any valid body; and an empty body on an operation that
 * takes none (`POST /orders/{id}/confirm` with `Content-Type: application/json`) is no body.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '../errors/problems.ts';

/** The deepest nesting of arrays and objects a body may have (an order document needs 4). */
export const MAX_JSON_DEPTH = 32;

const JSON_MEDIA_TYPES = ['application/json', 'application/merge-patch+json', 'application/json-patch+json'];

/**
 * The most members an object, or entries an array, of a JSON body may have. No operation takes
 * more than a few hundred (a JSON Patch at most 200 operations, an order 100 items); beyond that
 * each member only costs parsing and validation work, and 70,000 unknown fields once kept an
 * instance busy most of a second per request (issue 21).
 */
export const MAX_JSON_MEMBERS = 1000;

/**
 * The first bound JSON text breaks, in one pass over the text before anything parses it
 * (brackets, commas and colons inside strings do not count): nesting deeper than MAX_JSON_DEPTH
 * (the top level is depth 1), or an object or array of more than MAX_JSON_MEMBERS members,
 * named by its dotted path (`(body)` for the top level; keys as written, escapes and all).
 */
function boundBroken(text: string): DomainError | undefined {
  // Per level: commas so far (its members - 1), whether it is an object, and where the key of its
  // current member starts and ends in the text. Index 0 is outside any value.
  const commas = new Int32Array(MAX_JSON_DEPTH + 2);
  const isObject = new Uint8Array(MAX_JSON_DEPTH + 2);
  const keyStart = new Int32Array(MAX_JSON_DEPTH + 2);
  const keyEnd = new Int32Array(MAX_JSON_DEPTH + 2);
  let depth = 0;
  let inString = false;
  let stringStart = 0;
  let stringEnd = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index++; // a backslash escapes the next character
      else if (code === 0x22) {
        inString = false;
        stringEnd = index;
      }
    } else if (code === 0x22) {
      inString = true;
      stringStart = index + 1;
    } else if (code === 0x5b || code === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) {
        return new DomainError('malformed-request', `The JSON nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`);
      }
      commas[depth] = 0;
      isObject[depth] = code === 0x7b ? 1 : 0;
    } else if (code === 0x5d || code === 0x7d) {
      depth--;
    } else if (code === 0x2c && depth > 0) {
      const separators = (commas[depth] ?? 0) + 1;
      commas[depth] = separators;
      // n commas separate n + 1 members.
      if (separators >= MAX_JSON_MEMBERS) return tooManyMembers(text, depth, { commas, isObject, keyStart, keyEnd });
    } else if (code === 0x3a) {
      keyStart[depth] = stringStart;
      keyEnd[depth] = stringEnd;
    }
  }
  return undefined;
}

interface ScanLevels {
  commas: Int32Array;
  isObject: Uint8Array;
  keyStart: Int32Array;
  keyEnd: Int32Array;
}

/** 422 naming the container at `depth`: the key or index of each level above it. */
function tooManyMembers(text: string, depth: number, levels: ScanLevels): DomainError {
  const path: string[] = [];
  for (let level = 1; level < depth; level++) {
    path.push(levels.isObject[level] ? text.slice(levels.keyStart[level], levels.keyEnd[level]) : String(levels.commas[level]));
  }
  const field = path.join('.') || '(body)';
  const message = `must have at most ${MAX_JSON_MEMBERS} members`;
  return new DomainError('validation-error', `The JSON object or array at ${field} has more than ${MAX_JSON_MEMBERS} members.`, {
    errors: [{ field, message }],
  });
}

/** The JSON text's bounds (depth 400, members 422), wherever it arrives (body, `/trpc` input). */
function assertJsonBounds(text: string): void {
  const broken = boundBroken(text);
  if (broken) throw broken;
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
    const broken = boundBroken(body);
    if (broken) {
      done(broken, undefined);
      return;
    }
    parseJson(request, body, done);
  });
  // tRPC's plugin reads its bodies itself (and GET inputs from the query): same bounds there.
  app.addHook('preHandler', async (request) => {
    if (!request.url.startsWith('/trpc/')) return;
    if (typeof request.body === 'string') assertJsonBounds(request.body);
    const input = (request.query as Record<string, unknown> | undefined)?.input;
    if (typeof input === 'string') assertJsonBounds(input);
  });
}
