/**
 * Staying signed in: a `getToken` for `createOrderServiceClient` that renews the access token with
 * the refresh token (RFC 6749 section 6) shortly before it expires, and keeps the rotated refresh
 * token the service answers each time.
 */
import { TRPCClientError } from '@trpc/client';
import type { AppRouter } from './app-router.js';
import type { Fetch } from './fetch.js';
import { memoryTokenStore, stamped, type TokenResponse, type TokenStore } from './token-store.js';

export type { TokenResponse };

export type RefreshingTokenOptions = {
  /** Base URL of the service; the token endpoint is `<url>/oauth/token`. */
  url: string | URL;
  /** The OAuth client the tokens were issued to (a public client: no secret). */
  clientId: string;
  /** Renew this many seconds before the access token expires (default 30). */
  renewBeforeSeconds?: number;
  /** Told of every renewal, e.g. to keep the new refresh token for the next start. */
  onTokens?: (tokens: TokenResponse) => void;
  /** A `fetch` to use instead of the global one. */
  fetch?: Fetch;
} & (
  | {
      /** The answer of the sign-in (password or authorization code grant). */
      tokens: TokenResponse;
      store?: never;
    }
  | {
      /**
       * Where the sign-in's tokens are kept (`signInWithPassword` and `finishSignIn` put them there):
       * read before every call, so a client made before signing in calls anonymously until then;
       * renewals are written back, and an ended sign-in is cleared from it.
       */
      store: TokenStore;
      tokens?: never;
    }
);

/**
 * The token endpoint refused to renew (the session ended: sign in again). `error` is RFC 6749's
 * code. A `TRPCClientError` too, so a call that needed the renewal rejects with this very error.
 */
export class TokenRefreshError extends TRPCClientError<AppRouter> {
  constructor(
    readonly status: number,
    readonly error: string | undefined,
  ) {
    super(`The access token could not be renewed (${status}${error ? ` ${error}` : ''}); sign in again.`);
    // TRPCClientError resets the prototype to its own; a subclass must set it back.
    Object.setPrototypeOf(this, new.target.prototype);
    this.name = 'TokenRefreshError';
  }
}

/**
 * `getToken: refreshingToken({ url, clientId, store })` (or `tokens` instead of a store). Calls made
 * while a renewal is under way wait for that one renewal: a refresh token is single-use, and
 * presenting it twice would revoke the whole sign-in (the service takes the second use for a
 * stolen token). Answers nothing (an anonymous call) while the store holds no sign-in; once a
 * sign-in has ended (a refused renewal), rejects with its `TokenRefreshError` until the store
 * holds a new one, so nothing meant for the user is sent anonymously.
 */
export function refreshingToken(options: RefreshingTokenOptions): () => Promise<string | undefined> {
  const endpoint = `${String(options.url).replace(/\/+$/, '')}/oauth/token`;
  const renewBeforeMs = (options.renewBeforeSeconds ?? 30) * 1000;
  const fetchImpl: Fetch = options.fetch ?? ((input, init) => fetch(input, init));
  const store = options.store ?? memoryTokenStore(stamped(options.tokens));
  let renewal: Promise<string> | undefined;
  /** Why the last sign-in ended: calls fail with it (never go out anonymously) until the store holds a new one. */
  let endedBy: TokenRefreshError | undefined;

  const renew = async (current: TokenResponse): Promise<string> => {
    if (current.refresh_token === undefined) throw ended(400, 'no_refresh_token');
    const response = await fetchImpl(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: current.refresh_token, client_id: options.clientId }).toString(),
    });
    const body = (await response.json().catch(() => ({}))) as Partial<TokenResponse> & { error?: string };
    // A refusal ends the sign-in; a 5xx or a network failure (thrown above) leaves it for a retry.
    if (!response.ok || typeof body.access_token !== 'string' || typeof body.expires_in !== 'number') {
      throw response.status >= 400 && response.status < 500 ? ended(response.status, body.error) : new TokenRefreshError(response.status, body.error);
    }
    const next = stamped(body as TokenResponse);
    store.set(next);
    options.onTokens?.(next);
    return next.access_token;
  };

  const ended = (status: number, error: string | undefined): TokenRefreshError => {
    endedBy = new TokenRefreshError(status, error);
    store.set(undefined);
    return endedBy;
  };

  return () => {
    if (renewal) return renewal;
    let current = store.get();
    if (current === undefined) return endedBy ? Promise.reject(endedBy) : Promise.resolve(undefined);
    endedBy = undefined;
    if (current.expires_at === undefined) {
      current = stamped(current);
      store.set(current);
    }
    if (Date.now() < (current.expires_at ?? 0) - renewBeforeMs) return Promise.resolve(current.access_token);
    renewal = renew(current).finally(() => {
      renewal = undefined;
    });
    return renewal;
  };
}
