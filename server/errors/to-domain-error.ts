import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { databaseProblem } from './db-errors.ts';
import { DomainError, internalError, type ProblemSlug } from './problems.ts';
import { unknownInputMembers, unknownParameterError } from './unknown-parameters.ts';
import { validationError } from './zod-errors.ts';

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

/** A 4xx a plugin raised without one of the codes above: the slug its status means. */
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

/** tRPC's own refusals, raised before any procedure runs (unknown procedure, unparsable call...). */
function fromTrpcCode(error: TRPCError): DomainError | undefined {
  switch (error.code) {
    case 'NOT_FOUND':
      return new DomainError('not-found', 'No such procedure.');
    case 'METHOD_NOT_SUPPORTED':
      return new DomainError('method-not-allowed', error.message);
    case 'PARSE_ERROR':
    case 'BAD_REQUEST':
      return new DomainError('malformed-request', 'The request could not be parsed.');
    case 'PAYLOAD_TOO_LARGE':
      return new DomainError('payload-too-large', 'The request body is too large.');
    case 'UNSUPPORTED_MEDIA_TYPE':
      return new DomainError('unsupported-media-type', 'The request has an unsupported Content-Type.');
    default:
      return undefined;
  }
}

interface ErrorLike {
  code?: unknown;
  statusCode?: unknown;
}

/** What Fastify (or a plugin) refused before or around a route, read from its code and status. */
function fromFastify(error: unknown): DomainError | undefined {
  const e = (typeof error === 'object' && error !== null ? error : {}) as ErrorLike;
  const known = typeof e.code === 'string' ? fastifyCodes[e.code] : undefined;
  if (known) return new DomainError(known[0], known[1]);
  if (error instanceof SyntaxError && e.statusCode === 400) return new DomainError('malformed-request', 'The body is not valid JSON.');
  const status = typeof e.statusCode === 'number' ? e.statusCode : undefined;
  if (status !== undefined && status >= 400 && status < 500) {
    const slug = statusSlugs[status] ?? 'malformed-request';
    return new DomainError(slug, `The request was rejected: ${slug.replace(/-/g, ' ')}.`);
  }
  return undefined;
}

/**
 * The one conversion of whatever was thrown into the DomainError it means, for every layer that
 * answers: tRPC's error formatter and its domain-errors middleware, `/trpc`'s response headers,
 * the REST facade and Fastify's error handler. A DomainError is itself; a TRPCError is read
 * through its cause; Fastify's refusals, database failures and anything else (a 500 that keeps
 * its cause for the log) follow.
 */
export function toDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  if (error instanceof TRPCError) {
    const cause = error.cause;
    if (cause instanceof DomainError) return cause;
    // Only input validation is the client's fault; a ZodError under another code (output
    // validation) is the service's own bug and stays a 500 below.
    if (error.code === 'BAD_REQUEST' && cause instanceof z.ZodError) return validationError(cause.issues);
    return fromTrpcCode(error) ?? databaseProblem(cause) ?? internalError(cause);
  }
  return fromFastify(error) ?? databaseProblem(error) ?? internalError(error);
}

/**
 * `toDomainError` for a query procedure (a read): input members its strict schema does not take
 * are its unknown parameters, refused as REST refuses an unknown query parameter (400
 * `unknown-parameter`, before any complaint about a value). A mutation's input is its body, whose
 * unknown members stay 422 (docs/api.md#unknown-parameters).
 */
export function toQueryDomainError(error: unknown): DomainError {
  if (error instanceof TRPCError && error.code === 'BAD_REQUEST' && error.cause instanceof z.ZodError) {
    const unknown = unknownInputMembers(error.cause.issues);
    if (unknown.length > 0) return unknownParameterError(unknown);
  }
  return toDomainError(error);
}
