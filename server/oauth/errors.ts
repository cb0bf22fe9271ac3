/**
 * Errors of the token and revocation endpoints (RFC 6749 section 5.2): one JSON body carrying
 * RFC 6749's `error` and `error_description` beside the problem-details fields (`type`, `title`,
 * `status`, `detail`, `instance`, `request_id`). Its media type is `application/json`, as RFC 6749
 * prescribes and OAuth clients check (oauth4webapi reads an error body only under that type).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, logFailure, problemBody, type ProblemSlug } from '../errors/problems.ts';
import { toDomainError } from '../errors/to-domain-error.ts';

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'unsupported_token_type'
  | 'temporarily_unavailable'
  | 'server_error';

const slugOf: Partial<Record<OAuthErrorCode, ProblemSlug>> = {
  invalid_request: 'invalid-request',
  invalid_client: 'invalid-client',
  invalid_grant: 'invalid-grant',
  unauthorized_client: 'unauthorized-client',
  unsupported_grant_type: 'unsupported-grant-type',
  invalid_scope: 'invalid-scope',
};

/** The realm of the Basic challenge an `invalid_client` answer carries. */
export const CLIENT_REALM = 'order-service';

/** An OAuth error of the token or revocation endpoint: its code, and the problem it is. */
export class OAuthError extends DomainError {
  /** A status other than the problem type's (`invalid_client` without the Authorization header: 400). */
  private readonly ownStatus: number | undefined;

  constructor(
    readonly error: OAuthErrorCode,
    description: string,
    options: { headers?: Record<string, string>; status?: number } = {},
  ) {
    const { status, ...rest } = options;
    super(slugOf[error] ?? 'invalid-request', description, rest);
    this.name = 'OAuthError';
    this.ownStatus = status;
  }

  override get status(): number {
    return this.ownStatus ?? super.status;
  }
}

export const invalidRequest = (description: string) => new OAuthError('invalid_request', description);
export const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);
export const invalidScope = (description: string) => new OAuthError('invalid_scope', description);
export const unauthorizedClient = (description: string) => new OAuthError('unauthorized_client', description);

/**
 * RFC 6749 section 5.2: 401 with a Basic challenge when the client tried the Authorization header
 * (HTTP requires a challenge on every 401); otherwise 400, so that a form another site posts
 * never makes the browser ask its user for a password.
 */
export const invalidClient = (description: string, usedAuthorizationHeader: boolean) =>
  usedAuthorizationHeader
    ? new OAuthError('invalid_client', description, { headers: { 'www-authenticate': `Basic realm="${CLIENT_REALM}", charset="UTF-8"` } })
    : new OAuthError('invalid_client', description, { status: 400 });

/** Anything thrown on an OAuth route, as the OAuth error it means (its problem slug and status kept). */
export function toOAuthError(thrown: unknown): { error: OAuthErrorCode; domain: DomainError } {
  if (thrown instanceof OAuthError) return { error: thrown.error, domain: thrown };
  const domain = toDomainError(thrown);
  const error: OAuthErrorCode =
    domain.status === 429 || domain.status === 503 ? 'temporarily_unavailable' : domain.status >= 500 ? 'server_error' : 'invalid_request';
  return { error, domain };
}

/**
 * RFC 6749 (sections 4.1.2.1 and 5.2) limits `error_description` to %x20-21 / %x23-5B / %x5D-7E:
 * printable ASCII without `"` and `\`.
 */
export function asDescription(detail: string): string {
  return detail.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, '?');
}

/** The token endpoint's no-caching headers (RFC 6749 section 5.1), on answers and errors alike. */
export function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

/**
 * The body of an OAuth error answer (the OpenAPI document's examples are made by it too). The
 * status is the error's own (an `invalid_client` may be 400 or 401), in the body as on the answer.
 */
export function oauthErrorBody(error: OAuthErrorCode, domain: DomainError, instance: string, requestId: string) {
  return { error, error_description: asDescription(domain.message), ...problemBody(domain, instance, requestId), status: domain.status };
}

export function sendOAuthError(request: FastifyRequest, reply: FastifyReply, thrown: unknown): FastifyReply {
  const { error, domain } = toOAuthError(thrown);
  logFailure(request.log, domain, { reqId: request.id }, 'request failed');
  const body = oauthErrorBody(error, domain, request.url.split('?')[0] ?? request.url, String(request.id));
  return noStore(reply.code(body.status).headers(domain.headers)).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(body));
}
