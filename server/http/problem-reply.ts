import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, loggedCause, problemBody, type ProblemSlug } from '../errors/problems.ts';
import { toDomainError } from '../trpc/trpc.ts';

const PROBLEM_JSON = 'application/problem+json';

/** Fastify's own errors (parsing, limits, routing) as the problems they mean. */
const fastifyCodes: Record<string, [ProblemSlug, string]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported-media-type', 'The request body has a Content-Type this operation does not accept.'],
  FST_ERR_CTP_INVALID_TYPE: ['unsupported-media-type', 'The Content-Type header is invalid.'],
  FST_ERR_CTP_EMPTY_TYPE: ['unsupported-media-type', 'The Content-Type header is empty.'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['payload-too-large', 'The request body is larger than the limit.'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['malformed-request', 'The body is empty but Content-Type says JSON.'],
  FST_ERR_CTP_INVALID_JSON_BODY: ['malformed-request', 'The body is not valid JSON.'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['malformed-request', 'The Content-Length header does not match the body.'],
  FST_ERR_BAD_URL: ['malformed-request', 'The request URL is malformed.'],
  FST_ERR_MAX_PARAM_LENGTH: ['malformed-request', 'A path parameter is too long.'],
  FST_ERR_ASYNC_CONSTRAINT: ['malformed-request', 'The request could not be routed.'],
};

const statusSlugs: Record<number, ProblemSlug> = {
  400: 'malformed-request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not-found',
  405: 'method-not-allowed',
  406: 'not-acceptable',
  409: 'conflict',
  410: 'gone',
  412: 'precondition-failed',
  413: 'payload-too-large',
  415: 'unsupported-media-type',
  422: 'validation-error',
  429: 'rate-limited',
  503: 'service-unavailable',
};

interface ErrorLike {
  code?: unknown;
  statusCode?: unknown;
  name?: unknown;
}

/** Whatever was thrown, as a DomainError that is safe to show. Unknown failures become 500. */
export function asDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  const e = (error ?? {}) as ErrorLike;
  const known = typeof e.code === 'string' ? fastifyCodes[e.code] : undefined;
  if (known) return new DomainError(known[0], known[1]);
  if (error instanceof SyntaxError && e.statusCode === 400) {
    return new DomainError('malformed-request', 'The body is not valid JSON.');
  }
  const status = typeof e.statusCode === 'number' ? e.statusCode : undefined;
  if (status !== undefined && status >= 400 && status < 500) {
    const slug = statusSlugs[status] ?? 'malformed-request';
    return new DomainError(slug, `The request was rejected: ${slug.replace(/-/g, ' ')}.`);
  }
  // Database failures (503, out-of-range 422) and the 500 fallback, each keeping its cause.
  return toDomainError(error);
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: DomainError): FastifyReply {
  const body = problemBody(error, request.url.split('?')[0], String(request.id));
  return reply
    .code(body.status)
    .headers(error.headers)
    .header('content-type', PROBLEM_JSON)
    .header('cache-control', 'no-store')
    .send(JSON.stringify(body));
}

export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const domain = asDomainError(error);
  const accepts = request.routeOptions?.config?.accepts;
  if (domain.slug === 'unsupported-media-type' && accepts && Object.keys(domain.headers).length === 0) {
    domain.headers[request.method === 'PATCH' ? 'accept-patch' : 'accept-post'] = accepts;
  }
  if (domain.status >= 500) {
    // The underlying error (message, code, stack) goes to the log only; the body stays generic.
    request.log.error({ err: loggedCause(domain), reqId: request.id, problem: domain.slug }, 'request failed');
  }
  return sendProblem(request, reply, domain);
}
