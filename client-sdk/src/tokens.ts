/**
 * Staying signed in: a `getToken` for `createOrderServiceClient` that renews the access token with
 * the refresh token (RFC 6749 section 6) shortly before it expires, and keeps the rotated refresh
 * token the service answers each time.
 */

/** What `/oauth/token` answers (RFC 6749 section 5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token?: string;
  scope?: string;
}

export interface RefreshingTokenOptions {
  /** Base URL of the service; the token endpoint is `<url>/oauth/token`. */
  url: string | URL;
  /** The OAuth client the tokens were issued to (a public client: no secret). */
  clientId: string;
  /** The answer of the sign-in (password or authorization code grant). */
  tokens: TokenResponse;
  /** Renew this many seconds before the access token expires (default 30). */
  renewBeforeSeconds?: number;
  /** Told of every renewal, e.g. to keep the new refresh token for the next start. */
  onTokens?: (tokens: TokenResponse) => void;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
}

/** The token endpoint refused to renew (the session ended: sign in again). `error` is RFC 6749's code. */
export class TokenRefreshError extends Error {
  constructor(
    readonly status: number,
    readonly error: string | undefined,
  ) {
    super(`The access token could not be renewed (${status}${error ? ` ${error}` : ''}); sign in again.`);
    this.name = 'TokenRefreshError';
  }
}

/**
 * `getToken: refreshingToken({ url, clientId, tokens })`. Calls made while a renewal is under way
 * wait for that one renewal: a refresh token is single-use, and presenting it twice would revoke
 * the whole sign-in (the service takes the second use for a stolen token).
 */
export function refreshingToken(options: RefreshingTokenOptions): () => Promise<string> {
  const endpoint = `${String(options.url).replace(/\/+$/, '')}/oauth/token`;
  const renewBeforeMs = (options.renewBeforeSeconds ?? 30) * 1000;
  const fetchImpl = options.fetch ?? fetch;
  let current = options.tokens;
  let expiresAt = Date.now() + current.expires_in * 1000;
  let renewal: Promise<string> | undefined;

  const renew = async (): Promise<string> => {
    if (current.refresh_token === undefined) throw new TokenRefreshError(400, 'no_refresh_token');
    const response = await fetchImpl(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: current.refresh_token, client_id: options.clientId }).toString(),
    });
    const body = (await response.json().catch(() => ({}))) as Partial<TokenResponse> & { error?: string };
    if (!response.ok || typeof body.access_token !== 'string' || typeof body.expires_in !== 'number') {
      throw new TokenRefreshError(response.status, body.error);
    }
    current = body as TokenResponse;
    expiresAt = Date.now() + current.expires_in * 1000;
    options.onTokens?.(current);
    return current.access_token;
  };

  return () => {
    if (renewal) return renewal;
    if (Date.now() < expiresAt - renewBeforeMs) return Promise.resolve(current.access_token);
    renewal = renew().finally(() => {
      renewal = undefined;
    });
    return renewal;
  };
}
