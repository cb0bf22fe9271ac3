/**
 * A back end calling the service as itself: the client credentials grant (RFC 6749 section 4.4) of
 * a confidential client, built on oauth4webapi. `clientCredentials(...)` is a `getToken` for
 * `createOrderServiceClient` that keeps the access token and asks for a new one shortly before it
 * expires, once for every call waiting on it. The service's side is its docs/signing-in.md.
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
  /** Ask for a new token this many seconds before the held one expires (default 60). */
  renewBeforeSeconds?: number;
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
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/**
 * `getToken: clientCredentials({ url, clientId, clientSecret, scope })`. The token is kept and used
 * until `renewBeforeSeconds` before it expires; then the next call asks for a new one, and every
 * call made meanwhile waits for that same request (one token request, however many calls).
 * A refusal (a wrong or deleted client, a scope it may not have) rejects with a `SignInError`
 * (`error`: `invalid_client`, `invalid_scope`, `unauthorized_client`), as does a service that
 * cannot be reached; a call made with this `getToken` then rejects with it as its `cause`. While
 * the held token has not expired yet, a failed renewal answers it instead, and the next call tries
 * again: a short outage of the token endpoint does not stop a back end's calls.
 */
export function clientCredentials(options: ClientCredentialsOptions): () => Promise<string> {
  const renewBeforeMs = (options.renewBeforeSeconds ?? 60) * 1000;
  const issuer = issuerOf(options.url);
  const client: oauth.Client = { client_id: options.clientId };
  const auth = options.authMethod === 'client_secret_post' ? oauth.ClientSecretPost(options.clientSecret) : oauth.ClientSecretBasic(options.clientSecret);
  const parameters: Record<string, string> = options.scope === undefined ? {} : { scope: options.scope.join(' ') };
  let held: Held | undefined;
  let request: Promise<string> | undefined;

  const ask = async (): Promise<string> => {
    try {
      const as = await discover(options);
      const response = await oauth.clientCredentialsGrantRequest(as, client, auth, parameters, requestOptions(issuer, options.fetch));
      const answer = await oauth.processClientCredentialsResponse(as, client, response);
      held = { accessToken: answer.access_token, expiresAt: Date.now() + (answer.expires_in ?? 0) * 1000 };
      return answer.access_token;
    } catch (error) {
      if (held !== undefined && Date.now() < held.expiresAt) return held.accessToken;
      throw await refusal(error);
    }
  };

  return () => {
    if (held !== undefined && Date.now() < held.expiresAt - renewBeforeMs) return Promise.resolve(held.accessToken);
    request ??= ask().finally(() => {
      request = undefined;
    });
    return request;
  };
}
