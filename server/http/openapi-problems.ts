/**
 * Problems in the OpenAPI document: one schema per slug (its `type` a constant, its extension
 * members described), the RFC 9457 base they extend, and per operation and status the problems
 * it can answer, each with an example (docs/api.md#errors).
 */
import type { ZodOpenApiResponseObject } from 'zod-openapi';
import { isPublic, SCOPES } from '../auth/policy.ts';
import { MAX_LISTED_ERRORS, problemType, type Problem, type ProblemSlug } from '../errors/problems.ts';
import { unknownParameterError } from '../errors/unknown-parameters.ts';
import { ALWAYS, headers, problemPage, ref, type HeaderName, type Json } from './openapi-components.ts';
import type { RestRoute } from './rest-routes.ts';

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
export function problemResponse(slugs: ProblemSlug[], instance: string, route: RestRoute | undefined): ZodOpenApiResponseObject {
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
export function problemSlugs(route: RestRoute, creating: boolean): ProblemSlug[] {
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

export function problemResponses(slugs: readonly ProblemSlug[], instance: string, route: RestRoute | undefined): Record<string, ZodOpenApiResponseObject> {
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

/** The schemas of the problems `slugs`, beside the RFC 9457 base they extend and the field error they list. */
export function problemSchemas(slugs: Iterable<ProblemSlug>): Record<string, Json> {
  return {
    Problem: PROBLEM_BASE,
    FieldError: FIELD_ERROR,
    ...Object.fromEntries([...slugs].map((slug) => [schemaName(slug), problemSchema(slug)])),
  };
}
