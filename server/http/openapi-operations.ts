/**
 * One operation of the OpenAPI document per REST route (rest-routes.ts): its parameters, request
 * body, answers with their headers and links, and the problems it can answer, from the
 * procedure's schemas, status, policy and `meta.rest`.
 */
import type { z } from 'zod';
import type { oas31, ZodOpenApiOperationObject, ZodOpenApiResponseObject } from 'zod-openapi';
import { API_PREFIX } from '../lib/api-paths.ts';
import { examples, Id } from '../modules/common.schemas.ts';
import { honoursIdempotencyKey, IDEMPOTENCY_HEADER } from '../trpc/idempotency.ts';
import { accessText, ALWAYS, headers, ref, securityOf, type HeaderName } from './openapi-components.ts';
import { linksOf, operationIdOf } from './openapi-links.ts';
import { mergePatchName, patchRequestBody } from './openapi-patch.ts';
import { problemResponses, problemSlugs } from './openapi-problems.ts';
import type { RestRoute } from './rest-routes.ts';

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

const ReadOnlyId = Id.optional().meta({ readOnly: true, description: 'Read-only: ignored when sent back (the path names the resource).' });

export function buildOperation(route: RestRoute, routes: readonly RestRoute[]): ZodOpenApiOperationObject {
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
    requestBody = patchRequestBody(route.rest.patch, mergePatchName(route));
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
