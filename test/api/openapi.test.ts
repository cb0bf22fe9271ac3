/**
 * The OpenAPI document says what the service does: it is a valid OpenAPI 3.1 document with whole
 * paths under one server, its security follows each procedure's policy, every schema and example
 * in it is exact, and every operation in it, called for real, answers each documented status
 * with a body that matches the documented schema. The walk iterates the served document and takes
 * how to call each operation from its module's file in test/operations/; an operation without a
 * walk there fails, so a new endpoint cannot be added without being walked here, and a documented
 * status that no probe reaches fails too. The OAuth endpoints (plain routes described by
 * server/oauth/openapi-paths.ts) are walked the same way: every grant type, form and JSON bodies,
 * their RFC 6749 error bodies.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { isPublic, SCOPES } from '../../server/auth/policy.ts';
import { buildApp } from '../../server/app.ts';
import type { Database } from '../../server/db/client.ts';
import { GRANT_TYPES } from '../../server/db/schema.ts';
import { ORDER_STATUSES } from '../../server/modules/orders/orders.table.ts';
import { problemCatalogue, type ProblemSlug } from '../../server/errors/problems.ts';
import { eventTypes } from '../../server/events/catalogue.ts';
import { restRoutes } from '../../server/http/rest-routes.ts';
import { API_PREFIX } from '../../server/lib/api-paths.ts';
import { createCode } from '../../server/oauth/codes.ts';
import { REVOKE_PARAMETERS, TOKEN_PARAMETERS } from '../../server/oauth/request-schemas.ts';
import { appRouter } from '../../server/router.ts';
import { createTestApp, TEST_PASSWORD } from '../helpers/app.ts';
import { REDIRECT_URI } from '../helpers/oauth.ts';
import { type Call, loadOperations } from '../helpers/operations.ts';
import { operationsContext, UNKNOWN_ID } from '../helpers/operations-context.ts';

type JsonSchema = Record<string, unknown>;

interface MediaType {
  schema?: JsonSchema;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}

interface ResponseObject {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, MediaType>;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
}

type SecurityRequirement = Record<string, string[]>;

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: { required?: boolean; content: Record<string, MediaType> };
  responses: Record<string, ResponseObject>;
  servers?: unknown[];
  security?: SecurityRequirement[];
}

interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string; contact?: Record<string, string>; license?: Record<string, string> };
  servers?: { url: string }[];
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, unknown> & { servers?: unknown[] }>;
  components: {
    schemas?: Record<string, JsonSchema>;
    parameters?: Record<string, Parameter>;
    headers?: Record<string, unknown>;
    securitySchemes?: Record<string, JsonSchema>;
  };
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface DocumentedOperation {
  method: Uppercase<(typeof HTTP_METHODS)[number]>;
  /** Path as written in the document, whole (`/api/v1/products/{id}`). */
  path: string;
  operationId: string;
  operation: Operation;
}

// One app and the served document, loaded before the tests are collected so that each
// documented operation gets tests of its own.
const t = await createTestApp();
afterAll(async () => {
  await t.close();
});
const served = await t.request({ method: 'GET', url: '/api/openapi.json' });
const doc = served.json<OpenApiDocument>();
const routes = restRoutes(appRouter);

const operations: DocumentedOperation[] = Object.entries(doc.paths).flatMap(([path, item]) =>
  HTTP_METHODS.filter((m) => item[m] !== undefined).map((m) => {
    const operation = item[m] as Operation;
    return {
      method: m.toUpperCase() as DocumentedOperation['method'],
      path,
      operationId: operation.operationId ?? `(no operationId: ${m.toUpperCase()} ${path})`,
      operation,
    };
  }),
);

const COMPONENT_REF = /^#\/components\/(\w+)\/(.+)$/;
/** A `$ref` to a component, resolved (parameters and headers are referenced). */
function resolve<T>(value: T | { $ref: string }): T {
  if (typeof value !== 'object' || value === null || !('$ref' in value)) return value;
  const [, section = '', name = ''] = COMPONENT_REF.exec(value.$ref) ?? [];
  const components = doc.components as Record<string, Record<string, T> | undefined>;
  const target = components[section]?.[decodeURIComponent(name)];
  if (target === undefined) throw new Error(`unresolved ${value.$ref}`);
  return target;
}
const parametersOf = (op: DocumentedOperation): Parameter[] => (op.operation.parameters ?? []).map((p) => resolve<Parameter>(p));

/**
 * The authorization server's endpoints: plain routes outside `/api`. The token and revocation
 * endpoints answer their errors as RFC 6749 JSON (`application/json`, `error` beside the problem
 * members), not as `application/problem+json`.
 */
const OAUTH_PATHS = ['/oauth/token', '/oauth/revoke', '/.well-known/oauth-authorization-server'];
/** Health and readiness (server/http/health.ts): their 503 is a health body or a problem. */
const HEALTH_PATHS = ['/api/health', '/api/health/ready'];
const answersOAuthErrors = (op: DocumentedOperation) => op.method === 'POST' && OAUTH_PATHS.includes(op.path);
const FORM = 'application/x-www-form-urlencoded';
/** A media type's examples: its `example`, or the values of its `examples`. */
const examplesOf = (media: MediaType): unknown[] =>
  media.example !== undefined ? [media.example] : Object.values(media.examples ?? {}).map((example) => example.value);

// ---------------------------------------------------------------------------------------------
// JSON Schema validation against the document's own schemas.

const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addFormat('date-time', (value: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value) && !Number.isNaN(Date.parse(value)));
ajv.addFormat('email', /^[^\s@]+@[^\s@]+\.[^\s@]+$/);
ajv.addFormat('uri-reference', () => true);
ajv.addFormat('uri', (value: string) => URL.canParse(value));
ajv.addFormat('password', () => true);
ajv.addKeyword('example');

const SCHEMA_REF = '#/components/schemas/';
const componentUri = (name: string) => `urn:openapi:components:schemas:${encodeURIComponent(name)}`;

/** `#/components/schemas/X` becomes the URI under which X is registered with Ajv. */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => {
      if (key === '$ref' && typeof inner === 'string' && inner.startsWith(SCHEMA_REF)) {
        const name = decodeURIComponent(inner.slice(SCHEMA_REF.length)).replace(/~1/g, '/').replace(/~0/g, '~');
        return [key, componentUri(name)];
      }
      return [key, rewriteRefs(inner)];
    }),
  );
}

for (const [name, schema] of Object.entries(doc.components.schemas ?? {})) {
  ajv.addSchema(rewriteRefs(schema) as JsonSchema, componentUri(name));
}

/** The Ajv errors of `value` against a documented schema; `[]` when it validates. */
function schemaErrors(schema: JsonSchema | undefined, value: unknown): unknown[] {
  if (schema === undefined) return ['no schema documented'];
  const validate = ajv.compile(rewriteRefs(schema) as JsonSchema);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/** Every (sub)schema of the document with the path that leads to it. */
function* schemasIn(value: unknown, path: string): Generator<[string, JsonSchema]> {
  if (Array.isArray(value)) {
    for (const [index, inner] of value.entries()) yield* schemasIn(inner, `${path}/${index}`);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const object = value as JsonSchema;
  if (typeof object.type === 'string' || Array.isArray(object.type)) yield [path, object];
  for (const [key, inner] of Object.entries(object)) {
    // Examples are values, not schemas.
    if (key === 'example' || key === 'examples' || key === 'default' || key === 'const' || key === 'enum') continue;
    yield* schemasIn(inner, `${path}/${key}`);
  }
}

// ---------------------------------------------------------------------------------------------
// How to call each operation: every module's file in test/operations/, its tables keyed by
// operationId (test/helpers/operations.ts). A documented operation without a walk fails below.

const ctx = operationsContext(t);
const { read, confidentialClient, publicClient } = ctx;
const { walks, reach, actionPosts, shownOnlyOnCreation, representationsForPut } = await loadOperations(ctx);

/** Problems no single request can cause here, each shown by the test named. */
const REACHED_ELSEWHERE: Partial<Record<ProblemSlug, string>> = {
  'idempotency-key-in-use': 'test/api/idempotency.test.ts ("a wait longer than the bound is 409 idempotency-key-in-use", PostgreSQL)',
};

/** Every POST creates (201 with Location) but those its module declares an action. */
const createsResource = (op: DocumentedOperation) => op.method === 'POST' && actionPosts[op.operationId] === undefined;
const answersLocation = (op: DocumentedOperation) => createsResource(op) || actionPosts[op.operationId]?.location === true;

/**
 * GET operations that have no validator to revalidate (docs/api.md#shape-of-the-api: health is live, `no-store`;
 * the OAuth metadata is kept 5 minutes by `max-age`).
 */
const NOT_CONDITIONAL = new Set(['health', 'health-ready', 'oauth-metadata']);

// ---------------------------------------------------------------------------------------------

const serverUrl = (doc.servers?.[0]?.url ?? '').replace(/\/$/, '');

function urlFor(op: DocumentedOperation, call: Call): string {
  const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const value = call.params?.[name];
    expect(value, `path parameter {${name}} of ${op.operationId} has no value in its walk`).toBeDefined();
    return encodeURIComponent(String(value));
  });
  const query = new URLSearchParams(Object.entries(call.query ?? {}).flatMap(([k, v]): [string, string][] => (Array.isArray(v) ? v.map((item: string) => [k, item]) : [[k, String(v)]]))).toString();
  return `${serverUrl}${path}${query ? `?${query}` : ''}`;
}

const firstContentType = (op: DocumentedOperation) => Object.keys(op.operation.requestBody?.content ?? {})[0] ?? 'application/json';

/** The call only uses what the document declares, with values its schemas accept. */
function expectCallMatchesDocument(op: DocumentedOperation, call: Call): void {
  const parameters = parametersOf(op);
  for (const [name, value] of Object.entries(call.query ?? {})) {
    const parameter = parameters.find((p) => p.in === 'query' && p.name === name);
    expect(parameter, `query parameter ${name} is not documented on ${op.operationId}`).toBeDefined();
    expect(schemaErrors(parameter?.schema, value), `query parameter ${name}`).toEqual([]);
  }
  for (const parameter of parameters.filter((p) => p.in === 'path')) {
    expect(schemaErrors(parameter.schema, call.params?.[parameter.name]), `path parameter ${parameter.name}`).toEqual([]);
  }
  for (const parameter of parameters.filter((p) => p.required && p.in === 'query')) {
    expect(call.query?.[parameter.name], `required query parameter ${parameter.name}`).toBeDefined();
  }
  if (op.operation.requestBody) {
    const contentType = call.contentType ?? firstContentType(op);
    const media = op.operation.requestBody.content[contentType];
    expect(media, `${op.operationId} documents no ${contentType} request body`).toBeDefined();
    if (op.operation.requestBody.required) expect(call.body, `${op.operationId} needs a body`).toBeDefined();
    if (call.body !== undefined) expect(schemaErrors(media?.schema, call.body), `request body of ${op.operationId}`).toEqual([]);
  } else {
    expect(call.body, `${op.operationId} documents no request body`).toBeUndefined();
  }
}

/** A body as its media type sends it: a form's members form-encoded, anything else as JSON. */
function encode(body: unknown, contentType: string): string {
  if (contentType !== FORM) return JSON.stringify(body);
  return new URLSearchParams(Object.entries(body as Record<string, unknown>).map(([name, value]): [string, string] => [name, String(value)])).toString();
}

async function send(op: DocumentedOperation, call: Call, app: FastifyInstance = t.app): Promise<LightMyRequestResponse> {
  const payload = call.rawBody ?? (call.body === undefined ? undefined : encode(call.body, call.contentType ?? firstContentType(op)));
  const headers: Record<string, string> = {
    ...(payload === undefined ? {} : { 'content-type': call.contentType ?? firstContentType(op) }),
    ...(call.token ? { authorization: `Bearer ${call.token}` } : {}),
    ...call.headers,
  };
  return app.inject({ method: op.method, url: urlFor(op, call), headers, ...(payload === undefined ? {} : { payload }) });
}

const mediaTypeOf = (res: LightMyRequestResponse) => (String(res.headers['content-type'] ?? '').split(';')[0] ?? '').trim().toLowerCase();

/** The status is documented, and the body matches the schema documented for it. */
function expectDocumentedResponse(op: DocumentedOperation, res: LightMyRequestResponse): ResponseObject | undefined {
  const status = String(res.statusCode);
  const documented = op.operation.responses[status];
  expect(documented, `${op.method} ${op.path} answered ${status}, documented: ${Object.keys(op.operation.responses).join(', ')}; body ${res.body}`).toBeDefined();
  if (!documented) return undefined;
  if (!documented.content) {
    expect(res.body, `${status} documents no body`).toBe('');
    return documented;
  }
  const mediaType = mediaTypeOf(res);
  const media = documented.content[mediaType];
  expect(media, `${status} answered ${mediaType}, documented: ${Object.keys(documented.content).join(', ')}`).toBeDefined();
  expect(schemaErrors(media?.schema, res.json()), `${op.method} ${op.path} ${status} body ${res.body}`).toEqual([]);
  return documented;
}

/** A creating POST's 200 that replays a stored result (Idempotency-Key) besides its own 201/202. */
const isReplay = (op: DocumentedOperation, code: string) => code === '200' && op.operation.responses[code]?.headers?.['Idempotent-Replayed'] !== undefined;
/** The success status of a first request: a replay's 200 is the same operation's answer repeated. */
const successCodes = (op: DocumentedOperation) => Object.keys(op.operation.responses).filter((code) => /^2\d\d$/.test(code) && !isReplay(op, code));

/** The problem slugs a documented problem response names: its schema's `$ref`s to `<Slug>Problem`. */
function slugsOf(response: ResponseObject | undefined): ProblemSlug[] {
  const schema = response?.content?.['application/problem+json']?.schema;
  if (!schema) return [];
  const refs = (Array.isArray(schema.oneOf) ? (schema.oneOf as JsonSchema[]) : [schema]).map((s) => String(s.$ref));
  return refs.map((r) => {
    const component = doc.components.schemas?.[r.slice(SCHEMA_REF.length)];
    const type = (component?.properties as Record<string, { const?: string }> | undefined)?.type?.const ?? '';
    return type.replace('/problems/', '') as ProblemSlug;
  });
}

// ---------------------------------------------------------------------------------------------

describe('GET /api/openapi.json serves a valid OpenAPI 3.1 document', () => {
  it('answers 200 application/json', () => {
    expect(served.statusCode).toBe(200);
    expect(mediaTypeOf(served)).toBe('application/json');
  });

  it('validates as OpenAPI 3.1', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    const validator = new Validator();
    const result = await validator.validate(served.json<Record<string, unknown>>());
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('has one server, the origin, and whole paths (/api/v1/..., /api/health, /api/health/ready, the OAuth endpoints) with no server overrides', () => {
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    expect(operations.length).toBeGreaterThan(0);
    for (const [path, item] of Object.entries(doc.paths)) {
      expect(HEALTH_PATHS.includes(path) || path.startsWith(`${API_PREFIX}/`) || OAUTH_PATHS.includes(path), path).toBe(true);
      expect(item.servers, `${path} overrides servers`).toBeUndefined();
    }
    for (const op of operations) expect(op.operation.servers, `${op.method} ${op.path} overrides servers`).toBeUndefined();
    // Every REST route is documented at its whole path.
    for (const route of routes) expect(doc.paths[API_PREFIX + route.path]?.[route.method.toLowerCase()], `${route.method} ${route.path}`).toBeDefined();
  });

  it('every operation has a unique operationId, a summary, a description and tags', () => {
    const ids = operations.map((op) => op.operation.operationId);
    for (const id of ids) expect(id).toEqual(expect.any(String));
    expect(new Set(ids).size).toBe(ids.length);
    for (const op of operations) {
      expect(op.operation.summary, op.operationId).toEqual(expect.stringMatching(/\S/));
      expect(op.operation.description, op.operationId).toEqual(expect.stringMatching(/\S/));
      expect(op.operation.tags?.length, op.operationId).toBeGreaterThan(0);
    }
  });

  it('declares every tag it uses, each with a description, and names a contact and the MIT license', () => {
    const declared = new Map((doc.tags ?? []).map((tag) => [tag.name, tag.description]));
    for (const op of operations) {
      for (const tag of op.operation.tags ?? []) {
        expect(declared.get(tag), `tag ${tag}`).toEqual(expect.stringMatching(/\S/));
        expect(declared.get(tag), `tag ${tag} has only the fallback description`).not.toMatch(/^Operations on /);
      }
    }
    expect(doc.info.contact).toMatchObject({ name: expect.any(String), url: expect.any(String) });
    expect(doc.info.license).toEqual({ name: 'MIT', url: 'https://github.com/order-service/order-service/blob/main/LICENSE' });
  });

  it('describes every parameter', () => {
    for (const op of operations) for (const p of parametersOf(op)) expect(p.description, `${op.operationId} ${p.in} ${p.name}`).toEqual(expect.stringMatching(/\S/));
  });
});

describe('security follows each procedure policy (docs/api.md#authentication-and-authorization)', () => {
  it('declares bearerAuth and the OAuth 2.0 flows with every scope', () => {
    const schemes = doc.components.securitySchemes ?? {};
    expect(schemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    const flows = schemes.oauth2?.flows as Record<string, { authorizationUrl?: string; tokenUrl: string; refreshUrl?: string; scopes: Record<string, string> }>;
    expect(schemes.oauth2?.type).toBe('oauth2');
    expect(flows.authorizationCode).toMatchObject({ authorizationUrl: '/oauth/authorize', tokenUrl: '/oauth/token', refreshUrl: '/oauth/token' });
    expect(flows.clientCredentials).toMatchObject({ tokenUrl: '/oauth/token' });
    expect(flows.password).toMatchObject({ tokenUrl: '/oauth/token', refreshUrl: '/oauth/token' });
    for (const flow of Object.values(flows)) {
      expect(Object.keys(flow.scopes).sort()).toEqual([...SCOPES].sort());
      for (const description of Object.values(flow.scopes)) expect(description).toMatch(/\S/);
    }
  });

  it('every operation declares security: optional token where public, the bearer token or the OAuth scope otherwise', () => {
    for (const route of routes) {
      const operation = doc.paths[API_PREFIX + route.path]?.[route.method.toLowerCase()] as Operation;
      const name = `${route.method} ${route.path}`;
      expect(route.policy, `${name} declares no policy`).toBeDefined();
      if (route.policy === undefined || isPublic(route.policy)) {
        expect(operation.security, name).toEqual([{}, { bearerAuth: [] }]);
      } else {
        expect(operation.security, name).toEqual([{ bearerAuth: [] }, { oauth2: [route.policy.scope] }]);
        expect(operation.responses['403'], `${name} documents no 403`).toBeDefined();
        expect(slugsOf(operation.responses['403'])).toContain('insufficient-scope');
      }
    }
    for (const path of HEALTH_PATHS) expect((doc.paths[path]?.get as Operation).security, path).toEqual([{}, { bearerAuth: [] }]);
  });
});

describe('the document states the statuses the contract fixes (docs/api.md#writes and #reads-lists-and-caching)', () => {
  it('every operation documents exactly one success (2xx) status', () => {
    for (const op of operations) expect(successCodes(op), `${op.method} ${op.path}`).toHaveLength(1);
  });

  it('every POST that creates documents 201 with a Location header', () => {
    for (const op of operations.filter(createsResource)) {
      const created = op.operation.responses['201'];
      expect(created, `${op.method} ${op.path} documents no 201`).toBeDefined();
      expect(Object.keys(created?.headers ?? {}).map((h) => h.toLowerCase()), `${op.method} ${op.path} 201 headers`).toContain('location');
    }
  });

  it('every POST answering 201 or 202 documents Idempotency-Key, the 200 replay with Idempotent-Replayed, and 409/422 key problems (docs/api.md#idempotency)', () => {
    const creating = operations.filter((o) => o.method === 'POST' && ['201', '202'].some((code) => o.operation.responses[code]));
    expect(creating.length).toBeGreaterThanOrEqual(3);
    for (const op of creating) {
      const name = `${op.method} ${op.path}`;
      const parameter = parametersOf(op).find((p) => p.name === 'Idempotency-Key');
      expect(parameter, `${name} declares no Idempotency-Key`).toMatchObject({ in: 'header', required: false, schema: { maxLength: 255 } });
      const first = op.operation.responses['201'] ?? op.operation.responses['202'];
      expect(isReplay(op, '200'), `${name} documents no replay`).toBe(true);
      expect(op.operation.responses['200']?.content, name).toEqual(first?.content);
      expect(slugsOf(op.operation.responses['409']), name).toContain('idempotency-key-in-use');
      expect(slugsOf(op.operation.responses['422']), name).toContain('idempotency-key-mismatch');
    }
  });

  it('marks exactly the lists `x-list: true`, the operations paged by a `cursor` (scripts/schemathesis.toml selects them by it)', () => {
    const lists = operations.filter((op) => parametersOf(op).some((p) => p.in === 'query' && p.name === 'cursor'));
    expect(lists.length).toBeGreaterThanOrEqual(12);
    for (const op of operations) {
      expect((op.operation as { 'x-list'?: unknown })['x-list'], `${op.method} ${op.path}`).toBe(lists.includes(op) ? true : undefined);
    }
  });

  it('every action POST documents the status the contract gives it', () => {
    for (const op of operations.filter((o) => o.method === 'POST' && !createsResource(o))) {
      expect(successCodes(op), `${op.method} ${op.path}`).toEqual([String(actionPosts[op.operationId]?.status)]);
    }
  });

  it('every DELETE documents 204 with no body', () => {
    for (const op of operations.filter((o) => o.method === 'DELETE')) {
      const done = op.operation.responses['204'];
      expect(done, `${op.method} ${op.path} documents no 204`).toBeDefined();
      expect(done?.content, `${op.method} ${op.path} 204 has content`).toBeUndefined();
    }
  });

  it('every GET of a resource or list documents 304 Not Modified without a body, with ETag and Cache-Control', () => {
    for (const op of operations.filter((o) => o.method === 'GET' && !NOT_CONDITIONAL.has(o.operationId))) {
      const notModified = op.operation.responses['304'];
      expect(notModified, `${op.method} ${op.path} documents no 304`).toBeDefined();
      expect(notModified?.content).toBeUndefined();
      expect(Object.keys(notModified?.headers ?? {})).toEqual(expect.arrayContaining(['ETag', 'Cache-Control', 'RateLimit-Limit']));
    }
  });

  it('every answer documents the RateLimit-* and X-Request-Id headers; 429 and 503 Retry-After, 401 WWW-Authenticate', () => {
    for (const op of operations) {
      for (const [code, response] of Object.entries(op.operation.responses)) {
        const names = Object.keys(response.headers ?? {});
        expect(names, `${op.operationId} ${code}`).toEqual(expect.arrayContaining(['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']));
        if (code === '429' || code === '503') expect(names, `${op.operationId} ${code}`).toContain('Retry-After');
        if (code === '401') expect(names, `${op.operationId} ${code}`).toContain('WWW-Authenticate');
      }
    }
  });

  it('every problem response is application/problem+json, one schema per slug whose type and status are constants, with an example of that status', () => {
    for (const op of operations.filter((o) => !answersOAuthErrors(o))) {
      for (const [code, response] of Object.entries(op.operation.responses)) {
        if (!/^[45]\d\d$/.test(code)) continue;
        const name = `${op.method} ${op.path} ${code}`;
        const media = response.content?.['application/problem+json'];
        expect(media, name).toBeDefined();
        if (!HEALTH_PATHS.includes(op.path)) expect(Object.keys(response.content ?? {}), name).toEqual(['application/problem+json']);
        const slugs = slugsOf(response);
        expect(slugs.length, name).toBeGreaterThan(0);
        for (const slug of slugs) {
          expect(problemCatalogue().get(slug)?.status, `${name}: ${slug}`).toBe(Number(code));
          expect(response.description, `${name} links /problems/${slug}`).toContain(`(/problems/${slug})`);
        }
        const example = media?.example as { type?: string; status?: number } | undefined;
        expect(example?.status, name).toBe(Number(code));
        expect(slugs.map((slug) => `/problems/${slug}`), name).toContain(example?.type);
      }
    }
  });

  it('401 shows an unauthorized problem and an order write\'s 409 an invalid transition with `allowed`', () => {
    for (const op of operations.filter((o) => !answersOAuthErrors(o) && o.operation.responses['401'])) {
      expect((op.operation.responses['401']?.content?.['application/problem+json']?.example as { type: string }).type).toBe('/problems/unauthorized');
    }
    const patch = operations.find((op) => op.operationId === 'orders-patch');
    expect(patch?.operation.responses['409']?.content?.['application/problem+json']?.example).toMatchObject({
      type: '/problems/invalid-state-transition',
      allowed: expect.any(Array),
    });
  });

  it('the problem schemas describe their extension members', () => {
    const schemas = doc.components.schemas ?? {};
    const members = (name: string) => schemas[name]?.properties as Record<string, { description?: string }> | undefined;
    expect(Object.keys(members('InvalidStateTransitionProblem') ?? {})).toEqual(expect.arrayContaining(['allowed', 'current_status', 'requested_status']));
    expect(members('PreconditionFailedProblem')?.current_etag?.description).toMatch(/\S/);
    expect(members('InsufficientStockProblem')?.product_ids?.description).toMatch(/\S/);
    expect(members('InsufficientScopeProblem')?.scope?.description).toMatch(/\S/);
    expect(members('ValidationErrorProblem')?.errors?.description).toMatch(/\S/);
  });
});

describe('schemas say what the service does', () => {
  it('every integer has real bounds (never the whole safe-integer range)', () => {
    for (const [path, schema] of schemasIn(doc, '#')) {
      const types = Array.isArray(schema.type) ? schema.type : [schema.type];
      if (!types.includes('integer')) continue;
      expect(schema.minimum, `${path} has no minimum`).toEqual(expect.any(Number));
      expect(schema.maximum, `${path} has no maximum`).toEqual(expect.any(Number));
      expect(Math.abs(Number(schema.minimum)), path).toBeLessThan(Number.MAX_SAFE_INTEGER);
      expect(Math.abs(Number(schema.maximum)), path).toBeLessThan(Number.MAX_SAFE_INTEGER);
    }
  });

  // A generator (schemathesis, scripts/schemathesis.sh) builds strings from a pattern, but can only
  // filter for a lookaround: the user email's lookahead once cost it minutes per user body.
  it('no pattern needs a lookaround (two patterns in an allOf say the same)', () => {
    const patterns: [string, string][] = [];
    const collect = (value: unknown, path: string): void => {
      if (value === null || typeof value !== 'object') return;
      for (const [key, inner] of Object.entries(value)) {
        if (key === 'example' || key === 'examples' || key === 'default' || key === 'const' || key === 'enum') continue;
        if (key === 'pattern' && typeof inner === 'string') patterns.push([path, inner]);
        else collect(inner, `${path}/${key}`);
      }
    };
    collect(doc, '#');
    expect(patterns.length).toBeGreaterThan(0);
    for (const [path, pattern] of patterns) expect(pattern, path).not.toMatch(/\(\?<?[=!]/);
  });

  it('every media example (requests and responses) validates against its schema', () => {
    let count = 0;
    for (const op of operations) {
      const media = [
        ...Object.entries(op.operation.requestBody?.content ?? {}).map(([type, m]) => [`request ${type}`, m] as const),
        ...Object.entries(op.operation.responses).flatMap(([code, r]) => Object.entries(r.content ?? {}).map(([type, m]) => [`${code} ${type}`, m] as const)),
      ];
      for (const [where, m] of media) {
        for (const example of examplesOf(m)) {
          count += 1;
          expect(schemaErrors(m.schema, example), `${op.operationId} ${where} example`).toEqual([]);
        }
      }
    }
    expect(count).toBeGreaterThan(operations.length * 5);
  });

  it('every success response and request body of the resources has an example', () => {
    for (const op of operations.filter((o) => !o.operationId.startsWith('clients-'))) {
      for (const [type, media] of Object.entries(op.operation.requestBody?.content ?? {})) expect(examplesOf(media), `${op.operationId} request ${type}`).not.toEqual([]);
      for (const code of successCodes(op)) {
        const media = op.operation.responses[code]?.content?.['application/json'];
        if (media) expect(examplesOf(media), `${op.operationId} ${code}`).not.toEqual([]);
      }
    }
  });

  it('every example inside a schema validates against that schema', () => {
    for (const [path, schema] of schemasIn(doc, '#')) {
      if (schema.example === undefined) continue;
      const { example, ...rest } = schema;
      expect(schemaErrors(rest, example), `${path} example`).toEqual([]);
    }
  });

  it('the request example of POST /orders is a valid request: a draft, as the service accepts it', async () => {
    const op = operations.find((o) => o.operationId === 'orders-create');
    const example = op?.operation.requestBody?.content['application/json']?.example as { status?: string } | undefined;
    expect(example?.status ?? 'draft').toBe('draft');
  });

  it('request bodies type every member; read-only ones are marked readOnly', () => {
    for (const op of operations) {
      for (const [type, media] of Object.entries(op.operation.requestBody?.content ?? {})) {
        const schema = media.schema?.$ref ? doc.components.schemas?.[String(media.schema.$ref).slice(SCHEMA_REF.length)] : media.schema;
        const properties = (schema?.properties ?? {}) as Record<string, JsonSchema>;
        for (const [name, property] of Object.entries(properties)) {
          const typed = ['type', '$ref', 'anyOf', 'oneOf', 'enum', 'const'].some((key) => key in property);
          expect(typed, `${op.operationId} ${type} ${name} is untyped`).toBe(true);
        }
        if (op.method === 'PUT') {
          for (const readOnly of ['id', 'created_at', 'updated_at']) {
            expect(properties[readOnly]?.readOnly, `${op.operationId} ${readOnly}`).toBe(true);
          }
        }
      }
    }
  });

  it('closed sets are enums: order statuses (the filter with its aliases and active), payment methods, refund reasons, roles', () => {
    const schemas = doc.components.schemas ?? {};
    expect(schemas.OrderStatus?.enum).toEqual([...ORDER_STATUSES]);
    expect(schemas.PaymentMethod?.enum).toEqual(['card', 'bank_transfer', 'wallet']);
    expect(schemas.RefundReason?.enum).toEqual(['requested_by_customer', 'duplicate', 'fraudulent', 'other']);
    expect(schemas.UserRole?.enum).toEqual(['customer', 'admin']);
    const list = operations.find((o) => o.operationId === 'orders-list');
    const status = parametersOf(list as DocumentedOperation).find((p) => p.name === 'status');
    const [closed] = (status?.schema?.anyOf ?? []) as JsonSchema[];
    expect(closed?.enum).toEqual(expect.arrayContaining(['draft', 'CREATED', 'CANCELLED', 'active']));
  });

  it('PATCH takes a merge patch (every member optional) and a JSON Patch (one schema per RFC 6902 operation)', () => {
    const patch = operations.find((o) => o.operationId === 'orders-patch');
    const content = patch?.operation.requestBody?.content ?? {};
    expect(Object.keys(content)).toEqual(['application/merge-patch+json', 'application/json-patch+json', 'application/json']);
    const merge = doc.components.schemas?.[String(content['application/merge-patch+json']?.schema?.$ref).slice(SCHEMA_REF.length)];
    expect(merge?.required).toBeUndefined();
    expect(Object.keys((merge?.properties ?? {}) as object)).toEqual(expect.arrayContaining(['address', 'items', 'status', 'discount_code']));
    expect(schemaErrors(content['application/merge-patch+json']?.schema, { address: null, discount_code: 'SPRING-10' })).toEqual([]);
    expect(schemaErrors(content['application/merge-patch+json']?.schema, { customer_id: null })).not.toEqual([]);
    const operationsSchema = doc.components.schemas?.JsonPatch?.items as { oneOf: { $ref: string }[] };
    const ops = operationsSchema.oneOf.map((r) => (doc.components.schemas?.[r.$ref.slice(SCHEMA_REF.length)]?.properties as { op: { const: string } }).op.const);
    expect(ops.sort()).toEqual(['add', 'copy', 'move', 'remove', 'replace', 'test']);
    expect(schemaErrors(content['application/json-patch+json']?.schema, [{ op: 'move', from: '/address', path: '/discount_code' }])).toEqual([]);
    expect(schemaErrors(content['application/json-patch+json']?.schema, [{ op: 'move', path: '/address' }])).not.toEqual([]);
  });

  it('every resource with metadata has a PATCH taking both formats, its examples valid; a payment\'s merge patch names metadata alone', () => {
    const patches = operations.filter((o) => o.method === 'PATCH' && o.operation.requestBody?.content?.['application/json-patch+json'] !== undefined);
    expect(patches.map((o) => o.operationId).sort()).toEqual(['orders-patch', 'payments-patch', 'products-patch', 'users-patch']);
    for (const op of patches) {
      for (const [media, body] of Object.entries(op.operation.requestBody?.content ?? {})) {
        expect(schemaErrors(body.schema, body.example), `${op.operationId} ${media} example`).toEqual([]);
      }
    }
    const merge = operations.find((o) => o.operationId === 'payments-patch')?.operation.requestBody?.content?.['application/merge-patch+json']?.schema;
    expect(schemaErrors(merge, { metadata: { erp_id: 'ERP-1', gift_note: null } })).toEqual([]);
    expect(schemaErrors(merge, { amount: 1 })).not.toEqual([]);
  });
});

describe('the OAuth endpoints are described as they answer (RFC 6749, RFC 7009, RFC 8414)', () => {
  const token = operations.find((op) => op.operationId === 'oauth-token');
  const revoke = operations.find((op) => op.operationId === 'oauth-revoke');
  const schemas = doc.components.schemas ?? {};
  const componentOf = (schema: JsonSchema | undefined) => (typeof schema?.$ref === 'string' ? schemas[schema.$ref.slice(SCHEMA_REF.length)] : schema);
  const propertiesOf = (schema: JsonSchema | undefined) => Object.keys((componentOf(schema)?.properties ?? {}) as object);

  it('POST /oauth/token, POST /oauth/revoke and GET /.well-known/oauth-authorization-server are operations of the document', () => {
    expect(operations.filter((op) => OAUTH_PATHS.includes(op.path)).map((op) => `${op.method} ${op.path} ${op.operationId}`).sort()).toEqual([
      'GET /.well-known/oauth-authorization-server oauth-metadata',
      'POST /oauth/revoke oauth-revoke',
      'POST /oauth/token oauth-token',
    ]);
  });

  it('token and revocation take a form or the same JSON object and authenticate the client with HTTP Basic or in the body', () => {
    expect(doc.components.securitySchemes?.clientBasic).toMatchObject({ type: 'http', scheme: 'basic' });
    for (const op of [token, revoke]) {
      expect(Object.keys(op?.operation.requestBody?.content ?? {}), op?.operationId).toEqual([FORM, 'application/json']);
      expect(op?.operation.security, op?.operationId).toEqual([{}, { clientBasic: [] }]);
    }
  });

  it('the token request is one schema per grant type, naming together exactly the parameters the endpoint reads', () => {
    const request = componentOf(token?.operation.requestBody?.content[FORM]?.schema);
    const grants = ((request?.oneOf ?? []) as JsonSchema[]).map(componentOf);
    const grantTypes = grants.map((grant) => (grant?.properties as { grant_type: { const: string } }).grant_type.const);
    expect(grantTypes.sort()).toEqual([...GRANT_TYPES].sort());
    expect([...new Set(grants.flatMap((grant) => propertiesOf(grant)))].sort()).toEqual([...TOKEN_PARAMETERS].sort());
    expect(propertiesOf(revoke?.operation.requestBody?.content[FORM]?.schema).sort()).toEqual([...REVOKE_PARAMETERS].sort());
  });

  /** Calls the token endpoint with `body` as `contentType`, checking the request and the answer against the document. */
  async function grant(body: Record<string, string>, contentType: string, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
    if (!token) throw new Error('POST /oauth/token is not documented');
    const call = { body, contentType, headers };
    expectCallMatchesDocument(token, call);
    const res = await send(token, call);
    expect(res.statusCode, res.body).toBe(200);
    expectDocumentedResponse(token, res);
    return res.json<Record<string, unknown>>();
  }

  it('every grant type, from a form and from JSON, answers the documented tokens', async () => {
    const clientId = await publicClient();
    const user = await t.createUser();
    const signedIn = await grant({ grant_type: 'password', client_id: clientId, username: user.email, password: TEST_PASSWORD, scope: 'orders:read' }, FORM);
    expect(signedIn).toMatchObject({ token_type: 'Bearer', scope: 'orders:read', refresh_token: expect.any(String) });
    const renewed = await grant({ grant_type: 'refresh_token', client_id: clientId, refresh_token: String(signedIn.refresh_token) }, 'application/json');
    expect(renewed.refresh_token).not.toBe(signedIn.refresh_token);

    const verifier = randomBytes(32).toString('base64url');
    const code = await createCode(
      t.db,
      { clientId, userId: user.id, redirectUri: REDIRECT_URI, codeChallenge: createHash('sha256').update(verifier).digest('base64url'), scope: 'orders:read orders:write' },
      60,
    );
    const exchanged = await grant({ grant_type: 'authorization_code', client_id: clientId, code, redirect_uri: REDIRECT_URI, code_verifier: verifier }, FORM);
    expect(exchanged).toMatchObject({ scope: 'orders:read orders:write', refresh_token: expect.any(String) });

    const service = await confidentialClient();
    expect(await grant({ grant_type: 'client_credentials' }, FORM, { authorization: service.authorization })).not.toHaveProperty('refresh_token');
    expect(await grant({ grant_type: 'client_credentials', client_id: service.id, client_secret: service.secret, scope: 'orders:read' }, 'application/json')).toMatchObject({
      scope: 'orders:read',
    });
  });

  it('revoking a real refresh token answers the documented 200 with no body, and the token no longer renews', async () => {
    const clientId = await publicClient();
    const user = await t.createUser();
    const signedIn = await grant({ grant_type: 'password', client_id: clientId, username: user.email, password: TEST_PASSWORD }, FORM);
    if (!revoke || !token) throw new Error('the OAuth endpoints are not documented');
    const call = { body: { token: String(signedIn.refresh_token), token_type_hint: 'refresh_token', client_id: clientId } };
    expectCallMatchesDocument(revoke, call);
    const res = await send(revoke, call);
    expect(res.statusCode, res.body).toBe(200);
    expectDocumentedResponse(revoke, res);
    const refused = await send(token, { body: { grant_type: 'refresh_token', client_id: clientId, refresh_token: String(signedIn.refresh_token) } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: 'invalid_grant' });
    expectDocumentedResponse(token, refused);
  });

  it('every error status is RFC 6749 JSON naming the error codes and problem types it carries, linking their pages, with an example', () => {
    const codes = (schemas.OAuthError?.properties as { error: { enum: string[] } }).error.enum;
    expect(operations.filter(answersOAuthErrors).map((op) => op.operationId).sort()).toEqual(['oauth-revoke', 'oauth-token']);
    for (const op of operations.filter(answersOAuthErrors)) {
      for (const [code, response] of Object.entries(op.operation.responses)) {
        if (!/^[45]\d\d$/.test(code)) continue;
        const name = `${op.operationId} ${code}`;
        expect(Object.keys(response.content ?? {}), name).toEqual(['application/json']);
        const media = response.content?.['application/json'];
        expect(media?.schema?.allOf, name).toEqual([{ $ref: `${SCHEMA_REF}OAuthError` }]);
        const { error, type, status } = media?.schema?.properties as { error: { enum: string[] }; type: { enum: string[] }; status: { const: number } };
        expect(status.const, name).toBe(Number(code));
        expect(codes, name).toEqual(expect.arrayContaining(error.enum));
        for (const page of type.enum) expect(response.description, `${name} links ${page}`).toContain(`(${page})`);
        expect(schemaErrors(media?.schema, media?.example), `${name} example`).toEqual([]);
      }
    }
  });

  it('the metadata schema names every member the endpoint answers', async () => {
    const res = await t.request({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    const schema = componentOf(operations.find((op) => op.operationId === 'oauth-metadata')?.operation.responses['200']?.content?.['application/json']?.schema);
    expect(propertiesOf(schema).sort()).toEqual(Object.keys(res.json()).sort());
    // Required: all but prompt_values_supported, answered only while sign-up is on (it is here).
    expect(Object.keys(res.json())).toContain('prompt_values_supported');
    expect([...((schema?.required ?? []) as string[])].sort()).toEqual(Object.keys(res.json()).filter((name) => name !== 'prompt_values_supported').sort());
  });
});

describe('/problems/<slug> pages render as HTML, and the document links them', () => {
  const linked = [...new Set(JSON.stringify(doc).match(/\(\/problems\/[a-z0-9-]+\)/g) ?? [])].map((link) => link.slice(1, -1));

  it('links a page for every problem it documents', () => {
    expect(linked.length).toBeGreaterThan(15);
  });

  it.each(linked)('%s answers 200 HTML with no markdown left in it', async (page) => {
    const res = await t.request({ method: 'GET', url: page });
    expect(res.statusCode).toBe(200);
    expect(mediaTypeOf(res)).toBe('text/html');
    expect(res.body).not.toContain('`');
    expect(res.body).toMatch(/<h1>[^<]+<\/h1>/);
  });
});

describe('a PUT body schema accepts the representation a GET returns, read-only fields included (GET-modify-PUT, docs/api.md#shape-of-the-api)', () => {
  for (const op of operations.filter((o) => o.method === 'PUT')) {
    it(`PUT ${op.path}: the service takes the GET representation back, and the documented body schema accepts it`, async () => {
      const prepare = representationsForPut[op.operationId];
      if (!prepare) throw new Error(`no representation to send back to PUT ${op.path}: add one to \`representationsForPut\` in its module's file of test/operations/`);
      const { representation, token } = await prepare();
      const res = await send(op, { params: { id: representation.id }, body: representation, token });
      expect(res.statusCode, res.body).toBe(200);
      const schema = op.operation.requestBody?.content['application/json']?.schema;
      expect(schemaErrors(schema, representation), `PUT ${op.path} body schema refuses the GET representation`).toEqual([]);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Generic probes: the statuses every operation of a kind can answer, from its documented shape.

const hasIntParameter = (op: DocumentedOperation, where: 'path' | 'query') =>
  parametersOf(op).find((p) => p.in === where && p.schema?.type === 'integer');

/** The same call with every path parameter naming nothing. */
function unknownParams(op: DocumentedOperation, call: Call): Call {
  const params = Object.fromEntries(
    parametersOf(op)
      .filter((p) => p.in === 'path')
      .map((p) => [p.name, p.schema?.type === 'integer' ? UNKNOWN_ID : 'no-such-thing']),
  );
  return { ...call, params, token: t.admin.token };
}

type Probe = (op: DocumentedOperation, call: Call) => Promise<Call | undefined> | Call | undefined;

const genericProbes: Record<number, Probe> = {
  400: (op, call) => {
    if (op.operation.requestBody) return { ...call, body: undefined, rawBody: '{"unterminated": ' };
    const path = hasIntParameter(op, 'path');
    if (path) return { ...call, params: { ...call.params, [path.name]: 'abc' } };
    const query = hasIntParameter(op, 'query');
    if (query) return { ...call, query: { ...call.query, [query.name]: 'abc' } };
    if (parametersOf(op).some((p) => p.name === 'Idempotency-Key')) return { ...call, headers: { ...call.headers, 'idempotency-key': 'not a key' } };
    // Every operation refuses a query parameter it does not take (docs/api.md#unknown-parameters).
    return { ...call, query: { ...call.query, zz_unknown: '1' } };
  },
  401: (_op, call) => ({ ...call, token: 'not-a-token' }),
  403: async (op, call) => (op.operation.security?.some((s) => 'oauth2' in s) ? { ...call, token: await t.serviceToken([]) } : undefined),
  404: (op, call) => (parametersOf(op).some((p) => p.in === 'path') ? unknownParams(op, call) : undefined),
  406: (_op, call) => ({ ...call, headers: { ...call.headers, accept: 'text/html' } }),
  412: (op, call) => (parametersOf(op).some((p) => p.name === 'If-Match') ? { ...call, headers: { ...call.headers, 'if-match': '"stale"' } } : undefined),
  413: (op, call) => (op.operation.requestBody ? { ...call, body: undefined, rawBody: JSON.stringify({ padding: 'x'.repeat(1024 * 1024 + 16) }) } : undefined),
  415: (op, call) => (op.operation.requestBody ? { ...call, body: undefined, rawBody: 'plain text', contentType: 'text/plain' } : undefined),
  422: async (op, call) => {
    if (parametersOf(op).some((p) => p.in === 'query' && p.name === 'limit')) return { ...call, query: { ...call.query, limit: 500 } };
    if (op.operation.requestBody && !Array.isArray(call.body)) return { ...call, body: { ...(call.body as object), zz_unknown_member: 1 } };
    if (parametersOf(op).some((p) => p.name === 'Idempotency-Key')) {
      // The same key for another request (here: another resource in the path).
      const key = `mismatch-${op.operationId}-${Date.now()}`;
      const first = await send(op, { ...call, headers: { ...call.headers, 'idempotency-key': key } });
      expect(first.statusCode, first.body).toBeLessThan(300);
      const walk = walks[op.operationId];
      const other = walk ? await walk.success() : call;
      return { ...other, headers: { ...other.headers, 'idempotency-key': key } };
    }
    return undefined;
  },
};

// Apps on the same database for the statuses a healthy app does not answer: one whose limit is
// spent (429), and one whose database fails (500 for an error no mapping knows, 503 for a lost
// connection). Neither closes the shared database. On PostgreSQL they share its rate-limit
// counters with the main app, so the failing one must not count /oauth against the default 20.
const shared: Database = { ...t.database, close: async () => {} };
const unlimited = { max: 1_000_000, timeWindow: '1 minute' };
// An hour: the window never ends between the request that spends it and the probe after it.
const limited = await buildApp({ database: shared, tokens: t.tokens, rateLimit: { max: 1, timeWindow: '1 hour' }, webhooks: { worker: false } });
let failure: Error | undefined;
/**
 * `target` whose every method throws `failure` while it is set; objects a method answers (a
 * prepared query) fail the same way. Statements built once (server/db/statements.ts) run on the
 * handle's session (`db._.session`), so that is wrapped too.
 */
function failWhenBroken<T extends object>(target: T, extra: Record<PropertyKey, unknown> = {}): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      if (property in extra) return extra[property];
      const value: unknown = Reflect.get(object, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (failure) throw failure;
        const answer = (value as (...a: unknown[]) => unknown).apply(object, args);
        return answer !== null && typeof answer === 'object' && !(answer instanceof Promise) ? failWhenBroken(answer) : answer;
      };
    },
  });
}
const internals = (t.db as unknown as { _: { session: object } })._;
const failing: Database = {
  ...shared,
  db: failWhenBroken(t.db, { _: { ...internals, session: failWhenBroken(internals.session) } }),
  ping: async (timeoutMs) => {
    if (failure?.message === 'boom') throw failure;
    return failure ? false : t.database.ping(timeoutMs);
  },
};
const broken = await buildApp({ database: failing, tokens: t.tokens, rateLimit: unlimited, oauth: { rateLimit: unlimited }, webhooks: { worker: false } });
await Promise.all([limited.ready(), broken.ready()]);
afterAll(async () => {
  await limited.close();
  await broken.close();
});

async function answerOfFailingDatabase(op: DocumentedOperation, call: Call, error: Error): Promise<LightMyRequestResponse> {
  failure = error;
  try {
    return await send(op, call, broken);
  } finally {
    failure = undefined;
  }
}

const special: Record<number, (op: DocumentedOperation, call: Call) => Promise<LightMyRequestResponse>> = {
  // Anonymous, so the per-address budget, spent right before, applies whatever the operation needs.
  429: async (op, call) => {
    await limited.inject({ method: 'GET', url: '/api/health' });
    return send(op, { ...call, token: undefined }, limited);
  },
  500: (op, call) => answerOfFailingDatabase(op, call, new Error('boom')),
  503: (op, call) => answerOfFailingDatabase(op, call, Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })),
};

describe('every documented operation answers as documented when called for real', () => {
  it('every entry of test/operations/ names a documented operation (no stale entry left behind)', () => {
    const documented = new Set(operations.map((op) => op.operationId));
    const tables = { walks, reach, actionPosts, shownOnlyOnCreation, representationsForPut };
    const stale = Object.entries(tables).flatMap(([table, entries]) => Object.keys(entries).filter((id) => !documented.has(id)).map((id) => `${table}['${id}']`));
    expect(stale).toEqual([]);
  });

  for (const op of operations) {
    describe(`${op.method} ${op.path} (${op.operationId})`, () => {
      it('has an entry in the walk table (add one when adding an operation)', () => {
        expect(walks[op.operationId], `no walk for ${op.operationId}: add one to its module's file of test/operations/`).toBeDefined();
      });

      it('a request that should succeed answers the documented success status with a body matching its schema', async () => {
        const walk = walks[op.operationId];
        if (!walk) throw new Error(`no walk for ${op.operationId}`);
        const call = await walk.success();
        expectCallMatchesDocument(op, call);
        const res = await send(op, call);
        expect(successCodes(op)).toEqual([String(res.statusCode)]);
        const documented = expectDocumentedResponse(op, res);

        if (answersLocation(op)) {
          const location = res.headers.location;
          expect(location, 'a POST that creates answers a Location header').toEqual(expect.stringMatching(/^\/api\/v1\//));
          expect(Object.keys(documented?.headers ?? {}).map((h) => h.toLowerCase())).toContain('location');
          const created = await t.request({ method: 'GET', url: String(location), token: t.admin.token });
          expect(created.statusCode).toBe(200);
          const shownOnce = shownOnlyOnCreation[op.operationId] ?? [];
          expect(created.json()).toEqual(Object.fromEntries(Object.entries(res.json<Record<string, unknown>>()).filter(([name]) => !shownOnce.includes(name))));
        }

        for (const name of Object.keys(documented?.headers ?? {})) {
          if (name.toLowerCase() === 'link') continue; // only when there is another page
          expect(res.headers[name.toLowerCase()], `documented header ${name} is missing`).toBeDefined();
        }

        if (op.method === 'GET' && !NOT_CONDITIONAL.has(op.operationId)) {
          const etag = res.headers.etag;
          expect(etag, 'a GET answers an ETag').toEqual(expect.any(String));
          const again = await send(op, { ...call, headers: { ...call.headers, 'if-none-match': String(etag) } });
          expect(again.statusCode).toBe(304);
          const notModified = expectDocumentedResponse(op, again);
          for (const name of Object.keys(notModified?.headers ?? {})) expect(again.headers[name.toLowerCase()], `304 header ${name}`).toBeDefined();
        }
      });

      it.skipIf(walks[op.operationId]?.success !== undefined && walks[op.operationId]?.failure === undefined)(
        'a request that should fail answers a documented status with a body matching the documented problem schema',
        async () => {
          const failure = walks[op.operationId]?.failure;
          if (!failure) throw new Error(`no walk for ${op.operationId}`);
          const { status, ...call } = await failure();
          const res = await send(op, call);
          expect(res.statusCode, res.body).toBe(status);
          expect(mediaTypeOf(res)).toBe(answersOAuthErrors(op) ? 'application/json' : 'application/problem+json');
          expectDocumentedResponse(op, res);
        },
      );

      if (isReplay(op, '200')) {
        it('a repeated request with its Idempotency-Key answers the documented 200 replay', async () => {
          const walk = walks[op.operationId];
          if (!walk) throw new Error(`no walk for ${op.operationId}`);
          const call = await walk.success();
          const keyed = { ...call, headers: { ...call.headers, 'idempotency-key': `replay-${op.operationId}-${Date.now()}` } };
          expect((await send(op, keyed)).statusCode).toBeLessThan(300);
          const replay = await send(op, keyed);
          expect(replay.statusCode, replay.body).toBe(200);
          expect(replay.headers['idempotent-replayed']).toBe('true');
          expectDocumentedResponse(op, replay);
        });
      }

      const failures = Object.keys(op.operation.responses).filter((code) => /^[45]\d\d$/.test(code));
      it.each(failures)('documented status %s is reached by a real request, its body as documented', async (code) => {
        const status = Number(code);
        const slugs = slugsOf(op.operation.responses[code]);
        const walk = walks[op.operationId];
        if (!walk) throw new Error(`no walk for ${op.operationId}`);
        let res: LightMyRequestResponse | undefined;
        const own = reach[op.operationId]?.[status];
        const { status: failing, ...failure } = (await walk.failure?.()) ?? { status: undefined };
        if (own) {
          res = await send(op, await own());
        } else if (failing === status) {
          res = await send(op, failure);
        } else if (special[status]) {
          res = await special[status](op, await walk.success());
        } else {
          const probe = await genericProbes[status]?.(op, await walk.success());
          if (probe) res = await send(op, probe);
        }
        if (res === undefined) {
          const elsewhere = slugs.map((slug) => REACHED_ELSEWHERE[slug]);
          expect(elsewhere.every((where) => where !== undefined), `no probe reaches ${op.operationId} ${code} (${slugs.join(', ')}): add one to \`reach\` in its module's file of test/operations/`).toBe(true);
          return;
        }
        expect(res.statusCode, res.body).toBe(status);
        expectDocumentedResponse(op, res);
      });
    });
  }
});

describe('the 3.1 webhooks section lists every event type with its payload (docs/webhooks.md)', () => {
  type WebhookEntry = { post: { requestBody: { content: Record<string, { schema: JsonSchema }> } } };
  const webhooks = (doc as unknown as { webhooks?: Record<string, WebhookEntry> }).webhooks ?? {};
  const payloadSchema = (type: string) => webhooks[type]?.post.requestBody.content['application/json']?.schema;

  it('one POST per declared event type', () => {
    expect(Object.keys(webhooks).sort()).toEqual([...eventTypes().keys()].sort());
  });

  // Placed after the walk: by now its calls have written events of most types.
  it('each payload schema accepts the events of its type as GET /events answers them (the body of every delivery), and no other type', async () => {
    const seen: string[] = [];
    for (const type of eventTypes().keys()) {
      const events = (await read(`/api/v1/events?type=${type}&limit=3`, t.admin.token)).data as { type: string }[];
      for (const event of events) {
        expect(schemaErrors(payloadSchema(type), event), `${type} event`).toEqual([]);
        expect(schemaErrors(payloadSchema(type === 'order.paid' ? 'order.created' : 'order.paid'), event), `${type} event as another type`).not.toEqual([]);
      }
      if (events.length > 0) seen.push(type);
    }
    expect(seen).toEqual(expect.arrayContaining(['order.created', 'order.paid', 'payment.created', 'payment.updated', 'payment.refunded', 'fulfillment.created', 'product.created', 'user.created']));
  });
});
