/**
 * Signing in, built on oauth4webapi (a certified OAuth 2.0 client library): the authorization code
 * flow with PKCE for browsers (`startSignIn`, then `finishSignIn` on the redirect back), the password
 * grant for first-party apps (`signInWithPassword`); where tokens are kept is token-store.ts.
 * The rules they follow are the service's docs/signing-in.md.
 */
import * as oauth from 'oauth4webapi';
import type { Fetch } from './fetch.js';
import { browserSessionStorage, stamped, type KeyValueStorage, type TokenResponse, type TokenStore } from './token-store.js';

/**
 * The scopes a first-party shopper needs: read and place orders, pay them, read and change their own
 * account. Nothing admin-only. Ask for more (`scope`) in an admin app.
 */
export const CUSTOMER_SCOPES = ['orders:read', 'orders:write', 'payments:write', 'users:read', 'users:write'] as const;

/** A sign-in that did not give tokens. `error` is RFC 6749's code (`invalid_grant`: wrong credentials or code). */
export class SignInError extends Error {
  constructor(
    message: string,
    /** RFC 6749's error code, or `invalid_response` when the answer (state, issuer, body) was not valid. */
    readonly error: string,
    /** The HTTP status of the token endpoint's answer, when there was one. */
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SignInError';
  }
}

export interface SignInOptions {
  /** The service's base URL, which is its issuer (its `PUBLIC_URL`), e.g. `https://orders.example.com`. */
  url: string | URL;
  /** The OAuth client (a public client: no secret). */
  clientId: string;
  /** Scopes to ask for; default `CUSTOMER_SCOPES`. */
  scope?: readonly string[];
  /** Where to keep the tokens; they are also returned. */
  store?: TokenStore;
  /** A `fetch` to use instead of the global one. */
  fetch?: Fetch;
}

export const issuerOf = (url: string | URL): URL => new URL(String(url).replace(/\/+$/, ''));

/** oauth4webapi refuses plain http unless told; a service on http (development) is the caller's choice. */
export const requestOptions = (issuer: URL, fetchImpl: Fetch | undefined) => ({
  ...(issuer.protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {}),
  ...(fetchImpl === undefined ? {} : { [oauth.customFetch]: fetchImpl }),
});

/** How long a service's metadata is used before it is fetched again. */
const DISCOVERY_TTL_MS = 10 * 60_000;

interface Discovery {
  metadata: Promise<oauth.AuthorizationServer>;
  fetchedAt: number;
}

/** Metadata fetched, by issuer, per `fetch` (the global one under `globalFetch`): one request per issuer, not one per sign-in. */
const globalFetch: Fetch = (...args) => fetch(...args);
const discoveries = new WeakMap<Fetch, Map<string, Discovery>>();

/**
 * The service's RFC 8414 metadata, checked to name `url` as its issuer. Kept for
 * DISCOVERY_TTL_MS (a start and the finish of a sign-in, and every renewal of the page, ask once);
 * a failed fetch is not kept, so the next call tries again.
 */
export async function discover(options: Pick<SignInOptions, 'url' | 'fetch'>): Promise<oauth.AuthorizationServer> {
  const issuer = issuerOf(options.url);
  let byIssuer = discoveries.get(options.fetch ?? globalFetch);
  if (byIssuer === undefined) discoveries.set(options.fetch ?? globalFetch, (byIssuer = new Map()));
  const kept = byIssuer.get(issuer.href);
  if (kept !== undefined && Date.now() - kept.fetchedAt < DISCOVERY_TTL_MS) return kept.metadata;
  const metadata = (async () => {
    try {
      const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...requestOptions(issuer, options.fetch) });
      return await oauth.processDiscoveryResponse(issuer, response);
    } catch (error) {
      throw asSignInError(error);
    }
  })();
  const entry: Discovery = { metadata, fetchedAt: Date.now() };
  byIssuer.set(issuer.href, entry);
  metadata.catch(() => {
    if (byIssuer.get(issuer.href) === entry) byIssuer.delete(issuer.href);
  });
  return metadata;
}

/** Any failure of oauth4webapi as a `SignInError`: the service's refusal keeps its code and status. */
export function asSignInError(error: unknown): SignInError {
  if (error instanceof SignInError) return error;
  if (error instanceof oauth.ResponseBodyError || error instanceof oauth.AuthorizationResponseError) {
    return new SignInError(error.error_description ?? error.message, error.error, error instanceof oauth.ResponseBodyError ? error.status : undefined, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new SignInError(`The sign-in failed: ${message}`, 'invalid_response', undefined, { cause: error });
}

const asTokens = (response: oauth.TokenEndpointResponse): TokenResponse =>
  stamped({
    access_token: response.access_token,
    token_type: response.token_type,
    expires_in: response.expires_in ?? 0,
    ...(response.refresh_token === undefined ? {} : { refresh_token: response.refresh_token }),
    ...(response.scope === undefined ? {} : { scope: response.scope }),
  });

const scopeOf = (options: SignInOptions): string => (options.scope ?? CUSTOMER_SCOPES).join(' ');

/**
 * The password grant, for first-party apps only (the service refuses it to other clients): the
 * shopper's email and password for tokens. Wrong credentials: `SignInError` `invalid_grant`.
 */
export async function signInWithPassword(options: SignInOptions & { username: string; password: string }): Promise<TokenResponse> {
  const as = await discover(options);
  const client: oauth.Client = { client_id: options.clientId };
  try {
    const parameters = { username: options.username, password: options.password, scope: scopeOf(options) };
    const response = await oauth.genericTokenEndpointRequest(as, client, oauth.None(), 'password', parameters, requestOptions(issuerOf(options.url), options.fetch));
    const tokens = asTokens(await oauth.processGenericTokenEndpointResponse(as, client, response));
    options.store?.set(tokens);
    return tokens;
  } catch (error) {
    throw asSignInError(error);
  }
}

export interface BrowserSignInOptions extends SignInOptions {
  /** Where the service sends the browser back (registered with the client), e.g. `${location.origin}/callback`. */
  redirectUri: string;
  /** Where the state and PKCE verifier wait for the redirect back; default the tab's `sessionStorage`. */
  pending?: KeyValueStorage;
  /** `create`: open the service's sign-up form instead of the sign-in form (a "Sign up" button). */
  prompt?: 'create';
}

const PENDING_KEY = 'order-service:sign-in';

interface Pending {
  state: string;
  verifier: string;
  redirectUri: string;
}

/**
 * Starts the authorization code flow with PKCE: keeps a fresh state and code verifier in
 * `pending`, and answers the URL of the service's sign-in page to send the browser to
 * (`location.assign(url)`). The page sends the browser back to `redirectUri`; call `finishSignIn` there.
 */
export async function startSignIn(options: BrowserSignInOptions): Promise<URL> {
  const as = await discover(options);
  if (as.authorization_endpoint === undefined) throw new SignInError('The service names no authorization endpoint.', 'invalid_response');
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const pending: Pending = { state, verifier, redirectUri: options.redirectUri };
  (options.pending ?? browserSessionStorage()).setItem(PENDING_KEY, JSON.stringify(pending));
  const url = new URL(as.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: options.clientId,
    redirect_uri: options.redirectUri,
    scope: scopeOf(options),
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...(options.prompt === undefined ? {} : { prompt: options.prompt }),
  }).toString();
  return url;
}

/**
 * Finishes the flow on the redirect back: checks the answer's `state` (against the one `startSignIn`
 * kept) and `iss` (RFC 9207: the answer is from this service), exchanges the code with the
 * verifier, and answers the tokens. A refusal on the sign-in page (`error=access_denied`), a
 * state or issuer that does not match, or a spent code: `SignInError`. The pending state is used up
 * either way: a second call with the same answer fails.
 */
export async function finishSignIn(options: Omit<BrowserSignInOptions, 'redirectUri' | 'scope'> & { callbackUrl: string | URL }): Promise<TokenResponse> {
  const storage = options.pending ?? browserSessionStorage();
  const text = storage.getItem(PENDING_KEY);
  storage.removeItem(PENDING_KEY);
  if (text === null) throw new SignInError('No sign-in was started in this tab (or it was already finished).', 'invalid_request');
  const pending = JSON.parse(text) as Pending;
  const as = await discover(options);
  const client: oauth.Client = { client_id: options.clientId };
  try {
    const parameters = oauth.validateAuthResponse(as, client, new URL(String(options.callbackUrl)), pending.state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      parameters,
      pending.redirectUri,
      pending.verifier,
      requestOptions(issuerOf(options.url), options.fetch),
    );
    const tokens = asTokens(await oauth.processAuthorizationCodeResponse(as, client, response));
    options.store?.set(tokens);
    return tokens;
  } catch (error) {
    throw asSignInError(error);
  }
}
