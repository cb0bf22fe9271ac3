/**
 * The REST facade's handler: one Fastify route per entry of the route table (rest-routes.ts). It
 * holds no business logic: it turns a request into procedure input, calls the procedure through
 * the router's public caller with the context /trpc gets too, and turns the output into a
 * response with the right status and headers (conditional-requests.ts for ETag and 304).
 */
import type { AnyRouter } from '@trpc/server';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { Db } from '../db/client.ts';
import { DomainError } from '../errors/problems.ts';
import { toDomainError } from '../errors/to-domain-error.ts';
import { createContext, type Context, type IdempotencySettings } from '../trpc/context.ts';
import type { Settings } from '../lib/settings.ts';
import type { CursorCodec } from '../lib/cursors.ts';
import type { RestMeta } from '../trpc/meta.ts';
import { createCallerFactory } from '../trpc/trpc.ts';
import { notModified, sendValidators } from './conditional-requests.ts';
import { API_PREFIX } from '../lib/api-paths.ts';
import { deepObjectMember, refuseUnknownQueryParameters } from './query-parameters.ts';
import { restRoutes, type ParamKind, type RestRoute } from './rest-routes.ts';

const PREFIXES = [API_PREFIX, '/api'];

const CACHE_CONTROL: Record<NonNullable<RestMeta['cache']>, string> = {
  public: 'public, max-age=60',
  private: 'private, max-age=0, must-revalidate',
  'no-store': 'no-store',
};

export interface RestAdapterOptions {
  router: AnyRouter;
  db: Db;
  idempotency?: IdempotencySettings;
  cursors?: CursorCodec;
  /** The modules' settings (server/lib/settings.ts). */
  settings?: Settings;
}

type CallProcedure = (ctx: Context, input: unknown) => Promise<unknown>;

/**
 * Calls the procedure at a dotted path through tRPC's public server-side caller:
 * `procedureCaller(router, 'products.get')(ctx, input)` is `createCaller(ctx).products.get(input)`.
 */
function procedureCaller(router: AnyRouter, path: string): CallProcedure {
  const createCaller = createCallerFactory(router);
  const names = path.split('.');
  return (ctx, input) => {
    let node: unknown = createCaller(ctx);
    for (const name of names) node = (node as Record<string, unknown>)[name];
    return (node as (input: unknown) => Promise<unknown>)(input);
  };
}

function badParam(field: string, message: string): DomainError {
  return new DomainError('malformed-request', `Parameter "${field}" ${message}.`, { errors: [{ field, message }] });
}

/**
 * A list parameter (docs/api.md#list-parameters), repeated (`expand=a&expand=b`, OpenAPI's
 * `style: form, explode: true`) or comma-separated (`expand=a,b`), or both: its values in order.
 * An empty value, or one outside a closed set of `choices`, is a malformed parameter (400, as an
 * integer parameter that is no integer), naming the values it takes.
 */
function listValues(field: string, raw: unknown, choices: readonly string[] | undefined): string[] {
  const given = Array.isArray(raw) ? raw : [raw];
  const values = given.flatMap((value) => (typeof value === 'string' ? value.split(',') : ['']));
  const takes = choices === undefined ? 'non-empty values' : choices.join(', ');
  if (values.some((value) => value === '' || (choices !== undefined && !choices.includes(value)))) {
    throw badParam(field, `must be a comma list (or repeated parameter) of ${takes}`);
  }
  return values;
}

/**
 * A boolean is `true` or `false`. A well-formed integer of any length passes on as a number: out of range it fails the
 * schema's bounds (422; in a path, 404: it names nothing), never the format check (400).
 */
function coerce(field: string, raw: unknown, kind: ParamKind): unknown {
  if (typeof raw !== 'string') throw badParam(field, 'must be given once');
  if (kind === 'boolean') {
    // Exactly these two spellings (docs/api.md#list-parameters): `1`, `yes` or `TRUE` would be guesses.
    if (raw === 'true' || raw === 'false') return raw === 'true';
    throw badParam(field, 'must be true or false');
  }
  if (kind !== 'int') return raw;
  if (!/^-?\d+$/.test(raw)) throw badParam(field, 'must be an integer');
  return Number(raw);
}

/**
 * The members of deepObject parameter `name` (`name[key]=value`), or undefined when none is
 * given. `name` with a value is no member (400), nor is a member given twice. `name=` with
 * nothing is how generators serialize an empty object (schemathesis does, with no example to
 * copy since the filters have none: docs/api.md#the-openapi-document): no member, no filter.
 */
function deepObjectInput(name: string, query: Record<string, unknown>): Record<string, unknown> | undefined {
  if (query[name] !== undefined && query[name] !== '') throw badParam(name, `must be given as ${name}[key]=value`);
  let members: Record<string, unknown> | undefined;
  for (const [parameter, raw] of Object.entries(query)) {
    const member = deepObjectMember(parameter);
    if (member?.name !== name) continue;
    // A key the object cannot hold as data would be lost, and the filter with it.
    if (member.key === '__proto__') throw badParam(parameter, 'names a reserved key');
    members ??= {};
    members[member.key] = coerce(parameter, raw, 'string');
  }
  return members;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const mediaType = (contentType: string | undefined) => contentType?.split(';')[0]?.trim().toLowerCase();

function buildInput(route: RestRoute, request: FastifyRequest): Record<string, unknown> {
  // The URL before the body: a parameter the operation does not take is refused first, whatever the body.
  refuseUnknownQueryParameters(request, route.queryParams);
  const input: Record<string, unknown> = {};
  if (route.hasBody) {
    const media = mediaType(request.headers['content-type']);
    if (media === undefined || !route.contentTypes.includes(media)) {
      const accepted = route.contentTypes.join(', ');
      throw new DomainError('unsupported-media-type', `This operation accepts a body of type ${accepted}.`, {
        headers: { [route.method === 'PATCH' ? 'accept-patch' : 'accept-post']: accepted },
      });
    }
    if (route.rest.patch) {
      input.format = media === 'application/json-patch+json' ? 'json-patch' : 'merge-patch';
      input.document = request.body;
    } else if (!isPlainObject(request.body)) {
      throw new DomainError('validation-error', 'The body must be a JSON object.', {
        errors: [{ field: '(body)', message: 'must be a JSON object' }],
      });
    } else {
      Object.assign(input, request.body);
    }
  } else if (route.queryParams.size > 0) {
    const query = request.query as Record<string, unknown>;
    for (const [key, kind] of route.queryParams) {
      if (kind === 'deepObject') {
        const members = deepObjectInput(key, query);
        if (members !== undefined) input[key] = members;
        continue;
      }
      if (query[key] === undefined) continue;
      input[key] = kind === 'list' ? listValues(key, query[key], route.listChoices.get(key)) : coerce(key, query[key], kind);
    }
  }
  // Path parameters win over body fields of the same name (a PUT body's `id` is read-only).
  const params = request.params as Record<string, string>;
  for (const [key, kind] of route.pathParams) input[key] = coerce(key, params[key], kind);
  return input;
}

function fillTemplate(template: string, output: unknown): string {
  const values = isPlainObject(output) ? output : {};
  return template.replace(/\{(\w+)\}/g, (_m, key: string) => encodeURIComponent(String(values[key])));
}

interface ListOutput {
  page: number;
  limit: number;
  next_cursor: string | null;
  prev_cursor: string | null;
}

/**
 * RFC 8288 links to the neighbouring pages, through their cursors (keyset: as fast deep down as on
 * page 1). A page asked for by number past the end has no row to start a cursor from: its
 * `prev` is the page before, by number.
 */
function linkHeader(request: FastifyRequest, output: ListOutput): string | undefined {
  const [path = '', search = ''] = request.url.split('?');
  const query = new URLSearchParams(search);
  const links: string[] = [];
  const at = (place: { cursor: string } | { page: number }) => {
    const params = new URLSearchParams(query);
    params.delete('page');
    params.delete('cursor');
    if ('cursor' in place) params.set('cursor', place.cursor);
    else params.set('page', String(place.page));
    params.set('limit', String(output.limit));
    return `<${path}?${params.toString()}>`;
  };
  if (output.next_cursor !== null) links.push(`${at({ cursor: output.next_cursor })}; rel="next"`);
  if (output.prev_cursor !== null) links.push(`${at({ cursor: output.prev_cursor })}; rel="prev"`);
  else if (output.page > 1 && !query.has('cursor')) links.push(`${at({ page: output.page - 1 })}; rel="prev"`);
  return links.length > 0 ? links.join(', ') : undefined;
}

export function registerRestRoutes(app: FastifyInstance, options: RestAdapterOptions): void {
  const routes = restRoutes(options.router);
  const { db, idempotency, cursors, settings } = options;
  const contextDeps = { db, ...(idempotency ? { idempotency } : {}), ...(cursors ? { cursors } : {}), ...(settings ? { settings } : {}) };

  const handlerFor = (route: RestRoute) => {
    const call = procedureCaller(options.router, route.procedurePath);
    const isRead = route.method === 'GET';
    const successStatus = route.rest.status ?? 200;
    const cacheControl = isRead ? CACHE_CONTROL[route.rest.cache ?? 'private'] : 'no-store';

    return async (request: FastifyRequest, reply: FastifyReply) => {
      const input = buildInput(route, request);
      const ctx = createContext(request, contextDeps);
      let output: unknown;
      try {
        output = await call(ctx, input);
      } catch (error) {
        // The bag's headers go on every answer, as on /trpc; the problem's own headers come after.
        reply.headers(ctx.response.headers);
        const domain = toDomainError(error);
        // A path parameter that is an integer but out of range names no resource.
        if (domain.slug === 'validation-error' && domain.errors?.some((e) => route.pathParams.has(e.field))) {
          throw new DomainError('not-found', 'The resource does not exist.');
        }
        throw domain;
      }

      // What the procedure layer asked for first, so the facade's own headers have the last word.
      reply.headers(ctx.response.headers);
      // A replayed creation (Idempotency-Key) answers 200: nothing was created by this request.
      // Its Location and ETag come from the stored output, so they equal the first answer's.
      const status = ctx.response.replayed ? 200 : successStatus;
      reply.code(status).header('cache-control', cacheControl);
      if (status === 204) return reply.send();
      if (route.rest.location) reply.header('location', API_PREFIX + fillTemplate(route.rest.location, output));

      // The body in the output schema's field order; the ETag is the tag of these bytes.
      const body = JSON.stringify(output);
      const validators = sendValidators(reply, output, body, route.rest.kind);
      if (route.rest.kind === 'list' && isPlainObject(output)) {
        const link = linkHeader(request, output as unknown as ListOutput);
        if (link) reply.header('link', link);
      }
      if (isRead && notModified(request, validators)) return reply.code(304).send();
      return reply.header('content-type', 'application/json; charset=utf-8').send(body);
    };
  };

  const methodsByUrl = new Map<string, Set<string>>();
  for (const route of routes) {
    const handler = handlerFor(route);
    for (const prefix of PREFIXES) {
      const url = prefix + route.path.replace(/\{(\w+)\}/g, ':$1');
      const accepts = route.hasBody ? route.contentTypes.join(', ') : undefined;
      app.route({ method: route.method, url, handler, config: { api: true, ...(accepts ? { accepts } : {}) } });
      const methods = methodsByUrl.get(url) ?? new Set<string>();
      methods.add(route.method);
      if (route.method === 'GET') methods.add('HEAD');
      methodsByUrl.set(url, methods);
    }
  }
  registerMethodFallbacks(app, methodsByUrl);
}

/**
 * 405 with `Allow` for every method a known path does not support, whatever the method (the
 * app registers every method Node parses); OPTIONS answers 204 + Allow.
 */
export function registerMethodFallbacks(app: FastifyInstance, methodsByUrl: Map<string, Set<string>>): void {
  for (const [url, methods] of methodsByUrl) {
    const allow = [...methods, 'OPTIONS'].join(', ');
    const missing = app.supportedMethods.filter((m) => !methods.has(m)) as HTTPMethods[];
    if (missing.length === 0) continue;
    app.route({
      method: missing,
      url,
      config: { api: true },
      handler: async (request, reply) => {
        if (request.method === 'OPTIONS') return reply.code(204).header('allow', allow).send();
        throw new DomainError('method-not-allowed', `${request.method} is not supported on this path. Allowed: ${allow}.`, {
          headers: { allow },
        });
      },
    });
  }
}
