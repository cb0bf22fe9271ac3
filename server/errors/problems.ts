/**
 * The one catalogue of problem types (docs/api.md#errors) and the one mapping from a domain
 * error to an HTTP status and a problem-details body. Nothing else decides a status code.
 * The problems every operation can meet are listed here; a module's own (an order's state
 * transition, a refund beyond its payment) are declared in its `<name>.problems.ts` with
 * `declareProblems`, which adds them to `DeclaredProblems` below, so `ProblemSlug` knows them at
 * compile time and the catalogue at run time (docs/architecture.md#adding-a-module).
 */
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';

/**
 * The most `errors` entries one problem lists; `errors_total` counts them all. A body can hold
 * tens of thousands of bad fields: an answer listing each was megabytes (issue 21).
 */
export const MAX_LISTED_ERRORS = 20;

/** A JSON Schema, as the OpenAPI document carries it. */
export type JsonSchema = Readonly<Record<string, unknown>>;

/** What the OpenAPI document says of the members a problem carries beside the RFC 9457 ones. */
export interface ProblemMembers {
  /** Each member's JSON Schema (`$ref`s point into the document's `#/components/schemas`). */
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  /** Whether it lists bad fields in `errors` (with `errors_total`), as a validation error does. */
  readonly fieldErrors?: boolean;
  /** An example body's `detail` and members. */
  readonly example: Readonly<Record<string, unknown>> & { readonly detail: string };
}

export interface ProblemType {
  readonly status: number;
  readonly title: string;
  /** tRPC code used on `/trpc` and for callers without HTTP. */
  readonly code: TRPC_ERROR_CODE_KEY;
  /** Explanation served at `/problems/<slug>`. */
  readonly description: string;
  /** A module's problem describes its members and example here; the core ones in server/http/openapi-problems.ts. */
  readonly openapi?: ProblemMembers;
}

/** The problems any operation can meet (a module's own are declared beside it). */
const coreProblems = {
  'malformed-request': {
    status: 400,
    title: 'Malformed request',
    code: 'BAD_REQUEST',
    description:
      'The request could not be parsed: malformed JSON, a missing or invalid header, or a path or query parameter of the wrong type.',
  },
  'unknown-parameter': {
    status: 400,
    title: 'Unknown parameter',
    code: 'BAD_REQUEST',
    description:
      'The request has a query parameter the operation does not take (on `/trpc`, a query\'s input has a member the procedure does not take), so a mistyped filter is refused rather than silently ignored. `errors` names each unknown parameter; the detail lists those the operation takes, and the OpenAPI document describes them.',
  },
  'validation-error': {
    status: 422,
    title: 'Validation failed',
    code: 'UNPROCESSABLE_CONTENT',
    description:
      `The body is well-formed JSON but one or more values fail validation. The \`errors\` array names each bad field with a message, the first ${MAX_LISTED_ERRORS} of them; \`errors_total\` counts them all. An object or array with far more members than any operation takes is refused whole, its \`errors\` entry saying how many it may have.`,
  },
  unauthorized: {
    status: 401,
    title: 'Unauthorized',
    code: 'UNAUTHORIZED',
    description:
      'Credentials are absent, malformed, expired or invalid. Send `Authorization: Bearer <access token>` with a valid, unexpired token.',
  },
  forbidden: {
    status: 403,
    title: 'Forbidden',
    code: 'FORBIDDEN',
    description: 'The caller is identified but has no right to the operation.',
  },
  'insufficient-scope': {
    status: 403,
    title: 'Insufficient scope',
    code: 'FORBIDDEN',
    description:
      'The access token is valid but does not grant the scope this operation needs (RFC 6750 section 3.1). The `scope` member and the `WWW-Authenticate` challenge name it; ask for a token with that scope.',
  },
  'not-found': {
    status: 404,
    title: 'Not found',
    code: 'NOT_FOUND',
    description: 'The resource or the path does not exist, or is not visible to the caller.',
  },
  'method-not-allowed': {
    status: 405,
    title: 'Method not allowed',
    code: 'METHOD_NOT_SUPPORTED',
    description: 'The path exists but does not support this method. The `Allow` header lists the methods it supports.',
  },
  'not-acceptable': {
    status: 406,
    title: 'Not acceptable',
    code: 'BAD_REQUEST',
    description: 'The `Accept` header excludes JSON, the only representation this service produces.',
  },
  conflict: {
    status: 409,
    title: 'Conflict',
    code: 'CONFLICT',
    description: 'The request conflicts with the current state of the resource.',
  },
  'duplicate-resource': {
    status: 409,
    title: 'Duplicate resource',
    code: 'CONFLICT',
    description: 'A resource with the same unique value (such as a product `sku` or a user `email`) already exists.',
  },
  'idempotency-key-in-use': {
    status: 409,
    title: 'Idempotency key in use',
    code: 'CONFLICT',
    description: 'A request with this Idempotency-Key is still being processed. Retry after the number of seconds in `Retry-After`.',
  },
  'idempotency-key-mismatch': {
    status: 422,
    title: 'Idempotency key reused with a different request',
    code: 'UNPROCESSABLE_CONTENT',
    description: 'This Idempotency-Key was already used with a different method, path or body.',
  },
  gone: {
    status: 410,
    title: 'Gone',
    code: 'NOT_FOUND',
    description: 'The resource existed and was removed for good (for example an archived product).',
  },
  'request-timeout': {
    status: 408,
    title: 'Request timeout',
    code: 'TIMEOUT',
    description: 'The request did not arrive whole in time: the connection was closed. Send it again.',
  },
  'request-header-fields-too-large': {
    status: 431,
    title: 'Request header fields too large',
    code: 'BAD_REQUEST',
    description: 'The request headers are larger than the server accepts (16 KiB in all). Send fewer or shorter headers.',
  },
  'precondition-failed': {
    status: 412,
    title: 'Precondition failed',
    code: 'PRECONDITION_FAILED',
    description:
      'The `If-Match` header does not match the current `ETag` of the resource: it changed since you read it. `current_etag` is its tag now; read it again before you retry.',
  },
  'payload-too-large': {
    status: 413,
    title: 'Payload too large',
    code: 'PAYLOAD_TOO_LARGE',
    description: 'The request body is larger than the limit (1 MiB by default).',
  },
  'unsupported-media-type': {
    status: 415,
    title: 'Unsupported media type',
    code: 'UNSUPPORTED_MEDIA_TYPE',
    description:
      'The body has a Content-Type the operation does not accept. `Accept-Post` or `Accept-Patch` lists the accepted types.',
  },
  // The OAuth 2.0 token and revocation endpoints' errors (RFC 6749 section 5.2): their bodies carry
  // `error` and `error_description` beside these problem fields.
  'invalid-request': {
    status: 400,
    title: 'Invalid OAuth request',
    code: 'BAD_REQUEST',
    description:
      'An OAuth request (RFC 6749 `invalid_request`) lacks a required parameter, repeats one, has an unsupported value, or uses more than one way to authenticate the client.',
  },
  'invalid-client': {
    status: 401,
    title: 'Client authentication failed',
    code: 'UNAUTHORIZED',
    description:
      'The OAuth client (RFC 6749 `invalid_client`) is unknown, sent no credentials, or sent a wrong secret. Confidential clients use HTTP Basic (`client_secret_basic`) or `client_id` + `client_secret` in the body (`client_secret_post`); public clients send `client_id`. The status is 401 with a `WWW-Authenticate: Basic` challenge when the request carried an `Authorization` header, and 400 without a challenge otherwise (RFC 6749 section 5.2), so a form another site posts never makes a browser ask for a password.',
  },
  'invalid-grant': {
    status: 400,
    title: 'Invalid grant',
    code: 'BAD_REQUEST',
    description:
      'The authorization code, refresh token or user credentials (RFC 6749 `invalid_grant`) are invalid, expired, revoked, already used, issued to another client, or do not match the redirect URI or PKCE verifier.',
  },
  'unauthorized-client': {
    status: 400,
    title: 'Unauthorized client',
    code: 'BAD_REQUEST',
    description: 'The OAuth client (RFC 6749 `unauthorized_client`) is not registered for this grant type.',
  },
  'unsupported-grant-type': {
    status: 400,
    title: 'Unsupported grant type',
    code: 'BAD_REQUEST',
    description:
      'The `grant_type` (RFC 6749 `unsupported_grant_type`) is not one of `authorization_code`, `refresh_token`, `client_credentials` and `password`.',
  },
  'invalid-scope': {
    status: 400,
    title: 'Invalid scope',
    code: 'BAD_REQUEST',
    description:
      'The requested `scope` (RFC 6749 `invalid_scope`) is malformed, unknown, beyond what the client is registered for, or beyond what was originally granted.',
  },
  'rate-limited': {
    status: 429,
    title: 'Too many requests',
    code: 'TOO_MANY_REQUESTS',
    description: 'The rate limit is exceeded. Wait the number of seconds in `Retry-After`.',
  },
  'internal-error': {
    status: 500,
    title: 'Internal error',
    code: 'INTERNAL_SERVER_ERROR',
    description: 'Something failed inside the service. It is logged with the request id; retrying may help.',
  },
  'service-unavailable': {
    status: 503,
    title: 'Service unavailable',
    code: 'INTERNAL_SERVER_ERROR',
    description: 'The service is temporarily unavailable (database down, shutting down). Retry later.',
  },
} as const satisfies Record<string, ProblemType>;

/**
 * Each module's problem declaration, by module name; a module adds its own with declaration
 * merging in its `<name>.problems.ts`:
 * `declare module '../../errors/problems.ts' { interface DeclaredProblems { orders: typeof orderProblems } }`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the modules' declaration merging
export interface DeclaredProblems {}

/** Every problem type: the core ones and those the modules declare. */
export type ProblemSlug = keyof typeof coreProblems | { [Module in keyof DeclaredProblems]: keyof DeclaredProblems[Module] & string }[keyof DeclaredProblems];

const catalogue = new Map<string, ProblemType>(Object.entries(coreProblems));

/**
 * Adds a module's problem types to the catalogue. The file that throws one imports its
 * declaration, so the type is known wherever it can be thrown; a slug declared twice is a
 * programming error.
 */
export function declareProblems<const T extends Readonly<Record<string, ProblemType>>>(declaration: T): T {
  const entries = Object.entries(declaration);
  // Every slug checked before any is added: a refused declaration leaves the catalogue as it was.
  for (const [slug] of entries) {
    if (catalogue.has(slug)) throw new Error(`problem type ${slug} is declared twice`);
    if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(slug)) throw new Error(`problem type ${slug} is not a lower-case slug`);
  }
  for (const [slug, type] of entries) catalogue.set(slug, type);
  return declaration;
}

/** The type of `slug`; one no module declared (its problems file not loaded) is a programming error. */
export function problemType(slug: ProblemSlug): ProblemType {
  const type = catalogue.get(slug);
  if (type === undefined) throw new Error(`problem type ${slug} is not declared: import its module's <name>.problems.ts`);
  return type;
}

/** Every declared problem type by slug, core ones first. Read it at run time, once the modules have loaded. */
export const problemCatalogue = (): ReadonlyMap<ProblemSlug, ProblemType> => catalogue as ReadonlyMap<ProblemSlug, ProblemType>;

export interface FieldError {
  field: string;
  message: string;
}

/** The longest `field` and `message` an entry repeats: a field name is the client's own text. */
const MAX_FIELD_LENGTH = 64;
const MAX_MESSAGE_LENGTH = 200;

/** `text` cut to `max` characters, the cut marked with an ellipsis. */
export const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}\u2026`);

const clipped = (error: FieldError): FieldError => ({ field: clip(error.field, MAX_FIELD_LENGTH), message: clip(error.message, MAX_MESSAGE_LENGTH) });

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  request_id?: string;
  /** The first MAX_LISTED_ERRORS bad fields (fewer in a /trpc batch); `errors_total` counts all. */
  errors?: FieldError[];
  errors_total?: number;
  [extension: string]: unknown;
}

export interface DomainErrorOptions {
  /** The bad fields; only the first MAX_LISTED_ERRORS are kept. */
  errors?: FieldError[];
  /** How many bad fields there are, when `errors` lists only some of them (default: its length). */
  errorsTotal?: number;
  /** Extra problem members, such as `allowed` for a state transition. */
  extensions?: Record<string, unknown>;
  /** Response headers that belong to the problem (`Allow`, `Retry-After`, `WWW-Authenticate`...). */
  headers?: Record<string, string>;
  /** What actually failed: logged on the server, never part of the problem body. */
  cause?: unknown;
}

/** Thrown by services; carries everything the problem body needs and nothing internal. */
export class DomainError extends Error {
  readonly slug: ProblemSlug;
  /** At most MAX_LISTED_ERRORS entries, each field and message clipped. */
  readonly errors: FieldError[] | undefined;
  readonly errorsTotal: number | undefined;
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(slug: ProblemSlug, detail: string, options: DomainErrorOptions = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DomainError';
    this.slug = slug;
    this.errors = options.errors?.slice(0, MAX_LISTED_ERRORS).map(clipped);
    this.errorsTotal = options.errors === undefined ? undefined : Math.max(options.errorsTotal ?? 0, options.errors.length);
    this.extensions = options.extensions ?? {};
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return problemType(this.slug).status;
  }
}

const problemTypeUri = (slug: ProblemSlug): string => `/problems/${slug}`;

/**
 * The problem-details body of `error`. `listed`: how many of its `errors` to list (a /trpc batch
 * shares MAX_LISTED_ERRORS among its calls); `errors_total` always counts them all.
 */
export function problemBody(error: DomainError, instance?: string, requestId?: string, listed = MAX_LISTED_ERRORS): Problem {
  const type = problemType(error.slug);
  return {
    type: problemTypeUri(error.slug),
    title: type.title,
    status: type.status,
    detail: error.message,
    ...(instance === undefined ? {} : { instance }),
    ...(requestId === undefined ? {} : { request_id: requestId }),
    ...(error.errors ? { errors: error.errors.slice(0, listed), errors_total: error.errorsTotal ?? error.errors.length } : {}),
    ...error.extensions,
  };
}

/** A 500 whose `cause` keeps the original error for the log; the body stays generic. */
export const internalError = (cause?: unknown): DomainError =>
  new DomainError('internal-error', 'An unexpected error occurred. It has been logged with the request id.', { cause });

/** What to log for a failure: the underlying error of a 5xx DomainError, else the error itself. */
export function loggedCause(error: unknown): unknown {
  return error instanceof DomainError && error.status >= 500 && error.cause !== undefined ? error.cause : error;
}

/** The logger calls a failure is written with (pino's, as Fastify's loggers have them). */
export interface FailureLog {
  error(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/** An error and the errors it wraps, as name, message and code each: what failed, without a stack. */
function causeChain(error: unknown): { type: string; message: string; code?: string }[] {
  const chain: { type: string; message: string; code?: string }[] = [];
  for (let link = error; link instanceof Error && chain.length < 5; link = link.cause) {
    const code = (link as { code?: unknown }).code;
    chain.push({ type: link.name, message: link.message, ...(typeof code === 'string' ? { code } : {}) });
  }
  return chain;
}

/**
 * The one rule for logging a failed request, by what its problem means. A 500 is our bug: error,
 * with the underlying error and its stack. A 503 is expected (the database unreachable, busy or
 * closed, an external key set down, the service shutting down): warn naming what failed when it
 * has a cause, info when it has none, never a stack. A refusal (4xx) is the client's: its request
 * line (status, at info) says enough.
 */
export function logFailure(log: FailureLog, problem: DomainError, fields: object, message: string): void {
  if (problem.status < 500) return;
  if (problem.slug !== 'service-unavailable') {
    log.error({ ...fields, err: loggedCause(problem), problem: problem.slug }, message);
  } else if (problem.cause === undefined) {
    log.info({ ...fields, problem: problem.slug, detail: problem.message }, message);
  } else {
    log.warn({ ...fields, problem: problem.slug, detail: problem.message, cause: causeChain(problem.cause) }, message);
  }
}

export function isProblemSlug(value: string): value is ProblemSlug {
  return catalogue.has(value);
}
