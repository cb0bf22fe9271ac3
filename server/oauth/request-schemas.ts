/**
 * What the token and revocation endpoints read, as Zod schemas: form parameters (RFC 6749 section
 * 3.2), also accepted as a JSON object of strings. The endpoints parse with them (which parameters
 * each defines, what a grant requires, the PKCE verifier's form: token.ts, revoke.ts) and
 * zod-openapi renders them in the OpenAPI document (openapi-paths.ts), so the two cannot disagree.
 * Every parameter is first checked as `OAuthParameter` (params.ts): a string of at most
 * MAX_PARAMETER_LENGTH characters without NUL, else 400 `invalid_request`.
 */
import { z } from 'zod';
import { SCOPES } from '../auth/policy.ts';
import type { GrantType } from '../db/schema.ts';
import { MAX_PARAMETER_LENGTH, OAuthParameter } from './params.ts';
import { CODE_VERIFIER } from './pkce.ts';

// eslint-disable-next-line no-control-regex -- no NUL, as OAuthParameter: matching it is the point
const NOT_EMPTY = /^[^\u0000]+$/;

/** A parameter a request may leave out (sent empty is the same, RFC 6749 section 3.1): any `OAuthParameter`, or one matching `pattern`. */
const optional = (description: string, pattern?: RegExp) =>
  (pattern ? z.string().max(MAX_PARAMETER_LENGTH).regex(pattern) : OAuthParameter).meta({ description }).optional();

/**
 * A parameter the request must send: without it, 400 `invalid_request` naming it; one that does
 * not match `pattern` is refused with `refusal`.
 */
const required = (description: string, options: { pattern?: RegExp; refusal?: string; meta?: Record<string, unknown> } = {}) =>
  z
    .string()
    .min(1)
    .max(MAX_PARAMETER_LENGTH)
    .regex(options.pattern ?? NOT_EMPTY, options.refusal)
    .meta({ description, ...options.meta });

const CLIENT_PARAMETERS = {
  client_id: optional(
    "The client's id. A public client authenticates with it alone (`none`); a confidential one sends it with `client_secret` " +
      '(`client_secret_post`), or uses HTTP Basic instead (`clientBasic`; then leave it out or send the same id).',
  ),
  client_secret: optional("A confidential client's secret (`client_secret_post`); never together with HTTP Basic (400 `invalid_request`)."),
};

/** Any scope name, read when a schema is built: the modules declare their scopes as they load (auth/scopes.ts). */
export const scopeNames = (): string => `(${SCOPES.join('|')})`;

/**
 * Known scope names separated by single spaces; empty is the same as leaving it out. What a
 * request may ask for is narrower (what the client is registered for, or was granted): the grant
 * checks it with grantScope (scope.ts), whose refusal (`invalid_scope`) names what may be granted.
 */
const scopeParameter = (within: string) =>
  optional(`Scopes to grant, separated by spaces; only within ${within} (400 \`invalid_scope\` otherwise). Left out: all of them.`, new RegExp(`^(${scopeNames()}( ${scopeNames()})*)?$`));

const grant = <Type extends GrantType, Shape extends z.ZodRawShape>(grantType: Type, title: string, description: string, parameters: Shape) =>
  z
    .object({ grant_type: z.literal(grantType), ...parameters, ...CLIENT_PARAMETERS })
    .meta({ title, description: `${description} Parameters the grant does not define are ignored.` });

/**
 * One request schema per grant type, built with the scopes declared so far. Every grant type the
 * service accepts is here (Record), so none goes undescribed or unparsed.
 */
export const tokenGrants = () =>
  ({
    authorization_code: grant(
      'authorization_code',
      'Authorization code with PKCE',
      'RFC 6749 section 4.1.3 with RFC 7636: the code `/oauth/authorize` redirected with, for browser and mobile apps.',
      {
        code: required('The authorization code of the redirect: single use, valid 60 seconds.'),
        redirect_uri: required('The `redirect_uri` of the authorization request, exactly.'),
        code_verifier: required('The PKCE verifier (RFC 7636) whose S256 challenge the authorization request sent.', {
          pattern: CODE_VERIFIER,
          refusal: 'The code_verifier must be 43-128 characters of A-Z, a-z, 0-9, -, ., _ and ~ (RFC 7636).',
        }),
      },
    ),
    refresh_token: grant(
      'refresh_token',
      'Refresh token (rotating)',
      'RFC 6749 section 6: a new access token and a new refresh token; the one sent is used up, and sending it again revokes every token of its sign-in.',
      {
        refresh_token: required('The refresh token of the last answer.'),
        scope: scopeParameter('the scope originally granted'),
      },
    ),
    client_credentials: grant(
      'client_credentials',
      'Client credentials (a confidential client for itself)',
      "RFC 6749 section 4.4: a confidential client's own token (role `service`, `sub` its id), without a refresh token.",
      { scope: scopeParameter("the client's registered scopes") },
    ),
    password: grant(
      'password',
      'Resource owner password (first-party apps)',
      "RFC 6749 section 4.3, for first-party clients only: a user's email and password. Repeated failures make further attempts wait (400 `invalid_grant` with `Retry-After`).",
      {
        username: required("The user's email."),
        password: required("The user's password.", { meta: { format: 'password', writeOnly: true } }),
        scope: scopeParameter("the client's registered scopes"),
      },
    ),
  }) satisfies Record<GrantType, z.ZodObject>;

export type TokenGrants = ReturnType<typeof tokenGrants>;

/** RFC 7009 section 2.1, with client authentication. */
export const RevocationRequest = z
  .object({
    token: required(
      'The token to revoke. A refresh token is revoked with every token of its sign-in; an access token (a JWT the service never looks up) ' +
        'stays valid until it expires, and the answer is 200 all the same.',
    ),
    token_type_hint: optional('`refresh_token` or `access_token`: only a hint, the form of the token decides.'),
    ...CLIENT_PARAMETERS,
  })
  .meta({ description: 'RFC 7009 section 2.1, with client authentication. Parameters it does not define are ignored.' });

const namesOf = (...schemas: z.ZodObject[]): string[] => [...new Set(schemas.flatMap((schema) => Object.keys(schema.shape)))];

/** What the token endpoint reads (RFC 6749 sections 2.3.1, 4.1.3, 4.3.2, 4.4.2, 6; RFC 7636 4.5): every grant's parameters. */
export const TOKEN_PARAMETERS: readonly string[] = namesOf(...Object.values(tokenGrants()));

/** What the revocation endpoint reads (RFC 7009 section 2.1, with client authentication). */
export const REVOKE_PARAMETERS: readonly string[] = namesOf(RevocationRequest);
