/**
 * The OpenAPI 3.1 document, built with zod-openapi from the route table (rest-routes.ts): the
 * same procedures, schemas, statuses and policies the REST facade serves, so the document says
 * what the service really does. Paths are whole (`/api/v1/...`, `/api/health`) under one server,
 * the origin the document is served from, so every generator calls every operation correctly.
 * The authorization server's endpoints (plain routes, not procedures) are described by the oauth
 * module (server/oauth/openapi-paths.ts) and gathered here.
 */
import { webhooksSection } from './openapi-webhooks.ts';
import type { AnyRouter } from '@trpc/server';
import type { z } from 'zod';
import { createDocument, createSchema, type oas31, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponseObject } from 'zod-openapi';
import { isPublic, SCOPES, type Policy } from '../auth/policy.ts';
import { scopeCatalogue, type Scope } from '../auth/scopes.ts';
import { MAX_LISTED_ERRORS, problemType, type Problem, type ProblemSlug } from '../errors/problems.ts';
import { unknownParameterError } from '../errors/unknown-parameters.ts';
import { API_PREFIX } from '../lib/api-paths.ts';
import { tagDescriptions } from '../lib/api-tags.ts';
import { examples, Id, MetadataMergePatch } from '../modules/common.schemas.ts';
import { honoursIdempotencyKey, IDEMPOTENCY_HEADER } from '../trpc/idempotency.ts';
import type { PatchMeta } from '../trpc/meta.ts';
import { linksOf, operationIdOf } from './openapi-links.ts';
import { restRoutes, type RestRoute } from './rest-routes.ts';

type Json = Record<string, unknown>;
type Scheme = 'bearerAuth' | 'oauth2';
type Security = Partial<Record<Scheme, string[]>>[];

const ref = (section: 'schemas' | 'headers' | 'parameters', name: string) => ({ $ref: `#/components/${section}/${name}` });
const problemPage = (slug: string) => `/problems/${slug}`;

// ---------------------------------------------------------------------------------------------
// Tags and scopes: what a reader of the docs page sees first.

/** Tags the service itself adds; the modules declare theirs (lib/api-tags.ts). */
const OWN_TAGS: Record<string, string> = {
  health: 'Liveness and readiness of the service and its database.',
};

/** What each OAuth scope grants (docs/api.md#scopes), as its module declares it (`<name>.scopes.ts`). */
const scopeDescriptions = (): Record<Scope, string> =>
  Object.fromEntries([...scopeCatalogue()].map(([name, scope]) => [name, scope.description])) as Record<Scope, string>;

const ROLE_NAMES = { customer: 'customers', admin: 'admins', service: 'service clients' } as const;

/**
 * Security per operation: public operations take a token but need none (`{}` first: anonymous
 * is enough; an invalid token is still 401); the others need a bearer token, which an OAuth 2.0
 * flow grants with the operation's scope.
 */
function securityOf(policy: Policy | undefined): Security {
  if (policy === undefined || isPublic(policy)) return [{}, { bearerAuth: [] }];
  return [{ bearerAuth: [] }, { oauth2: [policy.scope] }];
}

function accessText(policy: Policy | undefined): string {
  if (policy === undefined || isPublic(policy)) {
    return '**Access:** public; a token is optional (an invalid or expired one is still refused with 401).';
  }
  const who = policy.roles.map((role) => ROLE_NAMES[role]);
  const callers = who.length > 1 ? `${who.slice(0, -1).join(', ')} or ${who.at(-1)}` : who[0];
  return (
    `**Access:** ${callers}, with a token granting \`${policy.scope}\` (a token without a \`scope\` claim grants what its role allows; ` +
    'service clients always need the scope).'
  );
}

// ---------------------------------------------------------------------------------------------
// Headers and parameters shared by every operation (components, referenced).

const headerObject = (description: string, schema: Json = { type: 'string' }) => ({ description, schema });
const COUNT = { type: 'integer', minimum: 0, maximum: 2_147_483_647 };
const HEADERS = {
  'X-Request-Id': headerObject('The request id (echoed when the request sent a valid one); problems repeat it as `request_id`.'),
  'RateLimit-Limit': headerObject('Requests allowed per window for this caller.', COUNT),
  'RateLimit-Remaining': headerObject('Requests left in the current window.', COUNT),
  'RateLimit-Reset': headerObject('Seconds until the window resets.', COUNT),
  ETag: headerObject('Strong entity tag of the representation (send it back in `If-Match` or `If-None-Match`).'),
  'Last-Modified': headerObject('Time of the last change, as an HTTP date.'),
  'Cache-Control': headerObject('Caching policy: `public, max-age=60` (products), `private, max-age=0, must-revalidate` (orders, users, fulfillments) or `no-store` (payments, writes, errors).'),
  Location: headerObject('Path of the resource, under `/api/v1`.'),
  Link: headerObject('RFC 8288 links to the other pages: `rel="next"` and `rel="prev"` when they exist.'),
  'Idempotent-Replayed': headerObject('`true` on an answer replayed for a repeated `Idempotency-Key`.', { type: 'string', enum: ['true'] }),
  'Retry-After': headerObject('Seconds to wait before retrying.', COUNT),
  'WWW-Authenticate': headerObject('The Bearer challenge (RFC 6750), with `error="invalid_token"` or `error="insufficient_scope"`.'),
  'Accept-Post': headerObject('Media types this POST accepts.'),
  'Accept-Patch': headerObject('Media types this PATCH accepts.'),
} as const;
type HeaderName = keyof typeof HEADERS;
const headers = (...names: HeaderName[]) => Object.fromEntries(names.map((name) => [name, ref('headers', name)]));
const RATE_LIMIT: HeaderName[] = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];
/** On every answer, problems included. */
const ALWAYS: HeaderName[] = ['X-Request-Id', ...RATE_LIMIT];

/**
 * Conditional request headers (RFC 9110 section 13.1). `If-Match` must be `*` or a list of entity
 * tags; one that is not can never match, so the write is refused with 412. `If-None-Match` and
 * `If-Modified-Since` with a value that is not a tag list / HTTP date match nothing and are
 * ignored (RFC 9110 sections 13.1.2 and 13.1.3).
 */
const ENTITY_TAG = '(W/)?"[\\x21\\x23-\\x7E]*"';
const PARAMETERS = {
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    required: false,
    schema: { type: 'string', pattern: `^(\\*|${ENTITY_TAG}([ \\t]*,[ \\t]*${ENTITY_TAG})*)$` },
    description: 'Entity tag from a previous read (or `*`); a stale or malformed one answers 412 and changes nothing.',
  },
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    schema: { type: 'string' },
    description:
      'Entity tags of representations the client has (or `*`); when one is current the answer is 304. Wins over If-Modified-Since; a value that is no tag list matches nothing.',
  },
  IfModifiedSince: {
    name: 'If-Modified-Since',
    in: 'header',
    required: false,
    schema: { type: 'string' },
    description: 'An HTTP date; when the resource has not changed since, the answer is 304. A value that is no HTTP date is ignored.',
  },
  IdempotencyKey: {
    name: IDEMPOTENCY_HEADER,
    in: 'header',
    required: false,
    // docs/api.md#idempotency (server/trpc/idempotency.ts).
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]{1,255}$', example: 'order-17-payment-1' },
    description:
      'Makes a retry safe: the first request with a key runs once; the same key with the same request answers its stored ' +
      'result (200, `Idempotent-Replayed: true`); with another request 422 `idempotency-key-mismatch`; while the first still runs, the retry waits for ' +
      'it (409 `idempotency-key-in-use` with `Retry-After` after 10 s). Scoped to the caller, kept 24 hours; a failed attempt leaves the key free.',
  },
} as const;

// ---------------------------------------------------------------------------------------------
// Problems: one schema per slug (its `type` a constant, its extension members described), and per
// operation and status the problems it can answer, each with an example.

const PROBLEM = ref('schemas', 'Problem');
const fieldErrors = (minItems: number): Json => ({
  type: 'array',
  minItems,
  maxItems: MAX_LISTED_ERRORS,
  items: ref('schemas', 'FieldError'),
  description: `One entry per bad field: the first ${MAX_LISTED_ERRORS} (fewer per call in a /trpc batch); \`errors_total\` counts them all.`,
});
// Each bad field takes a few bytes of the body (1 MiB by default), so fewer than a million.
const errorsTotal: Json = { type: 'integer', minimum: 0, maximum: 1_048_576, description: 'How many bad fields there are, listed in `errors` or not.' };

interface ProblemExtension {
  properties: Record<string, Json>;
  required?: string[];
  example: Json;
}

/**
 * Members some core problems carry beside the RFC 9457 ones (`DomainError` extensions and
 * `errors`); a module's problems describe their own where they are declared (`openapi`).
 */
const PROBLEM_EXTENSIONS: Partial<Record<ProblemSlug, ProblemExtension>> = {
  'malformed-request': {
    properties: { errors: fieldErrors(0), errors_total: errorsTotal },
    example: { detail: 'Parameter "id" must be an integer.', errors: [{ field: 'id', message: 'must be an integer' }], errors_total: 1 },
  },
  'unknown-parameter': {
    properties: { errors: fieldErrors(1), errors_total: errorsTotal },
    required: ['errors', 'errors_total'],
    // The detail of an operation's example names what it takes (problemExample).
    example: { errors: [{ field: 'bogus', message: 'Unknown parameter' }], errors_total: 1 },
  },
  'validation-error': {
    properties: { errors: fieldErrors(1), errors_total: errorsTotal },
    required: ['errors', 'errors_total'],
    example: {
      detail: 'Invalid value for items.0.quantity.',
      errors: [{ field: 'items.0.quantity', message: 'Too small: expected number to be >=1' }],
      errors_total: 1,
    },
  },
  'insufficient-scope': {
    // SCOPES itself, not a copy: the modules declare their scopes as they load, maybe after this file.
    properties: { scope: { type: 'string', enum: SCOPES, description: 'The scope the operation needs.' } },
    required: ['scope'],
    example: { detail: 'This operation needs the "orders:write" scope, which your access token does not grant.', scope: 'orders:write' },
  },
  'precondition-failed': {
    properties: { current_etag: { type: 'string', description: "The resource's current entity tag." } },
    example: { detail: 'The resource has changed since you read it: If-Match does not match its current ETag.', current_etag: '"3q2-7wEAAAA"' },
  },
};

/** The members of `slug`'s problem beside the RFC 9457 ones, wherever they are described. */
function extensionOf(slug: ProblemSlug): ProblemExtension | undefined {
  const core = PROBLEM_EXTENSIONS[slug];
  if (core) return core;
  const declared = problemType(slug).openapi;
  if (!declared) return undefined;
  const listed: Record<string, Json> = declared.fieldErrors ? { errors: fieldErrors(1), errors_total: errorsTotal } : {};
  return { properties: { ...declared.properties, ...listed }, required: declared.required && [...declared.required], example: { ...declared.example } };
}

/** Example details of the core problems without members of their own. */
const PROBLEM_DETAILS: Partial<Record<ProblemSlug, string>> = {
  unauthorized: 'The access token is missing, invalid or expired.',
  forbidden: 'Your role may not perform this operation.',
  'not-found': 'The resource does not exist.',
  'not-acceptable': 'This API answers only application/json (and application/problem+json).',
  conflict: 'The request conflicts with the current state of the resource.',
  'duplicate-resource': 'A resource with this unique value already exists.',
  'idempotency-key-in-use': 'A request with this Idempotency-Key is still being processed; retry shortly.',
  'idempotency-key-mismatch': 'This Idempotency-Key was already used with a different request.',
  gone: 'The product was archived.',
  'payload-too-large': 'The body is larger than 1048576 bytes.',
  'unsupported-media-type': 'This operation accepts a body of type application/json.',
  'rate-limited': 'Rate limit exceeded: retry in 42 seconds.',
  'internal-error': 'An unexpected error occurred. It has been logged with the request id.',
  'service-unavailable': 'The database is unavailable. Retry later.',
};

const schemaName = (slug: string) => `${slug.replace(/(^|-)([a-z])/g, (_m, _dash: string, c: string) => c.toUpperCase())}Problem`;

function problemSchema(slug: ProblemSlug): Json {
  const type = problemType(slug);
  const extension = extensionOf(slug);
  return {
    allOf: [PROBLEM],
    type: 'object',
    description: `${type.title} (${type.status}): ${type.description} See [${problemPage(slug)}](${problemPage(slug)}).`,
    required: ['type', 'status', ...(extension?.required ?? [])],
    properties: { type: { const: problemPage(slug) }, status: { const: type.status }, ...extension?.properties },
  };
}

const EXAMPLE_REQUEST_ID = '0d9c7b1e-4b3a-4c52-9a53-8f1e2d7c6b5a';

function problemExample(slug: ProblemSlug, instance: string, route: RestRoute | undefined): Problem {
  const type = problemType(slug);
  const { detail = PROBLEM_DETAILS[slug] ?? `${type.title}.`, ...members } = extensionOf(slug)?.example ?? {};
  const scope = route?.policy && !isPublic(route.policy) ? route.policy.scope : undefined;
  return {
    type: problemPage(slug),
    title: type.title,
    status: type.status,
    detail: String(detail),
    instance,
    request_id: EXAMPLE_REQUEST_ID,
    ...members,
    ...(slug === 'insufficient-scope' && scope
      ? { scope, detail: `This operation needs the "${scope}" scope, which your access token does not grant.` }
      : {}),
    ...(slug === 'unknown-parameter' ? { detail: unknownParameterError(['bogus'], [...(route?.queryParams.keys() ?? [])]).message } : {}),
  };
}

/** Headers a problem of `slug` carries besides the ones every answer has. */
function problemHeaders(slug: ProblemSlug, route: RestRoute | undefined): HeaderName[] {
  switch (slug) {
    case 'unauthorized':
    case 'insufficient-scope':
      return ['WWW-Authenticate'];
    case 'rate-limited':
    case 'service-unavailable':
    case 'idempotency-key-in-use':
      return ['Retry-After'];
    case 'unsupported-media-type':
      return [route?.method === 'PATCH' ? 'Accept-Patch' : 'Accept-Post'];
    default:
      return [];
  }
}

/** The problems one status can carry on one operation: their schemas, headers and examples. */
function problemResponse(slugs: ProblemSlug[], instance: string, route: RestRoute | undefined): ZodOpenApiResponseObject {
  const links = slugs.map((slug) => `[\`${problemPage(slug)}\`](${problemPage(slug)}) ${problemType(slug).title}`);
  const schemas = slugs.map((slug) => ref('schemas', schemaName(slug)));
  const extra = [...new Set(slugs.flatMap((slug) => problemHeaders(slug, route)))];
  return {
    description: `Problem: ${links.join('; ')}.`,
    headers: headers(...ALWAYS, 'Cache-Control', ...extra),
    content: {
      'application/problem+json': {
        schema: schemas.length === 1 ? schemas[0] : { oneOf: schemas },
        // One example per status: the first slug, the operation's own problem when it has one.
        example: problemExample(slugs[0] as ProblemSlug, instance, route),
      },
    },
  };
}

/** The problem slugs an operation can answer, from its shape, its policy and its `meta.rest.problems`. */
function problemSlugs(route: RestRoute, creating: boolean): ProblemSlug[] {
  const isRead = route.method === 'GET';
  const slugs = new Set<ProblemSlug>(['unauthorized', 'not-acceptable', 'rate-limited', 'internal-error', 'service-unavailable']);
  // A body that is no JSON, a parameter that is no integer or boolean (or a list value it does not take), a malformed Idempotency-Key.
  const kinds = new Set([...route.pathParams.values(), ...route.queryParams.values()]);
  if (route.hasBody || kinds.has('int') || kinds.has('boolean') || kinds.has('list') || creating) slugs.add('malformed-request');
  // Every operation refuses a query parameter it does not take (docs/api.md#unknown-parameters).
  slugs.add('unknown-parameter');
  if (route.pathParams.size > 0) slugs.add('not-found');
  // A body or a query out of bounds; other 422s (an order confirmed without an address) are the operation's own.
  if (route.hasBody || (isRead && route.queryParams.size > 0)) slugs.add('validation-error');
  if (route.hasBody) {
    slugs.add('payload-too-large');
    slugs.add('unsupported-media-type');
  }
  const policy = route.policy;
  if (policy !== undefined && !isPublic(policy)) {
    slugs.add('insufficient-scope');
    // A role the policy does not list is refused whatever its token grants.
    if ((['customer', 'admin', 'service'] as const).some((role) => !policy.roles.includes(role))) slugs.add('forbidden');
  }
  for (const slug of route.rest.problems ?? []) slugs.add(slug);
  if (creating) {
    slugs.add('idempotency-key-in-use');
    slugs.add('idempotency-key-mismatch');
  }
  return [...slugs];
}

function problemResponses(slugs: readonly ProblemSlug[], instance: string, route: RestRoute | undefined): Record<string, ZodOpenApiResponseObject> {
  const byStatus = new Map<number, ProblemSlug[]>();
  for (const slug of slugs) {
    const status: number = problemType(slug).status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), slug]);
  }
  // The example of a status is its most telling problem: one with members of its own, then
  // one the operation names itself, then a generic one.
  const own = new Set<string>(route?.rest.problems ?? []);
  const hasMembers = (slug: ProblemSlug) => Object.keys(extensionOf(slug)?.properties ?? {}).length > 0;
  const weight = (slug: ProblemSlug) => (hasMembers(slug) ? 2 : 0) + (own.has(slug) ? 1 : 0);
  return Object.fromEntries(
    [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, list]) => [String(status), problemResponse([...list].sort((a, b) => weight(b) - weight(a)), instance, route)]),
  );
}

// ---------------------------------------------------------------------------------------------
// Operations.

/** `/orders/{id}/fulfillments/{fulfillmentId}` with example ids, for problem examples' `instance`. */
const examplePath = (path: string) => API_PREFIX + path.replace(/\{(\w+)\}/g, (_m, name: string) => (name === 'id' ? '17' : '3'));

const exampleOf = (schema: z.ZodType | undefined): unknown => (schema === undefined ? undefined : examples.get(schema)?.value);
const withExample = (example: unknown) => (example === undefined ? {} : { example });
/** A request example without the fields the path carries. */
function withoutKeys(example: unknown, keys: Iterable<string>): unknown {
  if (typeof example !== 'object' || example === null) return example;
  const drop = new Set(keys);
  return Object.fromEntries(Object.entries(example).filter(([key]) => !drop.has(key)));
}

/** An object schema of some of `input`'s fields (path, query or body), keeping strictness. */
function pick(input: z.ZodObject, keys: Iterable<string>): z.ZodObject {
  const wanted = new Set(keys);
  const mask = Object.fromEntries(Object.keys(input.shape).filter((key) => !wanted.has(key)).map((key) => [key, true] as const));
  // A shape whose keys are plain strings: no numeric key can be in the mask.
  return Object.keys(mask).length === 0 ? input : input.omit(mask as Record<string, true> & Record<number, never>);
}

const pascal = (path: string) => path.split(/[.-]/).map((part) => part.charAt(0).toUpperCase() + part.slice(1)).join('');

const ReadOnlyId = Id.optional().meta({ readOnly: true, description: 'Read-only: ignored when sent back (the path names the resource).' });

function buildOperation(route: RestRoute, routes: readonly RestRoute[]): ZodOpenApiOperationObject {
  // Creating operations, and the 200 actions that take a key too (rotate-secret): docs/api.md#idempotency.
  const keyed = honoursIdempotencyKey({ openapi: { method: route.method }, rest: route.rest });
  const isRead = route.method === 'GET';
  const status = route.rest.status ?? 200;
  const operationId = operationIdOf(route);
  const description = [route.description ?? route.summary ?? '', accessText(route.policy)].filter(Boolean).join('\n\n');

  const parameters: oas31.ReferenceObject[] = [];
  if (isRead) parameters.push(ref('parameters', 'IfNoneMatch'), ref('parameters', 'IfModifiedSince'));
  // Only the writes that check it (their problems include 412); others ignore the header.
  if (!isRead && route.rest.problems?.includes('precondition-failed')) parameters.push(ref('parameters', 'IfMatch'));
  if (keyed) parameters.push(ref('parameters', 'IdempotencyKey'));

  const requestParams: NonNullable<ZodOpenApiOperationObject['requestParams']> = {};
  if (route.pathParams.size > 0) requestParams.path = pick(route.input, route.pathParams.keys());
  if (route.queryParams.size > 0) requestParams.query = pick(route.input, route.queryParams.keys());

  let requestBody: ZodOpenApiOperationObject['requestBody'];
  if (route.rest.patch) {
    requestBody = patchRequestBody(route.rest.patch, `${pascal(route.procedurePath)}Body`);
  } else if (route.hasBody) {
    const bodyKeys = Object.keys(route.input.shape).filter((key) => !route.pathParams.has(key));
    // A copy of its own (not the input's registered id), so the body is inline, never a shared
    // component: openapi-typescript makes a component's members with a default required (its
    // `defaultNonNullable`), which in a request body they are not. GET-modify-PUT: the
    // representation sent back carries its `id`, which the path overrides.
    const fields = pick(route.input, bodyKeys);
    const body = route.method === 'PUT' && route.pathParams.has('id') ? fields.safeExtend({ id: ReadOnlyId }) : fields.safeExtend({});
    requestBody = {
      required: true,
      content: { 'application/json': { schema: body, ...withExample(withoutKeys(exampleOf(route.input), route.pathParams.keys())) } },
    };
  }

  const success: HeaderName[] = [...ALWAYS, 'Cache-Control'];
  if (status !== 204) success.push('ETag');
  if (status !== 204 && route.rest.kind === 'item') success.push('Last-Modified');
  if (route.rest.kind === 'list') success.push('Link');
  if (route.rest.location) success.push('Location');
  const content =
    status === 204 || route.output === undefined
      ? undefined
      : { 'application/json': { schema: route.output, ...withExample(exampleOf(route.output)) } };

  const responses: Record<string, ZodOpenApiResponseObject> = {};
  if (keyed && status !== 200) {
    responses['200'] = {
      description: route.rest.notReplayed?.length
        ? `Replayed: a request with this ${IDEMPOTENCY_HEADER} already succeeded; its stored result without ${route.rest.notReplayed.map((f) => `\`${f}\``).join(', ')} (shown only once), so the body and ETag are those GET answers; the same Location; nothing created again.`
        : `Replayed: a request with this ${IDEMPOTENCY_HEADER} already succeeded; its stored result (same body, Location and ETag), nothing created again.`,
      headers: headers(...success, 'Idempotent-Replayed'),
      ...(content ? { content } : {}),
    };
  }
  const links = linksOf(route, routes);
  responses[String(status)] = {
    description: {
      // An action answering 200 tells a replay by its header only: the same status, body and ETag.
      200: keyed ? `Success. A replay for the same ${IDEMPOTENCY_HEADER} answers this same body again, with \`Idempotent-Replayed: true\`; nothing runs again.` : 'Success.',
      201: 'Created.',
      202: 'Accepted: the work is requested; Location names it.',
      204: 'Done; no body.',
    }[status],
    headers: headers(...success),
    ...(content ? { content } : {}),
    ...(links ? { links } : {}),
  };
  if (isRead) {
    responses['304'] = {
      description: 'Not modified (If-None-Match / If-Modified-Since): no body; the representation the client has is current.',
      headers: headers(...ALWAYS, 'Cache-Control', 'ETag', ...(route.rest.kind === 'item' ? (['Last-Modified'] as const) : [])),
    };
  }
  Object.assign(responses, problemResponses(problemSlugs(route, keyed), examplePath(route.path), route));

  return {
    operationId,
    summary: route.summary,
    description,
    tags: route.tags,
    security: securityOf(route.policy),
    ...(parameters.length > 0 ? { parameters } : {}),
    requestParams,
    ...(requestBody ? { requestBody } : {}),
    responses,
    // A list (docs/api.md#lists-and-paging): paged by `page` and `limit` or by the `cursor` its pages
    // issue, never both. Tools can select the lists by it (scripts/schemathesis.toml does).
    ...(route.rest.kind === 'list' ? { 'x-list': true } : {}),
  };
}

/**
 * PATCH, both ways (docs/api.md#writes): a merge patch (RFC 7396; `application/json` is read as
 * one) is the resource's writable document with every member optional (or the schema the
 * operation names); a JSON Patch (RFC 6902) an array of operations. The patched document must be
 * a valid PUT body.
 */
function patchRequestBody(patch: PatchMeta, mergePatchName: string): NonNullable<ZodOpenApiOperationObject['requestBody']> {
  const merge = { schema: patch.mergePatch ?? ref('schemas', mergePatchName), example: patch.examples.mergePatch };
  return {
    required: true,
    description:
      'A merge patch (RFC 7396, `application/merge-patch+json`; `application/json` is read as one) or a JSON Patch (RFC 6902, ' +
      '`application/json-patch+json`). The patched resource must be a valid PUT body: 422 otherwise; a path that does not exist or a failed `test` is 409.',
    content: {
      'application/merge-patch+json': merge,
      'application/json-patch+json': { schema: ref('schemas', 'JsonPatch'), example: patch.examples.jsonPatch },
      'application/json': merge,
    },
  };
}

/** RFC 6901 JSON Pointer: empty (the whole document) or `/`-separated tokens, `~` only as ~0 or ~1. */
const jsonPointer = (description: string): Json => ({ type: 'string', pattern: '^(/([^~/]|~[01])*)*$', description });

/** RFC 6902 section 4: one schema per operation. Members an operation does not define are ignored. */
const jsonPatchOperation = (op: string, description: string, members: Record<string, Json>): Json => ({
  type: 'object',
  description,
  required: ['op', ...Object.keys(members)],
  properties: { op: { type: 'string', const: op }, ...members },
});
const patchValue = { description: 'Any JSON value, null included.' };
const JSON_PATCH_SCHEMAS: Record<string, Json> = {
  JsonPatch: {
    type: 'array',
    description: 'JSON Patch operations (RFC 6902), applied in order; all or none.',
    maxItems: 200,
    items: {
      oneOf: ['Add', 'Remove', 'Replace', 'Move', 'Copy', 'Test'].map((op) => ref('schemas', `JsonPatch${op}`)),
    },
  },
  JsonPatchAdd: jsonPatchOperation('add', 'Adds a value (`/items/-` appends).', {
    path: jsonPointer('Where to add, e.g. /address or /items/-.'),
    value: patchValue,
  }),
  JsonPatchRemove: jsonPatchOperation('remove', 'Removes a member.', { path: jsonPointer('The member to remove.') }),
  JsonPatchReplace: jsonPatchOperation('replace', 'Replaces an existing value.', {
    path: jsonPointer('The value to replace, e.g. /items/0/quantity.'),
    value: patchValue,
  }),
  JsonPatchMove: jsonPatchOperation('move', 'Moves a value.', { from: jsonPointer('The value to move.'), path: jsonPointer('Where to.') }),
  JsonPatchCopy: jsonPatchOperation('copy', 'Copies a value.', { from: jsonPointer('The value to copy.'), path: jsonPointer('Where to.') }),
  JsonPatchTest: jsonPatchOperation('test', 'Fails the whole patch (409) unless the value equals `value`.', {
    path: jsonPointer('The value to compare.'),
    value: patchValue,
  }),
};

// ---------------------------------------------------------------------------------------------
// The document.

const healthStatus = { type: 'string', enum: ['ok', 'unavailable'] };
const HEALTH_SCHEMA: Json = {
  type: 'object',
  description: '`degraded`: the service works but its rate-limit store (Redis) does not answer.',
  required: ['status', 'checks'],
  properties: {
    status: { type: 'string', enum: ['ok', 'degraded', 'unavailable'] },
    checks: {
      type: 'object',
      required: ['database'],
      properties: { database: healthStatus, rate_limit_store: healthStatus },
    },
  },
};

interface HealthCheck {
  path: string;
  operationId: string;
  summary: string;
  /** What 200 and 503 mean for this check. */
  description: string;
  /** When it answers 503: a health body, or the `service-unavailable` problem. */
  unavailable: string;
}

/** `GET /api/health` and `GET /api/health/ready` (server/http/health.ts): the same body, never cached. */
const HEALTH_CHECKS: HealthCheck[] = [
  {
    path: '/api/health',
    operationId: 'health',
    summary: 'Health check',
    description:
      'Whether the service and its database answer: 200 `ok` (or `degraded` when only the rate-limit store is down), 503 when the database ' +
      'does not answer or the service is shutting down.',
    unavailable: 'The database does not answer (a health body), or the service is shutting down',
  },
  {
    path: '/api/health/ready',
    operationId: 'health-ready',
    summary: 'Readiness check',
    description:
      'Whether to send requests to this instance (for a load balancer): 200 `ok` (or `degraded` when only the rate-limit store is down) once ' +
      'it listens and its bootstrap is done; 503 while it starts, from the moment it is told to stop (before its drain, so that traffic ' +
      'moves elsewhere first), and while its database does not answer.',
    unavailable: 'The service is starting or stopping, or its database does not answer (a health body), or it is draining its connections',
  },
];

function healthOperation(check: HealthCheck): ZodOpenApiOperationObject {
  const instance = check.path;
  const problems = problemResponses(['unknown-parameter', 'unauthorized', 'not-acceptable', 'rate-limited', 'internal-error'], instance, undefined);
  const unavailable = problemResponse(['service-unavailable'], instance, undefined);
  return {
    operationId: check.operationId,
    tags: ['health'],
    summary: check.summary,
    description: `${check.description} Never cached.\n\n${accessText(undefined)}`,
    security: securityOf(undefined),
    responses: {
      '200': {
        description: 'Healthy.',
        headers: headers(...ALWAYS, 'Cache-Control'),
        content: { 'application/json': { schema: HEALTH_SCHEMA, example: { status: 'ok', checks: { database: 'ok' } } } },
      },
      ...problems,
      '503': {
        description: `${check.unavailable} (${unavailable.description}).`,
        headers: headers(...ALWAYS, 'Cache-Control', 'Retry-After'),
        content: {
          'application/json': { schema: HEALTH_SCHEMA, example: { status: 'unavailable', checks: { database: 'unavailable' } } },
          ...unavailable.content,
        },
      },
    },
  };
}

const PROBLEM_BASE: Json = {
  type: 'object',
  description:
    'RFC 9457 problem details, the body of every 4xx and 5xx answer (`application/problem+json`). `type` names the problem: GET it for a page that explains it.',
  required: ['type', 'title', 'status', 'detail'],
  properties: {
    type: { type: 'string', format: 'uri-reference', pattern: '^/problems/[a-z0-9-]+$', description: 'URI reference `/problems/<slug>`.' },
    title: { type: 'string', description: 'Short summary of the problem type.' },
    status: { type: 'integer', minimum: 400, maximum: 599, description: 'The HTTP status.' },
    detail: { type: 'string', description: 'What went wrong with this request.' },
    instance: { type: 'string', description: 'Path of the request that failed.' },
    request_id: { type: 'string', description: 'The `X-Request-Id` of the answer.' },
  },
};

const FIELD_ERROR: Json = {
  type: 'object',
  required: ['field', 'message'],
  properties: {
    field: { type: 'string', description: 'Dotted path of the field, such as `items.0.quantity` (a header or parameter by its name).', example: 'items.0.quantity' },
    message: { type: 'string', description: 'What is wrong with it.' },
  },
};

/**
 * The merge patch document (RFC 7396): every member of the PUT body optional; `null` removes a
 * member, which a nullable field (`address`, `discount_code`) and the read-only ones allow; on a
 * required field it is refused (422); an array replaces the whole array; `metadata` merges.
 */
function mergePatchSchema(orderDocument: Json | undefined): Json {
  const properties = { ...((orderDocument?.properties as Record<string, Json> | undefined) ?? {}) };
  // Metadata merges key by key (docs/api.md#metadata): a key set to null is removed.
  if (properties.metadata) properties.metadata = createSchema(MetadataMergePatch, { io: 'input' }).schema as Json;
  for (const [name, schema] of Object.entries(properties)) {
    if (schema.readOnly === true) {
      const type = { ...schema };
      delete type.readOnly;
      delete type.description;
      properties[name] = { anyOf: [type, { type: 'null' }], readOnly: true, description: schema.description };
    }
  }
  return {
    type: 'object',
    description: 'Members to change; `null` removes a nullable member; an array replaces the whole array. Unknown members are refused (422).',
    // A member left out is unchanged: no default applies.
    properties: JSON.parse(JSON.stringify(properties), (key, value: unknown) => (key === 'default' ? undefined : value)) as Json,
    additionalProperties: false,
  };
}

/**
 * A part of the document described beside the router rather than from it (the OAuth 2.0
 * endpoints, server/oauth/openapi-paths.ts): its tag, paths and the components they use. The
 * caller that assembles the service hands them in, so this file knows nothing of them.
 */
export interface DocumentPart {
  tag: { name: string; description: string };
  paths: Readonly<Record<string, unknown>>;
  schemas?: Readonly<Record<string, Json>>;
  headers?: Readonly<Record<string, unknown>>;
  securitySchemes?: Readonly<Record<string, unknown>>;
}

export function buildOpenApiDocument(router: AnyRouter, version: string, parts: readonly DocumentPart[]): oas31.OpenAPIObject {
  const routes = restRoutes(router);
  const paths: ZodOpenApiPathsObject = {};
  const usedSlugs = new Set<ProblemSlug>(['unknown-parameter', 'unauthorized', 'not-acceptable', 'rate-limited', 'internal-error', 'service-unavailable']);
  for (const route of routes) {
    const operation = buildOperation(route, routes);
    for (const slug of problemSlugs(route, honoursIdempotencyKey({ openapi: { method: route.method }, rest: route.rest }))) usedSlugs.add(slug);
    const item = (paths[API_PREFIX + route.path] ??= {});
    item[route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'] = operation;
  }
  for (const check of HEALTH_CHECKS) paths[check.path] = { get: healthOperation(check) };
  for (const part of parts) Object.assign(paths, part.paths);

  const tags = [...new Set([...routes.flatMap((route) => route.tags), 'health'])];
  const document = createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'order-service',
        version,
        description:
          'Order handling: products, users, orders, payments and fulfillments.\n\n' +
          '- Every path is whole: resources under `/api/v1` (`/api/<resource>` answers the same), the health and readiness checks at `/api/health` and `/api/health/ready`.\n' +
          '- Every error is an RFC 9457 problem (`application/problem+json`) whose `type` is `/problems/<slug>`, a page explaining it.\n' +
          '- Access tokens are JWTs sent as `Authorization: Bearer <token>`; the service\'s OAuth 2.0 authorization server (`/oauth/token`, ' +
          '`/oauth/revoke`, metadata at `/.well-known/oauth-authorization-server`, all described here) issues them with the scopes each operation names.\n' +
          '- Reads carry `ETag` (304 on `If-None-Match`), writes take `If-Match` (412 when stale), creating POSTs take `Idempotency-Key`.',
        contact: { name: 'order-service maintainers', url: 'https://github.com/order-service/order-service', email: 'api@order-service.example' },
        license: { name: 'MIT', url: 'https://github.com/order-service/order-service/blob/main/LICENSE' },
      },
      // The origin the document is served from; every path carries its prefix.
      servers: [{ url: '/', description: 'This service (the origin serving this document).' }],
      tags: [...tags.map((name) => ({ name, description: tagDescriptions().get(name) ?? OWN_TAGS[name] ?? `Operations on ${name}.` })), ...parts.map((part) => part.tag)],
      paths,
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'An access token (JWT) from the OAuth 2.0 endpoints below, or from an accepted external issuer.',
          },
          ...(Object.assign({}, ...parts.map((part) => part.securitySchemes)) as Record<string, oas31.SecuritySchemeObject>),
          oauth2: {
            type: 'oauth2',
            description:
              'The service\'s own authorization server. Browsers and mobile apps: Authorization Code with PKCE (S256). Backends: Client Credentials. ' +
              'First-party apps: Resource Owner Password. Refresh tokens rotate on every use.',
            flows: {
              authorizationCode: {
                authorizationUrl: '/oauth/authorize',
                tokenUrl: '/oauth/token',
                refreshUrl: '/oauth/token',
                scopes: scopeDescriptions(),
              },
              clientCredentials: { tokenUrl: '/oauth/token', scopes: scopeDescriptions() },
              password: { tokenUrl: '/oauth/token', refreshUrl: '/oauth/token', scopes: scopeDescriptions() },
            },
          },
        },
        headers: { ...HEADERS, ...Object.assign({}, ...parts.map((part) => part.headers)) } as unknown as Record<string, oas31.HeaderObject>,
        parameters: PARAMETERS as unknown as Record<string, oas31.ParameterObject>,
        schemas: {
          Problem: PROBLEM_BASE as oas31.SchemaObject,
          FieldError: FIELD_ERROR as oas31.SchemaObject,
          ...(Object.fromEntries([...usedSlugs].map((slug) => [schemaName(slug), problemSchema(slug)])) as Record<string, oas31.SchemaObject>),
          ...(JSON_PATCH_SCHEMAS as Record<string, oas31.SchemaObject>),
          ...(Object.assign({}, ...parts.map((part) => part.schemas)) as Record<string, oas31.SchemaObject>),
        },
      },
    },
  );
  // A merge patch is the PUT body of the same path with every member optional.
  const components = document.components as { schemas: Record<string, Json> };
  const documentPaths = document.paths as Record<string, { put?: { requestBody?: { content?: Record<string, { schema?: Json }> } } }>;
  for (const route of routes.filter((r) => r.rest.patch && !r.rest.patch.mergePatch)) {
    const putBody = documentPaths[API_PREFIX + route.path]?.put?.requestBody?.content?.['application/json']?.schema;
    if (!putBody) throw new Error(`${route.procedurePath}: a PATCH needs a PUT on ${route.path} to describe its merge patch`);
    components.schemas[`${pascal(route.procedurePath)}Body`] = mergePatchSchema(putBody);
  }
  // What a webhook endpoint receives, one entry per event type (server/http/openapi-webhooks.ts).
  const section = webhooksSection(components.schemas as Record<string, Record<string, unknown>>);
  Object.assign(components.schemas, section.schemas);
  (document as { webhooks?: unknown }).webhooks = section.webhooks;
  return document;
}
