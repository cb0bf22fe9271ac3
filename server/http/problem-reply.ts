import type { FastifyReply, FastifyRequest } from 'fastify';
import { logFailure, problemBody, type DomainError } from '../errors/problems.ts';
import { toDomainError } from '../errors/to-domain-error.ts';

const PROBLEM_JSON = 'application/problem+json';

export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: DomainError): FastifyReply {
  const body = problemBody(error, request.url.split('?')[0], String(request.id));
  return reply
    .code(body.status)
    .headers(error.headers)
    .header('content-type', PROBLEM_JSON)
    .header('cache-control', 'no-store')
    // Also here: router refusals (an undecodable URL) answer before the onRequest hook sets it.
    .header('x-request-id', String(request.id))
    .header('x-content-type-options', 'nosniff')
    .send(JSON.stringify(body));
}

export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const domain = toDomainError(error);
  const accepts = request.routeOptions?.config?.accepts;
  if (domain.slug === 'unsupported-media-type' && accepts && Object.keys(domain.headers).length === 0) {
    domain.headers[request.method === 'PATCH' ? 'accept-patch' : 'accept-post'] = accepts;
  }
  // What failed goes to the log only (a bug's stack included); the body stays generic.
  logFailure(request.log, domain, { reqId: request.id }, 'request failed');
  return sendProblem(request, reply, domain);
}
