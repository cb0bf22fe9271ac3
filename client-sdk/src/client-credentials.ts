/**
 * A back end calling the service as itself: the client credentials grant (RFC 6749 section 4.4) of
 * a confidential client, built on oauth4webapi. `clientCredentials(...)` is a `getToken` for
 * `createOrderServiceClient` that keeps the access token and renews it in the background shortly
 * before it expires, one request at a time. The service's side is its docs/signing-in.md.
 */
import * as oauth from 'oauth4webapi';
import type { Fetch } from './fetch.js';
import { asSignInError, discover, issuerOf, requestOptions, SignInError } from './sign-in.js';

export interface ClientCredentialsOptions {
  /** The service's base URL, which is its issuer (its `PUBLIC_URL`), e.g. `https://orders.example.com`. */
  url: string | URL;
  /** A confidential client registered with the `client_credentials` grant (`POST /api/v1/clients`). */
  clientId: string;
  /** Its secret, shown once when it was registered. Keep it on the server: never ship it to a browser. */
  clientSecret: string;
  /** Scopes to ask for, each among the client's registered ones; default: all of those. */
  scope?: readonly string[];
  /** How the secret is sent: HTTP Basic (default) or in the body (`client_secret_post`). */
  authMethod?: 'client_secret_basic' | 'client_secret_post';
  /**
   * Ask for a new token this many seconds before the held one expires (default 60), at most half
   * the token's lifetime: a token of 60 s or less is renewed halfway through.
   */
  renewBeforeSeconds?: number;
  /** A request to the service's token or metadata endpoint that has not answered in this many seconds fails (default 30). */
  timeoutSeconds?: number;
  /** A `fetch` to use instead of the global one. */
  fetch?: Fetch;
}

/**
 * The error of a failed token request. A 401 with a `WWW-Authenticate` challenge (a wrong secret
 * or an unknown client, RFC 6749 section 5.2) is one oauth4webapi leaves to its caller: its body
 * holds the code.
 */
async function refusal(error: unknown): Promise<SignInError> {
  if (!(error instanceof oauth.WWWAuthenticateChallengeError)) return asSignInError(error);
  const body = (await error.response.json().catch(() => ({}))) as { error?: unknown; error_description?: unknown };
  const code = typeof body.error === 'string' ? body.error : 'invalid_client';
  const message = typeof body.error_description === 'string' ? body.error_description : `The service refused the client's credentials (${error.status}).`;
  return new SignInError(message, code, error.status, { cause: error });
}

interface Held {
  accessToken: string;
  /** Milliseconds since the epoch, counted from when the request was sent. */
  expiresAt: number;
  /** From then on a call still answers the token at once, and starts its renewal. */
  renewAt: number;
}

/** After a failed token request, none is made for this long (or for as long as the answer's Retry-After says). */
const BACKOFF_MS = 5_000;
/** A Retry-After beyond this is read as this: a service's mistake must not stop renewals for a day. */
const MAX_RETRY_AFTER_MS = 5 * 60_000;

/** The answer a failed request got, if it got one (oauth4webapi keeps it on its errors). */
function responseOf(error: unknown): Response | undefined {
  if (error instanceof oauth.ResponseBodyError || error instanceof oauth.WWWAuthenticateChallengeError) return error.response;
  if (error instanceof oauth.OperationProcessingError && error.cause instanceof Response) return error.cause;
  return undefined;
}

/** How long to wait after a failure: BACKOFF_MS, or longer when the answer's Retry-After (RFC 9110 section 10.2.3) says so. */
function backoffMs(error: unknown, now: number): number {
  const retryAfter = responseOf(error)?.headers.get('retry-after')?.trim();
  if (retryAfter === undefined || retryAfter === '') return BACKOFF_MS;
  const asked = /^[0-9]+$/.test(retryAfter) ? Number(retryAfter) * 1000 : Date.parse(retryAfter) - now;
  return Number.isFinite(asked) ? Math.min(Math.max(asked, BACKOFF_MS), MAX_RETRY_AFTER_MS) : BACKOFF_MS;
}

/** `fetch` with a deadline: a token endpoint that never answers must not hold a renewal, or the calls waiting on it, forever. */
function withTimeout(fetchImpl: Fetch | undefined, timeoutMs: number): Fetch {
  const base: Fetch = fetchImpl ?? ((input, init) => fetch(input, init));
  return (input, init) => {
    const deadline = AbortSignal.timeout(timeoutMs);
    return base(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline });
  };
}

/**
 * `getToken: clientCredentials({ url, clientId, clientSecret, scope })`. The token is kept and
 * answered at once until it expires. From `renewBeforeSeconds` before its expiry (at most half its
 * lifetime) a call also starts a renewal in the background, one at a time: calls do not wait for
 * it, however slow or failing the token endpoint is, while the held token is valid. Only a call
 * with no valid token waits, and every call made meanwhile waits for that same request.
 * After a failed request none is made for 5 s (longer when the answer has a Retry-After, at most
 * 5 minutes); meanwhile a call answers the held token while it is valid, else rejects at once with
 * that failure. A refusal (a wrong or deleted client, a scope it may not have) rejects with a
 * `SignInError` (`error`: `invalid_client`, `invalid_scope`, `unauthorized_client`), as does a
 * service that cannot be reached or does not answer within `timeoutSeconds`; a call made with this
 * `getToken` then rejects with it as its `cause`. So a short outage of the token endpoint, shorter
 * than the held token's remaining life, neither stops nor delays a back end's calls.
 */
export function clientCredentials(options: ClientCredentialsOptions): () => Promise<string> {
  const renewBeforeMs = (options.renewBeforeSeconds ?? 60) * 1000;
  const issuer = issuerOf(options.url);
  const client: oauth.Client = { client_id: options.clientId };
  const auth = options.authMethod === 'client_secret_post' ? oauth.ClientSecretPost(options.clientSecret) : oauth.ClientSecretBasic(options.clientSecret);
  const parameters: Record<string, string> = options.scope === undefined ? {} : { scope: options.scope.join(' ') };
  // One fetch per helper: discover() keeps the metadata per fetch, so this one's is kept across renewals.
  const timedFetch = withTimeout(options.fetch, (options.timeoutSeconds ?? 30) * 1000);
  let held: Held | undefined;
  let renewal: Promise<string> | undefined;
  let failure: { error: SignInError; until: number } | undefined;

  const ask = async (): Promise<string> => {
    const sentAt = Date.now();
    try {
      const as = await discover({ url: issuer, fetch: timedFetch });
      const response = await oauth.clientCredentialsGrantRequest(as, client, auth, parameters, requestOptions(issuer, timedFetch));
      const answer = await oauth.processClientCredentialsResponse(as, client, response);
      const lifetimeMs = (answer.expires_in ?? 0) * 1000;
      held = { accessToken: answer.access_token, expiresAt: sentAt + lifetimeMs, renewAt: sentAt + lifetimeMs - Math.min(renewBeforeMs, lifetimeMs / 2) };
      failure = undefined;
      return answer.access_token;
    } catch (error) {
      const refused = await refusal(error);
      failure = { error: refused, until: Date.now() + backoffMs(error, Date.now()) };
      throw refused;
    }
  };
  const renew = (): Promise<string> =>
    (renewal ??= ask().finally(() => {
      renewal = undefined;
    }));

  return () => {
    const now = Date.now();
    const backingOff = failure !== undefined && now < failure.until ? failure : undefined;
    if (held !== undefined && now < held.expiresAt) {
      // A background renewal's failure is kept in `failure` (its back-off); nobody waits for it.
      if (now >= held.renewAt && renewal === undefined && backingOff === undefined) renew().catch(() => undefined);
      return Promise.resolve(held.accessToken);
    }
    if (renewal !== undefined) return renewal;
    if (backingOff !== undefined) return Promise.reject(backingOff.error);
    return renew();
  };
}
