/**
 * The OpenAPI 3.1 document: trpc-to-openapi generates paths and schemas from the procedures;
 * this module completes what it cannot know (success statuses, headers, problem responses,
 * health) from the same `meta.rest` the facade answers with, so the document says what the
 * service really does.
 */
import type { AnyRouter } from '@trpc/server';
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { problemTypes, type ProblemSlug } from '../errors/problems.ts';
import { API_PREFIX } from '../lib/api-paths.ts';
import { IDEMPOTENCY_HEADER, isCreatingOperation } from '../trpc/idempotency.ts';
import { restRoutes } from './rest-routes.ts';

type Json = Record<string, unknown>;

const problemRef = { $ref: '#/components/schemas/Problem' };
const header = (description: string, schema: Json = { type: 'string' }) => ({ description, schema });

const commonHeaders = {
  'X-Request-Id': header('Echoes or assigns the request id; problems repeat it as `request_id`.'),
};

function problemResponse(slugs: ProblemSlug[]): Json {
  const titles = slugs.map((slug) => `\`/problems/${slug}\`: ${problemTypes[slug].title}`).join('; ');
  return {
    description: titles,
    headers: commonHeaders,
    content: { 'application/problem+json': { schema: problemRef } },
  };
}

export function buildOpenApiDocument(router: AnyRouter, version: string): OpenAPIObject {
  const document = generateOpenApiDocument(router, {
    title: 'order-service',
    description:
      'Order handling: products, users, orders, payments and fulfillments. Every error is an RFC 9457 problem ' +
      '(`application/problem+json`). `/api/<resource>` is an alias of `/api/v1/<resource>`.',
    version,
    baseUrl: API_PREFIX,
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'HS256 access token.' },
    },
  });

  const doc = document as unknown as Json & { paths: Record<string, Record<string, unknown>>; components: Json };
  for (const route of restRoutes(router)) {
    const operation = doc.paths[route.path]?.[route.method.toLowerCase()] as Json | undefined;
    if (!operation) continue;
    const generated = (operation.responses ?? {}) as Record<string, Json>;
    const success = generated['200'] ?? { description: 'Success' };
    const status = route.rest.status ?? 200;
    const isRead = route.method === 'GET';
    const responses: Record<string, Json> = {};

    const headers: Json = { ...commonHeaders };
    if (status !== 204) {
      headers.ETag = header('Strong entity tag of the representation.');
      if (route.rest.kind === 'item') headers['Last-Modified'] = header('Time of the last change (HTTP date).');
      if (route.rest.kind === 'list') headers.Link = header('RFC 8288 links with rel="next" / rel="prev".');
    }
    headers['Cache-Control'] = header('Caching policy.');
    if (route.rest.location) headers.Location = header('Path of the created resource.');
    responses[String(status)] =
      status === 204
        ? { description: 'Done; no body.', headers }
        : { description: status === 201 ? 'Created.' : 'Success.', headers, content: success.content };
    const creating = isCreatingOperation({ openapi: { method: route.method }, rest: route.rest });
    if (creating) {
      // A retried request with its Idempotency-Key: the first answer's body, Location and ETag.
      responses['200'] = {
        description: `Replayed: a request with this ${IDEMPOTENCY_HEADER} already succeeded; its stored result, nothing created again.`,
        headers: { ...headers, 'Idempotent-Replayed': header('Present (`true`) on a replayed answer.', { type: 'string', enum: ['true'] }) },
        content: success.content,
      };
    }
    if (isRead) responses['304'] = { description: 'Not modified (If-None-Match / If-Modified-Since).', headers: { ETag: header('Entity tag.') } };

    const slugs = new Set<ProblemSlug>(['malformed-request', 'not-acceptable', 'rate-limited', 'internal-error']);
    if (route.pathParams.size > 0) slugs.add('not-found');
    if (!isRead) slugs.add('validation-error');
    if (route.hasBody) {
      slugs.add('payload-too-large');
      slugs.add('unsupported-media-type');
    }
    // An invalid token is refused even where none is needed; only protected operations forbid.
    slugs.add('unauthorized');
    if (route.protect) slugs.add('forbidden');
    if (isRead && route.queryParams.size > 0) slugs.add('validation-error');
    if (!isRead && route.pathParams.size > 0) slugs.add('precondition-failed');
    for (const slug of route.rest.problems ?? []) slugs.add(slug);
    if (creating) {
      slugs.add('idempotency-key-in-use');
      slugs.add('idempotency-key-mismatch');
    }

    const byStatus = new Map<number, ProblemSlug[]>();
    for (const slug of slugs) {
      const code: number = problemTypes[slug].status;
      byStatus.set(code, [...(byStatus.get(code) ?? []), slug]);
    }
    for (const [code, list] of [...byStatus].sort(([a], [b]) => a - b)) responses[String(code)] = problemResponse(list);
    operation.responses = responses;

    if (route.method === 'PUT') {
      // GET-modify-PUT: the path carries the id, and the body may carry it back (ignored).
      const body = (operation.requestBody as { content?: Record<string, { schema?: Json }> } | undefined)?.content?.['application/json']?.schema;
      const properties = body?.properties as Json | undefined;
      if (properties) properties.id = { description: 'Read-only; ignored (the path names the resource).' };
    }
    if (route.rest.patch) {
      const mergePatchSchema = mergePatchSchemaOf(putBodySchema(doc.paths[route.path]));
      operation.requestBody = {
        required: true,
        description: 'A merge patch (RFC 7396; `application/json` is read as one) or a JSON Patch (RFC 6902). The patched document must be a valid PUT body.',
        content: {
          'application/merge-patch+json': { schema: mergePatchSchema },
          'application/json': { schema: mergePatchSchema },
          'application/json-patch+json': { schema: jsonPatchSchema },
        },
      };
    }
    if (route.hasBody || (route.method === 'POST' && route.pathParams.size > 0)) {
      const params = (operation.parameters as Json[] | undefined) ?? [];
      if (['PUT', 'PATCH', 'DELETE'].includes(route.method) || route.pathParams.size > 0) params.push(ifMatchParameter);
      operation.parameters = params;
    } else if (route.method === 'DELETE') {
      operation.parameters = [
        ...((operation.parameters as Json[] | undefined) ?? []),
        ifMatchParameter,
      ];
    } else if (isRead) {
      operation.parameters = [
        ...((operation.parameters as Json[] | undefined) ?? []),
        ifNoneMatchParameter,
        ifModifiedSinceParameter,
      ];
    }
    if (creating) operation.parameters = [...((operation.parameters as Json[] | undefined) ?? []), idempotencyKeyParameter];
  }

  // trpc-to-openapi's own error shapes describe nothing this service answers.
  const generatedSchemas = Object.fromEntries(
    Object.entries((doc.components.schemas as Json | undefined) ?? {}).filter(([name]) => !name.startsWith('error.')),
  );
  doc.components.schemas = {
    ...generatedSchemas,
    Problem: {
      type: 'object',
      description: 'RFC 9457 problem details.',
      required: ['type', 'title', 'status', 'detail'],
      properties: {
        type: { type: 'string', description: 'URI reference `/problems/<slug>`; GET it for an explanation.', example: '/problems/validation-error' },
        title: { type: 'string' },
        status: { type: 'integer' },
        detail: { type: 'string' },
        instance: { type: 'string', description: 'Path of the request that failed.' },
        request_id: { type: 'string' },
        errors: {
          type: 'array',
          items: {
            type: 'object',
            required: ['field', 'message'],
            properties: { field: { type: 'string', example: 'items.0.quantity' }, message: { type: 'string' } },
          },
        },
      },
    },
  };

  doc.servers = [{ url: API_PREFIX, description: 'Current version (/api is an alias).' }];
  // The health check is unversioned: its path item has its own server, `/api`.
  doc.paths['/health'] = {
    servers: [{ url: '/api' }],
    get: {
      operationId: 'health',
      tags: ['health'],
      summary: 'Health check (GET /api/health)',
      responses: {
        '200': { description: 'Healthy.', content: { 'application/json': { schema: healthSchema } } },
        '406': problemResponse(['not-acceptable']),
        '503': { description: 'The database does not answer.', content: { 'application/json': { schema: healthSchema } } },
      },
    },
  };
  return document;
}

/** The JSON body schema of the PUT beside a PATCH: what a patch must leave. */
function putBodySchema(pathItem: Record<string, unknown> | undefined): Json | undefined {
  const put = pathItem?.put as { requestBody?: { content?: Record<string, { schema?: Json }> } } | undefined;
  return put?.requestBody?.content?.['application/json']?.schema;
}

/**
 * RFC 7396: the fields of the PUT body, each optional (absent = unchanged); `null` only where
 * the field is nullable (on a required field it is refused with 422); unknown members are
 * refused (422), as in PUT. Arrays replace the whole array, so their items are as in PUT.
 */
function mergePatchSchemaOf(put: Json | undefined): Json {
  const description = 'Fields to change; null sets a nullable field to null; an array replaces the whole array.';
  if (!put?.properties) return { type: 'object', description };
  const optional = structuredClone(put);
  delete optional.required;
  return { ...optional, description, additionalProperties: false };
}

/** RFC 6901 JSON Pointer: empty (the whole document) or `/`-separated tokens, `~` only as ~0 or ~1. */
const jsonPointer = (description: string): Json => ({ type: 'string', pattern: '^(/([^~/]|~[01])*)*$', description });

/**
 * RFC 6902. Members an operation does not define are ignored (RFC 6902 section 4). A path that
 * does not exist or a failed `test` answers 409; a result that is not a valid order 422.
 */
const jsonPatchSchema = {
  type: 'array',
  description: 'JSON Patch operations, applied in order; all or none.',
  items: {
    oneOf: [
      {
        type: 'object',
        required: ['op', 'path', 'value'],
        properties: {
          op: { type: 'string', enum: ['add', 'replace', 'test'] },
          path: jsonPointer('JSON Pointer, e.g. /address or /items/0/quantity (/items/- appends).'),
          value: { description: 'Any JSON value, null included.' },
        },
      },
      {
        type: 'object',
        required: ['op', 'path'],
        properties: { op: { type: 'string', enum: ['remove'] }, path: jsonPointer('JSON Pointer of the member to remove.') },
      },
      {
        type: 'object',
        required: ['op', 'from', 'path'],
        properties: {
          op: { type: 'string', enum: ['move', 'copy'] },
          from: jsonPointer('JSON Pointer of the value to move or copy.'),
          path: jsonPointer('JSON Pointer of the target.'),
        },
      },
    ],
  },
};

/**
 * Conditional request headers (RFC 9110 section 13.1). `If-Match` must be `*` or a list of entity
 * tags; one that is not can never match, so the write is refused with 412. `If-None-Match` and
 * `If-Modified-Since` with a value that is not a tag list / HTTP date match nothing and are
 * ignored (RFC 9110 sections 13.1.2 and 13.1.3).
 */
const ENTITY_TAG = '(W/)?"[\\x21\\x23-\\x7E]*"';
const ifMatchParameter = {
  name: 'If-Match',
  in: 'header',
  required: false,
  schema: { type: 'string', pattern: `^(\\*|${ENTITY_TAG}([ \\t]*,[ \\t]*${ENTITY_TAG})*)$` },
  description: 'Entity tag from a previous read (or `*`); a stale or malformed one answers 412.',
};
/** CONTRACT section 8 (server/trpc/idempotency.ts). */
const idempotencyKeyParameter = {
  name: IDEMPOTENCY_HEADER,
  in: 'header',
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]{1,255}$' },
  description:
    'Makes a retry safe: the first request with a key runs once; the same key with the same request answers its stored ' +
    'result (200, `Idempotent-Replayed: true`); with another request 422; while the first still runs, the retry waits for ' +
    'it (409 `idempotency-key-in-use` with `Retry-After` after 10 s). Scoped to the caller, kept 24 hours; a failed attempt leaves the key free.',
};
const ifNoneMatchParameter = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  schema: { type: 'string', description: '`*` or entity tags; a value that is no tag list matches nothing.' },
  description: 'Entity tags of representations the client has; when one is current the answer is 304. Wins over If-Modified-Since.',
};
const ifModifiedSinceParameter = {
  name: 'If-Modified-Since',
  in: 'header',
  required: false,
  schema: { type: 'string', description: 'HTTP date; a value that is not one is ignored.' },
  description: 'When the resource has not changed since this date the answer is 304.',
};

const healthSchema = {
  type: 'object',
  required: ['status', 'checks'],
  properties: {
    status: { type: 'string', enum: ['ok', 'unavailable'] },
    checks: { type: 'object', properties: { database: { type: 'string', enum: ['ok', 'unavailable'] } } },
  },
};
