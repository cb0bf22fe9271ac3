/**
 * A sign-in's tokens: what the token endpoint answers, the moment they expire, and where they are
 * kept between calls. Shared by the sign-in helpers (sign-in.ts) and renewal (tokens.ts).
 */

/** What `/oauth/token` answers (RFC 6749 section 5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token?: string;
  scope?: string;
  /** When the access token expires (milliseconds since the epoch): added by this client when it receives the tokens, never sent by the service. */
  expires_at?: number;
}

/** The tokens with the moment their access token expires, counted from now if not known yet. */
export const stamped = (tokens: TokenResponse): TokenResponse => (tokens.expires_at === undefined ? { ...tokens, expires_at: Date.now() + tokens.expires_in * 1000 } : tokens);

/** Where a sign-in's tokens are kept between calls (and, with `sessionStorageTokenStore`, reloads). */
export interface TokenStore {
  get(): TokenResponse | undefined;
  /** Keeps the tokens of a sign-in or a renewal; `undefined` forgets them (signed out, or the sign-in ended). */
  set(tokens: TokenResponse | undefined): void;
}

/** Tokens kept in memory only (the default): gone when the page or process ends. */
export function memoryTokenStore(initial?: TokenResponse): TokenStore {
  let tokens = initial;
  return {
    get: () => tokens,
    set: (next) => {
      tokens = next;
    },
  };
}

/** The part of the Web Storage API the stores use (`sessionStorage`, `localStorage`, or your own). */
export interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** The tab's `sessionStorage`; an error where there is none (Node, a worker). */
export const browserSessionStorage = (): KeyValueStorage => {
  const storage = (globalThis as { sessionStorage?: KeyValueStorage }).sessionStorage;
  if (storage === undefined) throw new Error('sessionStorage is not available here: pass a storage.');
  return storage;
};

/**
 * Tokens kept in the tab's `sessionStorage` under `key`: they survive a reload and the redirect of a
 * sign-in, not the tab. (Any script on the page can read them, as it could read memory.)
 */
export function sessionStorageTokenStore(key = 'order-service:tokens', storage: KeyValueStorage = browserSessionStorage()): TokenStore {
  return {
    get: () => {
      const text = storage.getItem(key);
      if (text === null) return undefined;
      try {
        return JSON.parse(text) as TokenResponse;
      } catch {
        return undefined;
      }
    },
    set: (tokens) => (tokens === undefined ? storage.removeItem(key) : storage.setItem(key, JSON.stringify(tokens))),
  };
}
