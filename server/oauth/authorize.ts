/**
 * The authorization endpoint (RFC 6749 section 4.1, RFC 7636, RFC 9700 section 2.1):
 * GET /oauth/authorize checks the request and serves the sign-in form; the form POSTs to the same
 * path, and a successful sign-in is a 303 to the client's registered redirect URI with `code`,
 * `state` and `iss` (RFC 9207).
 *
 * A request whose client is unknown or whose `redirect_uri` is not registered for it (exact
 * string match) gets a 400 page and is never redirected: the endpoint is no open redirector.
 * Every other error goes back to the client as `error`, `error_description` and `state`
 * (section 4.1.2.1). A wrong password re-shows the form with a neutral message.
 *
 * With `prompt=create` (OpenID Connect's "Initiating User Registration" value), and unless
 * `SIGN_UP_ENABLED=false`, the page is the sign-up form instead, for the same request; its POST
 * (which carries `prompt=create` too) creates a customer and continues as a sign-in does.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { pageHeaders, refusalPage, SIGN_UP_PROMPT, signInPage, signUpPage } from './authorize-page.ts';
import { findClient, type OAuthClient } from './client-auth.ts';
import { createCode } from './codes.ts';
import type { OAuthContext } from './context.ts';
import { REQUEST_PARAMETERS, type AuthorizationRequestParams } from './csrf.ts';
import { scopeForPerson } from '../auth/policy.ts';
import { asDescription, OAuthError } from './errors.ts';
import { issueForSignIn, type SignedIn } from './issue.ts';
import { isFormRequest, parseParams, type Params } from './params.ts';
import { S256_CHALLENGE } from './pkce.ts';
import { grantScope, parseScope } from './scope.ts';
import { NOTHING_USABLE, waitMessage, WRONG_CREDENTIALS } from './sign-in.ts';
import { createCustomer, readSignUp, SIGN_UP_FIELDS, type FieldErrors, type TypedValues } from './sign-up.ts';

/** An error that goes back to the client's redirect URI (section 4.1.2.1). */
type RedirectedErrorCode = 'invalid_request' | 'unauthorized_client' | 'unsupported_response_type' | 'invalid_scope';

class RedirectedError extends Error {
  constructor(
    readonly target: { redirectUri: string; state: string | undefined },
    readonly error: RedirectedErrorCode,
    readonly description: string,
  ) {
    super(description);
  }
}

/** A request that may not be redirected: answered with the refusal page. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly description: string,
  ) {
    super(description);
  }
}

export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  state: string | undefined;
  codeChallenge: string;
  scope: string;
  /** The request's own parameters, as the form carries them. */
  params: AuthorizationRequestParams;
}

function requestParams(params: Params): AuthorizationRequestParams {
  return Object.fromEntries(REQUEST_PARAMETERS.flatMap((name) => (params.has(name) ? [[name, params.get(name)]] : []))) as AuthorizationRequestParams;
}

/** What the sign-in form adds to the authorization request's parameters. */
const FORM_PARAMETERS = ['csrf_token', 'email', 'password'] as const;

const unknownClient = () => new Refusal(400, 'Unknown application', 'No application is registered with this client_id.');

/** Client and redirect URI first: until both are known good, nothing may be redirected. */
async function checkClient(ctx: OAuthContext, params: Params, repeated: ReadonlySet<string>): Promise<{ client: OAuthClient; redirectUri: string }> {
  for (const name of ['client_id', 'redirect_uri']) {
    if (repeated.has(name)) throw new Refusal(400, 'Invalid sign-in request', `The ${name} parameter was sent more than once.`);
  }
  const clientId = params.get('client_id');
  if (clientId === undefined) throw new Refusal(400, 'Invalid sign-in request', 'The client_id parameter is missing.');
  const client = await findClient(ctx.db, clientId);
  if (!client) throw unknownClient();
  const redirectUri = params.get('redirect_uri');
  if (redirectUri === undefined) throw new Refusal(400, 'Invalid sign-in request', 'The redirect_uri parameter is missing.');
  if (!client.redirectUris.includes(redirectUri)) {
    throw new Refusal(400, 'Invalid redirect URI', 'The redirect_uri is not registered for this application, so this sign-in request cannot continue.');
  }
  return { client, redirectUri };
}

/** The rest of the request, once the client and redirect URI are known good: what is wrong, if anything. */
function checkParameters(client: OAuthClient, params: Params, problem: string | undefined): { error: RedirectedErrorCode; description: string } | { codeChallenge: string; scope: string } {
  if (problem !== undefined) return { error: 'invalid_request', description: problem };
  if (!client.grantTypes.includes('authorization_code')) {
    return { error: 'unauthorized_client', description: 'This client is not registered for the authorization code grant.' };
  }
  const responseType = params.get('response_type');
  if (responseType === undefined) return { error: 'invalid_request', description: 'The response_type parameter is required (code).' };
  if (responseType !== 'code') return { error: 'unsupported_response_type', description: 'The only supported response_type is code.' };
  const codeChallenge = params.get('code_challenge');
  if (codeChallenge === undefined) return { error: 'invalid_request', description: 'PKCE is required: send code_challenge and code_challenge_method=S256.' };
  if (params.get('code_challenge_method') !== 'S256') {
    return { error: 'invalid_request', description: 'The code_challenge_method must be S256 (plain is not accepted).' };
  }
  if (!S256_CHALLENGE.test(codeChallenge)) return { error: 'invalid_request', description: 'The code_challenge must be 43 base64url characters (S256).' };
  try {
    return { codeChallenge, scope: grantScope(parseScope(params.get('scope')), client.scopes, "the client's registered scopes") };
  } catch (error) {
    if (error instanceof OAuthError) return { error: 'invalid_scope', description: error.message };
    throw error;
  }
}

async function checkRequest(ctx: OAuthContext, source: unknown): Promise<AuthorizationRequest> {
  const { params, problem, repeated } = parseParams(source, REQUEST_PARAMETERS);
  const { client, redirectUri } = await checkClient(ctx, params, repeated);
  const state = params.get('state');
  const checked = checkParameters(client, params, problem);
  if ('error' in checked) throw new RedirectedError({ redirectUri, state }, checked.error, checked.description);
  return { client, redirectUri, state, ...checked, params: requestParams(params) };
}

function redirectTo(ctx: OAuthContext, reply: FastifyReply, redirectUri: string, values: Record<string, string | undefined>): FastifyReply {
  const target = new URL(redirectUri);
  // RFC 6749 4.1.2.1: error_description in its charset, as on the token endpoint.
  if (values.error_description !== undefined) values = { ...values, error_description: asDescription(values.error_description) };
  for (const [name, value] of Object.entries({ ...values, iss: ctx.issuer() })) {
    if (value !== undefined) target.searchParams.set(name, value);
  }
  return pageHeaders(reply, redirectUri).code(303).header('location', target.href).send();
}

/** Refusals as a page, client errors as a redirect; anything else is the route's error handler's. */
async function answering(ctx: OAuthContext, reply: FastifyReply, run: () => Promise<FastifyReply>): Promise<FastifyReply> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof Refusal) {
      return pageHeaders(reply).code(error.status).type('text/html; charset=utf-8').send(refusalPage(error.title, error.description));
    }
    if (error instanceof RedirectedError) {
      const { redirectUri, state } = error.target;
      return redirectTo(ctx, reply, redirectUri, { error: error.error, error_description: error.description, state });
    }
    throw error;
  }
}

/** What the page shows: a form, its status, and what went wrong (the password is never shown again). */
type FormState =
  | { form: 'sign-in'; status: number; email?: string; error?: string; retryAfterSeconds?: number }
  | { form: 'sign-up'; status: number; typed?: TypedValues; error?: string; fieldErrors?: FieldErrors; signInInstead?: boolean };

function showForm(ctx: OAuthContext, request: FastifyRequest, reply: FastifyReply, authorization: AuthorizationRequest, state: FormState): FastifyReply {
  const csrfToken = ctx.csrf.issue(request, reply, authorization.params);
  const shown = { clientName: authorization.client.name, scope: authorization.scope, params: authorization.params, csrfToken };
  let html: string;
  if (state.form === 'sign-in') {
    if (state.retryAfterSeconds !== undefined) reply.header('retry-after', String(state.retryAfterSeconds));
    html = signInPage({
      ...shown,
      signUp: ctx.settings.signUpEnabled,
      ...(state.email === undefined ? {} : { email: state.email }),
      ...(state.error === undefined ? {} : { error: state.error }),
    });
  } else {
    // The new account is a customer's: the page names what a customer is granted (docs/signing-in.md#scopes).
    const granted = scopeForPerson(authorization.scope, 'customer');
    html = signUpPage({
      ...shown,
      scope: granted === '' ? authorization.scope : granted,
      ...(state.typed === undefined ? {} : { values: state.typed }),
      ...(state.error === undefined ? {} : { error: state.error }),
      ...(state.fieldErrors === undefined ? {} : { fieldErrors: state.fieldErrors }),
      ...(state.signInInstead === undefined ? {} : { signInInstead: state.signInInstead }),
    });
  }
  return pageHeaders(reply, authorization.redirectUri).code(state.status).type('text/html; charset=utf-8').send(html);
}

/** Whether the request asks for the sign-up form (`prompt=create`, one of its space-separated values). */
function promptsSignUp(source: unknown): boolean {
  return parseParams(source, ['prompt']).params.get('prompt')?.split(' ').includes(SIGN_UP_PROMPT) ?? false;
}

export function authorizeForm(ctx: OAuthContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  return answering(ctx, reply, async () => {
    const authorization = await checkRequest(ctx, request.query);
    // With sign-up turned off, `prompt=create` is a value this server does not act on: the sign-in form.
    const form = ctx.settings.signUpEnabled && promptsSignUp(request.query) ? 'sign-up' : 'sign-in';
    return showForm(ctx, request, reply, authorization, { form, status: 200 });
  });
}

export function authorizeSubmit(ctx: OAuthContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  return answering(ctx, reply, async () => {
    if (!isFormRequest(request.headers['content-type'])) {
      throw new Refusal(415, 'Unsupported form', 'The sign-in form is sent as application/x-www-form-urlencoded.');
    }
    const authorization = await checkRequest(ctx, request.body);
    return promptsSignUp(request.body) ? submitSignUp(ctx, request, reply, authorization) : submitSignIn(ctx, request, reply, authorization);
  });
}

async function submitSignIn(ctx: OAuthContext, request: FastifyRequest, reply: FastifyReply, authorization: AuthorizationRequest): Promise<FastifyReply> {
  const { params: form } = parseParams(request.body, FORM_PARAMETERS);
  if (!ctx.csrf.verify(request, form.get('csrf_token'), authorization.params)) {
    return showForm(ctx, request, reply, authorization, {
      form: 'sign-in',
      status: 403,
      error: 'This sign-in form has expired or was not sent from this page. Enter your email and password again.',
    });
  }
  const email = form.get('email') ?? '';
  const password = form.get('password') ?? '';
  if (email === '' || password === '') {
    return showForm(ctx, request, reply, authorization, { form: 'sign-in', status: 400, email, error: 'Enter your email and password.' });
  }
  const result = await ctx.signIn.signIn(email, password, request.ip);
  if (!result.ok) {
    const waiting = result.retryAfterSeconds;
    return showForm(ctx, request, reply, authorization, {
      form: 'sign-in',
      status: waiting === undefined ? 400 : 429,
      email,
      error: waiting === undefined ? WRONG_CREDENTIALS : waitMessage(waiting),
      ...(waiting === undefined ? {} : { retryAfterSeconds: waiting }),
    });
  }
  // Deleted, or the password changed since it was checked: the password is wrong now.
  return continueAuthorization(ctx, request, reply, authorization, result, { form: 'sign-in', status: 400, email, error: WRONG_CREDENTIALS });
}

/** Every field the sign-up form sends: the request's parameters, its token, `prompt` and the three it asks for. */
const SIGN_UP_FORM_FIELDS: ReadonlySet<string> = new Set([...REQUEST_PARAMETERS, 'csrf_token', 'prompt', ...SIGN_UP_FIELDS]);

const SIGN_UP_OFF = 'New accounts cannot be created here. Sign in with an account you already have.';

/**
 * The sign-up form's POST (docs/signing-in.md#the-sign-up-form): checked like the sign-in form
 * (CSRF token and cookie, the same rate limit on this route), then held to the rules of
 * `POST /api/v1/users`; a customer is created and the authorization goes on as after a sign-in.
 * Anything wrong shows the form again, and creates nothing.
 */
async function submitSignUp(ctx: OAuthContext, request: FastifyRequest, reply: FastifyReply, authorization: AuthorizationRequest): Promise<FastifyReply> {
  if (!ctx.settings.signUpEnabled) return showForm(ctx, request, reply, authorization, { form: 'sign-in', status: 403, error: SIGN_UP_OFF });
  // A form body (checked by the caller) is parseForm's record.
  const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<string, unknown>;
  const read = readSignUp(body);
  const again = (status: number, error: string, more: { fieldErrors?: FieldErrors; signInInstead?: boolean } = {}) =>
    showForm(ctx, request, reply, authorization, { form: 'sign-up', status, typed: read.typed, error, ...more });
  const { params: form } = parseParams(body, ['csrf_token']);
  if (!ctx.csrf.verify(request, form.get('csrf_token'), authorization.params)) {
    return again(403, 'This sign-up form has expired or was not sent from this page, so no account was created. Enter your details again.');
  }
  // The page sends nothing else: another field (a `role`, say) is no form of ours, and is not ignored.
  if (Object.keys(body).some((name) => !SIGN_UP_FORM_FIELDS.has(name))) {
    return again(400, 'This form was sent with fields it does not have, so no account was created. Fill it in and send it again.');
  }
  if (!read.ok) return again(400, 'No account was created: correct the fields marked below.', { fieldErrors: read.fieldErrors });
  // A new account is a customer's: a request for nothing a customer can use creates none.
  if (scopeForPerson(authorization.scope, 'customer') === '') {
    ctx.csrf.clear(request, reply);
    return redirectTo(ctx, reply, authorization.redirectUri, { error: 'invalid_scope', error_description: NOTHING_USABLE, state: authorization.state });
  }
  const created = await createCustomer(ctx.db, read.input);
  if (!created.ok) {
    if (created.reason === 'duplicate') {
      // POST /api/v1/users tells anyone as much (409), so the page may say it too.
      return again(409, 'An account with this email already exists.', { fieldErrors: { email: 'An account with this email already exists.' }, signInInstead: true });
    }
    return showForm(ctx, request, reply, authorization, { form: 'sign-in', status: 400, email: read.input.email, error: SIGN_IN_NEW_ACCOUNT });
  }
  return continueAuthorization(ctx, request, reply, authorization, created.account, {
    form: 'sign-in',
    status: 400,
    email: read.input.email,
    error: SIGN_IN_NEW_ACCOUNT,
  });
}

const SIGN_IN_NEW_ACCOUNT = 'Your account could not be signed in after it was created. Sign in to continue.';

/**
 * A person is signed in (by password or a new account): issue the code (in the transaction that
 * re-reads the user and the client) and send it to the client. `refused` is what the page shows
 * when the user changed or vanished meanwhile.
 */
async function continueAuthorization(
  ctx: OAuthContext,
  request: FastifyRequest,
  reply: FastifyReply,
  authorization: AuthorizationRequest,
  signedIn: SignedIn,
  refused: FormState,
): Promise<FastifyReply> {
  const issued = await issueForSignIn(ctx.db, signedIn, authorization.client.id, (tx, user) => {
    // Only what the person's role can use (docs/signing-in.md#scopes).
    const scope = scopeForPerson(authorization.scope, user.role);
    if (scope === '') return Promise.resolve(undefined);
    return createCode(
      tx,
      { clientId: authorization.client.id, userId: user.id, redirectUri: authorization.redirectUri, codeChallenge: authorization.codeChallenge, scope },
      ctx.settings.codeTtlSeconds,
    );
  });
  if (!issued.ok) {
    if (issued.refused === 'client') throw unknownClient();
    return showForm(ctx, request, reply, authorization, refused);
  }
  ctx.csrf.clear(request, reply);
  if (issued.issued === undefined) {
    return redirectTo(ctx, reply, authorization.redirectUri, { error: 'invalid_scope', error_description: NOTHING_USABLE, state: authorization.state });
  }
  return redirectTo(ctx, reply, authorization.redirectUri, { code: issued.issued, state: authorization.state });
}

/** An error no handler above answered (rate limit, body limits, database): a page with its status. */
export function authorizeErrorPage(reply: FastifyReply, status: number, detail: string): FastifyReply {
  const title = status === 429 ? 'Too many attempts' : status >= 500 ? 'Sign-in unavailable' : 'Invalid sign-in request';
  return pageHeaders(reply).code(status).type('text/html; charset=utf-8').send(refusalPage(title, detail));
}
