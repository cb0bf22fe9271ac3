/**
 * The authorization server in the OpenAPI document: POST /oauth/token, POST /oauth/revoke and the
 * metadata document, which server/http/openapi.ts gathers beside the procedures' operations. They
 * are plain Fastify routes, not procedures, so this module describes them itself: their requests
 * are the schemas the endpoints parse with (request-schemas.ts), rendered by zod-openapi; the rest
 * comes from the constants the endpoints read (scopes, the metadata members) and from the errors
 * they throw: each status, `error` code, problem type, header and example comes from an error
 * built as the endpoint builds it.
 * `/oauth/authorize` is a browser's page (an HTML form), named by the `oauth2` security scheme.
 */
import type { z } from 'zod';
import { createSchema } from 'zod-openapi';
import { MAX_ACCESS_TOKEN_TTL_SECONDS } from '../auth/tokens.ts';
import type { GrantType } from '../db/schema.ts';
import { DomainError, problemBody, problemType } from '../errors/problems.ts';
import { toDomainError } from '../errors/to-domain-error.ts';
import { DEV_CLIENT_ID, DEV_REDIRECT_URI } from '../modules/clients/clients.service.ts';
import { UNKNOWN_CLIENT } from './client-auth.ts';
import {
  invalidClient,
  invalidGrant,
  invalidRequest,
  invalidScope,
  OAuthError,
  oauthErrorBody,
  toOAuthError,
  unauthorizedClient,
  type OAuthErrorCode,
} from './errors.ts';
import { METADATA_PATH, metadataDocument } from './metadata.ts';
import { REVOKE_PATH, TOKEN_PATH } from './register.ts';
import { RevocationRequest, scopeNames, tokenGrants } from './request-schemas.ts';
import { defaultOAuthSettings } from './settings.ts';
import { waitMessage, WRONG_CREDENTIALS } from './sign-in.ts';

type Json = Record<string, unknown>;

const OAUTH_TAG = 'oauth';
const FORM = 'application/x-www-form-urlencoded';

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });
const problemPage = (slug: string) => `/problems/${slug}`;

// ---------------------------------------------------------------------------------------------
// Requests: the endpoints' own request schemas (request-schemas.ts), rendered by zod-openapi.

/** `schema` rendered as a request (`io: 'input'`), its members in `order` (the document's), then any others. */
function rendered(schema: z.ZodType, order: readonly string[]): Json {
  const json = createSchema(schema, { io: 'input' }).schema as Json;
  const keys = [...order.filter((key) => key in json), ...Object.keys(json).filter((key) => !order.includes(key))];
  return Object.fromEntries(keys.map((key) => [key, json[key]]));
}

/** How the document names and shows each grant's request (Record: a grant type the service adds must be described). */
const GRANTS: Record<GrantType, { schema: string; example: Record<string, string> }> = {
  authorization_code: {
    schema: 'AuthorizationCodeGrant',
    example: {
      grant_type: 'authorization_code',
      code: 'jM0sQn0V1m2gk3Yq9yCq7d4tQeH2c8wJ6uS1bR5xZ0A',
      redirect_uri: DEV_REDIRECT_URI,
      code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
      client_id: DEV_CLIENT_ID,
    },
  },
  refresh_token: {
    schema: 'RefreshTokenGrant',
    example: { grant_type: 'refresh_token', refresh_token: 'eki2oU6N5u3qGkq1N7R2qB4sPpU0yT8cVxWm9aZdLfE', client_id: DEV_CLIENT_ID },
  },
  client_credentials: {
    schema: 'ClientCredentialsGrant',
    example: { grant_type: 'client_credentials', scope: 'orders:read fulfillments:write' },
  },
  password: {
    schema: 'PasswordGrant',
    example: { grant_type: 'password', username: 'ada@example.com', password: 'correct-horse-battery', client_id: DEV_CLIENT_ID, scope: 'orders:read orders:write' },
  },
};

const grantEntries = (): [GrantType, { schema: string; example: Record<string, string> }][] => Object.entries(GRANTS) as [GrantType, (typeof GRANTS)[GrantType]][];

/** A grant's request schema, and its title as the summary of its example. */
const grantSchema = (grantType: GrantType): Json => rendered(tokenGrants()[grantType], ['type', 'title', 'description', 'required', 'properties']);
const grantSummary = (grantType: GrantType): string => String(tokenGrants()[grantType].meta()?.title);

const TOKEN_REQUEST: Json = {
  description: 'A grant: `grant_type` and its parameters, with the client\'s own when it does not use HTTP Basic.',
  oneOf: grantEntries().map(([, grant]) => schemaRef(grant.schema)),
  discriminator: { propertyName: 'grant_type', mapping: Object.fromEntries(grantEntries().map(([type, grant]) => [type, `#/components/schemas/${grant.schema}`])) },
};

function requestBody(description: string, schema: Json, examples: Record<string, { summary: string; value: Json }>): Json {
  const media = { schema, examples };
  return { required: true, description, content: { [FORM]: media, 'application/json': media } };
}

// ---------------------------------------------------------------------------------------------
// Answers.

/** `scope` answered: the granted scope names, separated by single spaces. */
const grantedScope = (): string => `^${scopeNames()}( ${scopeNames()})*$`;

const tokenResponse = (): Json => ({
  type: 'object',
  description: 'RFC 6749 section 5.1. Never cached (`Cache-Control: no-store`).',
  required: ['access_token', 'token_type', 'expires_in', 'scope'],
  properties: {
    access_token: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]*$',
      description: 'A JWT to send as `Authorization: Bearer <token>` to `/api/v1`.',
    },
    token_type: { type: 'string', const: 'Bearer' },
    expires_in: { type: 'integer', minimum: 1, maximum: MAX_ACCESS_TOKEN_TTL_SECONDS, description: 'Seconds the access token is valid (15 minutes by default).' },
    refresh_token: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{43}$',
      description:
        "For a user's tokens when the client may use the `refresh_token` grant (never for `client_credentials`). Single use: each renewal answers a new one.",
    },
    scope: { type: 'string', pattern: grantedScope(), description: 'The scopes granted, separated by spaces.' },
  },
  example: {
    access_token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxNyIsInJvbGUiOiJjdXN0b21lciJ9.dBjftJeZ4CVPmB92K27uhbUJU1p1rwW1gFWFOEjXk',
    token_type: 'Bearer',
    expires_in: 900,
    refresh_token: 'eki2oU6N5u3qGkq1N7R2qB4sPpU0yT8cVxWm9aZdLfE',
    scope: 'orders:read orders:write',
  },
});

/** What each RFC 6749 error code says (Record: a code the service adds must be described). */
const ERROR_CODES: Record<OAuthErrorCode, string> = {
  invalid_request: 'a parameter is missing, repeated or malformed, the body is no form or JSON object, or it is too large or of another media type',
  invalid_client: 'client authentication failed',
  invalid_grant: 'the code, refresh token or credentials are invalid, expired, used or issued to another client',
  unauthorized_client: 'the client may not use this grant',
  unsupported_grant_type: 'the `grant_type` is none of the four',
  invalid_scope: 'the scope is malformed or beyond what may be granted',
  unsupported_token_type: 'not answered: revocation takes any token',
  temporarily_unavailable: 'the rate limit is spent, or the database does not answer',
  server_error: 'an unexpected error (logged with the request id)',
};

/** The stricter limit of the token and revocation endpoints, per client address a minute, by default. */
const LIMIT = defaultOAuthSettings.rateLimit.max;

/**
 * One of each error an endpoint answers, built as the endpoint builds it; toOAuthError gives its
 * `error` code, problem type and status, and its headers are the answer's.
 */
const REQUEST_ERRORS: DomainError[] = [
  new DomainError('malformed-request', 'The body is not valid JSON.'),
  invalidClient('Client authentication is required: send client_id (public clients), or the client secret with HTTP Basic or client_secret_post.', false),
  invalidClient(UNKNOWN_CLIENT, true),
  new DomainError('payload-too-large', 'The request body is larger than the limit.'),
  new DomainError('unsupported-media-type', 'The request body has a Content-Type this operation does not accept.'),
  new DomainError('rate-limited', `Too many sign-in and token requests from this address: the limit is ${LIMIT} per 60 s; retry in 42 s.`, {
    headers: { 'retry-after': '42' },
  }),
  new DomainError('internal-error', 'An unexpected error occurred. It has been logged with the request id.'),
  // What a lost database connection becomes (server/errors/db-errors.ts), Retry-After included.
  toDomainError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
];

const TOKEN_ERRORS: DomainError[] = [
  invalidRequest('The grant_type parameter is required.'),
  invalidGrant(WRONG_CREDENTIALS),
  new OAuthError('invalid_grant', waitMessage(30), { headers: { 'retry-after': '30' } }),
  unauthorizedClient('This client is not registered for the password grant.'),
  new OAuthError('unsupported_grant_type', 'The grant_type must be one of authorization_code, refresh_token, client_credentials, password.'),
  invalidScope("The scope asks for more than the client's registered scopes (orders:read)."),
  ...REQUEST_ERRORS,
];

const REVOKE_ERRORS: DomainError[] = [invalidRequest('The token parameter is required.'), invalidGrant('The token was issued to another client.'), ...REQUEST_ERRORS];

/** The codes some answer carries. */
const answered = new Set<string>([...TOKEN_ERRORS, ...REVOKE_ERRORS].map((thrown) => toOAuthError(thrown).error));

const OAUTH_ERROR: Json = {
  allOf: [schemaRef('Problem')],
  type: 'object',
  description:
    'An error of the token or revocation endpoint (RFC 6749 section 5.2), as `application/json`: `error` and `error_description` for OAuth ' +
    'clients, beside the problem-details members (`type` `/problems/<slug>`, `title`, `status`, `detail`, `instance`, `request_id`). `error`: ' +
    Object.entries(ERROR_CODES)
      .filter(([code]) => answered.has(code))
      .map(([code, text]) => `\`${code}\` ${text}`)
      .join('; ') +
    '.',
  required: ['error', 'error_description'],
  properties: {
    error: { type: 'string', enum: [...answered] },
    error_description: {
      type: 'string',
      // RFC 6749 section 5.2: %x20-21 / %x23-5B / %x5D-7E.
      pattern: '^[\\x20-\\x21\\x23-\\x5B\\x5D-\\x7E]*$',
      description: 'What went wrong, the same as `detail` in printable ASCII without `"` and `\\`.',
    },
  },
};

const EXAMPLE_REQUEST_ID = '0d9c7b1e-4b3a-4c52-9a53-8f1e2d7c6b5a';

const ALWAYS = {
  'X-Request-Id': headerRef('X-Request-Id'),
  'RateLimit-Limit': headerRef('RateLimit-Limit'),
  'RateLimit-Remaining': headerRef('RateLimit-Remaining'),
  'RateLimit-Reset': headerRef('RateLimit-Reset'),
};
const NO_STORE = {
  'Cache-Control': { description: '`no-store`: tokens and their errors are never cached (RFC 6749 section 5.1).', schema: { type: 'string', const: 'no-store' } },
  Pragma: { description: '`no-cache`, for HTTP/1.0 caches.', schema: { type: 'string', const: 'no-cache' } },
};
const ERROR_HEADERS: Record<string, [string, Json]> = {
  'www-authenticate': ['WWW-Authenticate', headerRef('BasicChallenge')],
  'retry-after': ['Retry-After', headerRef('Retry-After')],
};

function documentedHeader(name: string): [string, Json] {
  const header = ERROR_HEADERS[name];
  if (!header) throw new Error(`OpenAPI: the header ${name} of an OAuth error is not described`);
  return header;
}

/** The error answers of `errors` by status: the codes and problem types each status carries, with headers and one example. */
function errorResponses(errors: DomainError[], instance: string): Record<string, Json> {
  const byStatus = new Map<number, { error: OAuthErrorCode; domain: DomainError }[]>();
  for (const thrown of errors) {
    const outcome = toOAuthError(thrown);
    byStatus.set(outcome.domain.status, [...(byStatus.get(outcome.domain.status) ?? []), outcome]);
  }
  return Object.fromEntries(
    [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, outcomes]): [string, Json] => {
        const codes = [...new Set(outcomes.map((o) => o.error))];
        const slugs = [...new Set(outcomes.map((o) => o.domain.slug))];
        const headers = Object.fromEntries(outcomes.flatMap((o) => Object.keys(o.domain.headers).map((name) => documentedHeader(name))));
        const [first] = outcomes;
        const kinds = slugs.map((slug) => `[\`${problemPage(slug)}\`](${problemPage(slug)}) ${problemType(slug).title}`);
        return [
          String(status),
          {
            description: `\`error\` ${codes.map((code) => `\`${code}\``).join(', ')}; problem ${kinds.join('; ')}.`,
            headers: { ...ALWAYS, ...NO_STORE, ...headers },
            content: {
              'application/json': {
                schema: {
                  allOf: [schemaRef('OAuthError')],
                  type: 'object',
                  properties: {
                    error: { type: 'string', enum: codes },
                    type: { type: 'string', enum: slugs.map(problemPage) },
                    status: { const: status },
                  },
                },
                ...(first ? { example: oauthErrorBody(first.error, first.domain, instance, EXAMPLE_REQUEST_ID) } : {}),
              },
            },
          },
        ];
      }),
  );
}

const CLIENT_SECURITY = [{}, { clientBasic: [] }];

const tokenOperation: Json = {
  operationId: 'oauth-token',
  tags: [OAUTH_TAG],
  summary: 'Get tokens (every grant)',
  description:
    'The token endpoint (RFC 6749 sections 3.2 and 4-6): an access token for a grant, with a refresh token for a user\'s grants. ' +
    'The body is a form (`application/x-www-form-urlencoded`) or the same parameters as a JSON object of strings; parameters a grant does not define are ignored, ' +
    'a defined one sent twice is 400. Clients authenticate with HTTP Basic or `client_secret` (confidential) or `client_id` alone (public). ' +
    `Limited to ${LIMIT} requests a minute per client address by default (\`OAUTH_RATE_LIMIT_MAX\`). Errors are RFC 6749 JSON with problem-details members.`,
  security: CLIENT_SECURITY,
  requestBody: requestBody(
    'The grant: `grant_type` and its parameters.',
    schemaRef('TokenRequest'),
    Object.fromEntries(grantEntries().map(([type, grant]) => [type, { summary: grantSummary(type), value: grant.example }])),
  ),
  responses: {
    '200': {
      description: 'The tokens.',
      headers: { ...ALWAYS, ...NO_STORE },
      content: { 'application/json': { schema: schemaRef('TokenResponse'), example: tokenResponse().example } },
      links: {
        'oauth-token': {
          operationId: 'oauth-token',
          requestBody: { grant_type: 'refresh_token', refresh_token: '$response.body#/refresh_token' },
          description: 'Renew the tokens with the refresh token of this answer (when it has one).',
        },
        'oauth-revoke': {
          operationId: 'oauth-revoke',
          requestBody: { token: '$response.body#/refresh_token' },
          description: 'Sign out: revoke the refresh token of this answer (when it has one) and every token of its sign-in.',
        },
      },
    },
    ...errorResponses(TOKEN_ERRORS, TOKEN_PATH),
  },
};

const revokeOperation: Json = {
  operationId: 'oauth-revoke',
  tags: [OAUTH_TAG],
  summary: 'Revoke a token (sign out)',
  description:
    'Token revocation (RFC 7009), with the same client authentication as the token endpoint. Answers 200 with no body for a revoked token and for an unknown one alike ' +
    '(section 2.2); a token issued to another client is 400 `invalid_grant` and stays valid.',
  security: CLIENT_SECURITY,
  requestBody: requestBody('The token to revoke.', schemaRef('RevocationRequest'), {
    refresh_token: { summary: 'A refresh token (a public client)', value: { token: 'eki2oU6N5u3qGkq1N7R2qB4sPpU0yT8cVxWm9aZdLfE', token_type_hint: 'refresh_token', client_id: DEV_CLIENT_ID } },
  }),
  responses: {
    '200': { description: 'Revoked, or unknown: no body.', headers: { ...ALWAYS, ...NO_STORE } },
    ...errorResponses(REVOKE_ERRORS, REVOKE_PATH),
  },
};

// ---------------------------------------------------------------------------------------------
// Metadata (RFC 8414): every member the document has, described.

type Metadata = ReturnType<typeof metadataDocument>;
const METADATA_MEMBERS: Record<keyof Metadata, string> = {
  issuer: 'The issuer identifier: `PUBLIC_URL`, else the address the service listens on.',
  authorization_endpoint: 'The sign-in page (`/oauth/authorize`).',
  token_endpoint: 'POST /oauth/token.',
  revocation_endpoint: 'POST /oauth/revoke.',
  scopes_supported: 'Every scope.',
  response_types_supported: 'Only `code`.',
  response_modes_supported: 'Only `query`.',
  grant_types_supported: 'The four grant types.',
  code_challenge_methods_supported: 'Only `S256`.',
  token_endpoint_auth_methods_supported: '`none` (public clients), `client_secret_basic`, `client_secret_post`.',
  revocation_endpoint_auth_methods_supported: 'The same as the token endpoint.',
  authorization_response_iss_parameter_supported: 'The authorization response names its issuer (`iss`, RFC 9207).',
  prompt_values_supported: '`create` while sign-up is on (`SIGN_UP_ENABLED`): `prompt=create` opens the sign-up form. Absent when it is off.',
  service_documentation: 'This API\'s documentation (`/api/docs`).',
};

// Built when the document is: `scopes_supported` lists the scopes the modules declare as they load.
const metadataExample = () => metadataDocument('https://orders.example.com', { signUp: true });
/** Members present only with some settings (the others are always there). */
const OPTIONAL_MEMBERS = new Set(['prompt_values_supported']);

function memberSchema(value: unknown, description: string): Json {
  if (typeof value === 'boolean') return { type: 'boolean', description };
  if (Array.isArray(value)) return { type: 'array', items: { type: 'string', enum: value }, uniqueItems: true, description };
  return { type: 'string', format: 'uri', description };
}

const metadataSchema = (example = metadataExample()): Json => ({
  type: 'object',
  description: 'Authorization server metadata (RFC 8414 section 2).',
  required: Object.keys(METADATA_MEMBERS).filter((name) => !OPTIONAL_MEMBERS.has(name)),
  properties: Object.fromEntries(Object.entries(METADATA_MEMBERS).map(([name, text]) => [name, memberSchema(example[name as keyof Metadata], text)])),
});

const metadataOperation = (): Json => ({
  operationId: 'oauth-metadata',
  tags: [OAUTH_TAG],
  summary: 'Authorization server metadata',
  description: 'Where the endpoints are and what they support (RFC 8414), for OAuth client libraries to discover. Cacheable for 5 minutes; no token is read.',
  security: [],
  responses: {
    '200': {
      description: 'The metadata.',
      headers: { ...ALWAYS, 'Cache-Control': { description: '`public, max-age=300`.', schema: { type: 'string', const: 'public, max-age=300' } } },
      content: { 'application/json': { schema: schemaRef('AuthorizationServerMetadata'), example: metadataExample() } },
    },
    '429': {
      description: `Problem: [\`${problemPage('rate-limited')}\`](${problemPage('rate-limited')}) ${problemType('rate-limited').title}.`,
      headers: { ...ALWAYS, 'Cache-Control': headerRef('Cache-Control'), 'Retry-After': headerRef('Retry-After') },
      content: {
        'application/problem+json': {
          schema: schemaRef('RateLimitedProblem'),
          example: problemBody(new DomainError('rate-limited', 'Rate limit exceeded: retry in 42 seconds.'), METADATA_PATH, EXAMPLE_REQUEST_ID),
        },
      },
    },
  },
});

/**
 * What the authorization server adds to the OpenAPI document; built when the document is, after
 * the modules have declared their scopes.
 */
export const oauthOpenApi = () => ({
  tag: {
    name: OAUTH_TAG,
    description:
      'The OAuth 2.0 authorization server: tokens for every grant, revocation and its metadata. Browsers sign in at `/oauth/authorize` ' +
      '(an HTML form; see the `oauth2` security scheme). Its errors are RFC 6749 JSON (`error`, `error_description`) with problem-details members.',
  },
  paths: {
    [TOKEN_PATH]: { post: tokenOperation },
    [REVOKE_PATH]: { post: revokeOperation },
    [METADATA_PATH]: { get: metadataOperation() },
  },
  // The metadata's 429.
  problems: ['rate-limited'],
  schemas: {
    TokenRequest: TOKEN_REQUEST,
    ...Object.fromEntries(grantEntries().map(([type, grant]) => [grant.schema, grantSchema(type)])),
    RevocationRequest: rendered(RevocationRequest, ['type', 'description', 'required', 'properties']),
    TokenResponse: tokenResponse(),
    OAuthError: OAUTH_ERROR,
    AuthorizationServerMetadata: metadataSchema(),
  } as Record<string, Json>,
  headers: {
    BasicChallenge: {
      description: 'The Basic challenge of a failed client authentication that used the `Authorization` header (RFC 6749 section 5.2).',
      schema: { type: 'string', example: 'Basic realm="order-service", charset="UTF-8"' },
    },
  },
  securitySchemes: {
    clientBasic: {
      type: 'http',
      scheme: 'basic',
      description:
        "A confidential client's authentication (`client_secret_basic`, RFC 6749 section 2.3.1): its `client_id` and `client_secret`, each form-urlencoded, " +
        'as the user name and password. Public clients send `client_id` in the body instead; confidential ones may send `client_secret` there (`client_secret_post`).',
    },
  },
} as const);
