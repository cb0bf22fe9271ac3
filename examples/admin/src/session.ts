/**
 * The admin's sign-in and the typed client, built only on the public entry of
 * `@order-service/client`: the same PKCE sign-in as the storefront, asking for the scopes an admin
 * console uses; tokens in the tab's sessionStorage, renewed by one shared `refreshingToken`.
 */
import {
  createOrderServiceClient,
  finishSignIn,
  refreshingToken,
  sessionStorageTokenStore,
  startSignIn,
  type TokenStore,
} from '@order-service/client';
import { useEffect, useState } from 'preact/hooks';

function setting(name: 'VITE_ORDER_SERVICE_URL' | 'VITE_CLIENT_ID'): string {
  const value = import.meta.env[name];
  if (!value) throw new Error(`${name} is not set: build the console with it (see docs/examples.md).`);
  return value;
}

export const serviceUrl = setting('VITE_ORDER_SERVICE_URL');
export const clientId = setting('VITE_CLIENT_ID');
export const redirectUri = `${location.origin}/callback`;

/**
 * What the console does: read and move orders, ship them, refund payments, keep the catalogue,
 * register OAuth clients. A customer who signs in here gets a token without the admin-only ones
 * (the service grants a person only what their role can use), and the pages say so.
 */
export const ADMIN_SCOPES = ['orders:read', 'orders:write', 'fulfillments:write', 'payments:write', 'products:write', 'users:read', 'clients:manage'] as const;

const listeners = new Set<() => void>();
const stored = sessionStorageTokenStore('admin:tokens');
const store: TokenStore = {
  get: () => stored.get(),
  set: (tokens) => {
    stored.set(tokens);
    for (const listener of listeners) listener();
  },
};

/** One client and one renewal for the whole app: a refresh token is single-use. */
export const client = createOrderServiceClient({ url: serviceUrl, getToken: refreshingToken({ url: serviceUrl, clientId, store }) });

export function useSignedIn(): boolean {
  const [signedIn, setSignedIn] = useState(() => store.get() !== undefined);
  useEffect(() => {
    const listener = () => setSignedIn(store.get() !== undefined);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return signedIn;
}

const RETURN_KEY = 'admin:return-to';

/** Why the last click on "Sign in" went nowhere (the page shows it). */
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
 * To the service's sign-in page, back here after. Starting needs the service's metadata: when that
 * fails (the service down, or this origin missing from its CORS_ORIGINS), the failure is kept for
 * the page to show, rather than a button that does nothing on screen.
 */
export async function signIn(): Promise<void> {
  sessionStorage.setItem(RETURN_KEY, location.pathname + location.search);
  setSignInFailure(undefined);
  try {
    location.assign(await startSignIn({ url: serviceUrl, clientId, redirectUri, scope: ADMIN_SCOPES }));
  } catch (error) {
    setSignInFailure(error);
  }
}

let finishing: Promise<string> | undefined;

/** On /callback: checks state and issuer, exchanges the code, answers the path to go back to. */
export function completeSignIn(): Promise<string> {
  finishing ??= finishSignIn({ url: serviceUrl, clientId, callbackUrl: location.href, store }).then(() => {
    const back = sessionStorage.getItem(RETURN_KEY) ?? '/';
    sessionStorage.removeItem(RETURN_KEY);
    return back.startsWith('/') && !back.startsWith('/callback') ? back : '/';
  });
  return finishing;
}

/** Forgets the tokens at once, then revokes the refresh token (RFC 7009). */
export function signOut(): void {
  const refreshToken = store.get()?.refresh_token;
  store.set(undefined);
  if (refreshToken === undefined) return;
  const body = new URLSearchParams({ client_id: clientId, token: refreshToken, token_type_hint: 'refresh_token' });
  fetch(`${serviceUrl.replace(/\/+$/, '')}/oauth/revoke`, { method: 'POST', body }).catch(() => undefined);
}
