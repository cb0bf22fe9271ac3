/**
 * The shopper's sign-in and the typed client, built only on the public entry of
 * `@order-service/client`: PKCE sign-in and sign-up through the service's own pages, tokens in the
 * tab's sessionStorage (they survive the sign-in's redirect and a reload), renewed before they
 * expire by one shared `refreshingToken`.
 */
import {
  createOrderServiceClient,
  finishSignIn,
  refreshingToken,
  sessionStorageTokenStore,
  startSignIn,
  type TokenStore,
} from '@order-service/client';
import { EventSource } from 'eventsource';
import { useEffect, useState } from 'preact/hooks';

function setting(name: 'VITE_ORDER_SERVICE_URL' | 'VITE_CLIENT_ID'): string {
  const value = import.meta.env[name];
  if (!value) throw new Error(`${name} is not set: build the storefront with it (see examples/storefront/README.md).`);
  return value;
}

export const serviceUrl = setting('VITE_ORDER_SERVICE_URL');
export const clientId = setting('VITE_CLIENT_ID');
/** Registered with the client; the callback page finishes the sign-in. */
export const redirectUri = `${location.origin}/callback`;

const listeners = new Set<() => void>();
const stored = sessionStorageTokenStore('storefront:tokens');
/** The tokens, and a word to the page whenever they change (signed in, renewed, signed out, ended). */
const store: TokenStore = {
  get: () => stored.get(),
  set: (tokens) => {
    stored.set(tokens);
    for (const listener of listeners) listener();
  },
};

/**
 * One client and one renewal for the whole app: a refresh token is single-use. Live order updates
 * take the `eventsource` package's EventSource: it sends the token in a header, which the
 * browser's own cannot (client-sdk/README.md, "Live updates").
 */
export const client = createOrderServiceClient({ url: serviceUrl, getToken: refreshingToken({ url: serviceUrl, clientId, store }), EventSource });

/** Whether the shopper is signed in; re-renders when that changes. */
export function useSignedIn(): boolean {
  const [signedIn, setSignedIn] = useState(() => store.get() !== undefined);
  useEffect(() => {
    const listener = () => setSignedIn(store.get() !== undefined);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return signedIn;
}

const RETURN_KEY = 'storefront:return-to';

/** Why the last click on "Sign in" or "Create an account" went nowhere (the page shows it). */
let signInFailure: unknown;
const failureListeners = new Set<() => void>();
const setSignInFailure = (error: unknown): void => {
  signInFailure = error;
  for (const listener of failureListeners) listener();
};

/** The last sign-in that could not start (the service unreachable...), or undefined; re-renders when it changes. */
export function useSignInFailure(): unknown {
  const [failure, setFailure] = useState<unknown>(() => signInFailure);
  useEffect(() => {
    const listener = () => setFailure(() => signInFailure);
    failureListeners.add(listener);
    return () => void failureListeners.delete(listener);
  }, []);
  return failure;
}

/**
 * To the service's sign-in page (or, with `create`, its "Create an account" page), back here after.
 * Starting needs the service's metadata: when that fails, the failure is kept for the page to show
 * (a button that does nothing on screen tells the shopper nothing).
 */
export async function signIn(options: { create?: boolean } = {}): Promise<void> {
  sessionStorage.setItem(RETURN_KEY, location.pathname + location.search);
  setSignInFailure(undefined);
  try {
    const url = await startSignIn({ url: serviceUrl, clientId, redirectUri, ...(options.create ? { prompt: 'create' as const } : {}) });
    location.assign(url);
  } catch (error) {
    setSignInFailure(error);
  }
}

let finishing: Promise<string> | undefined;

/**
 * On /callback: checks the answer (state, issuer), exchanges the code, keeps the tokens, and
 * answers the path the shopper left from. Runs once per page load (the code is single-use).
 */
export function completeSignIn(): Promise<string> {
  finishing ??= finishSignIn({ url: serviceUrl, clientId, callbackUrl: location.href, store }).then(() => {
    const back = sessionStorage.getItem(RETURN_KEY) ?? '/';
    sessionStorage.removeItem(RETURN_KEY);
    return back.startsWith('/') && !back.startsWith('/callback') ? back : '/';
  });
  return finishing;
}

/** Forgets the tokens at once, then revokes the refresh token (RFC 7009) so it cannot be used again. */
export function signOut(): void {
  const refreshToken = store.get()?.refresh_token;
  store.set(undefined);
  if (refreshToken === undefined) return;
  const body = new URLSearchParams({ client_id: clientId, token: refreshToken, token_type_hint: 'refresh_token' });
  // Best effort: the tokens are already gone from this tab either way.
  fetch(`${serviceUrl.replace(/\/+$/, '')}/oauth/revoke`, { method: 'POST', body }).catch(() => undefined);
}
