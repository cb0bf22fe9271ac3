/**
 * Signing in with the typed client (issue 26 item 1): the password grant and the browser PKCE flow
 * (state and `iss` checked), tokens kept in a `TokenStore`, renewal through the store, the default
 * customer scopes that let a shopper check out, and the documented errors thrown as such.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createOrderServiceClient,
  CUSTOMER_SCOPES,
  finishSignIn,
  idempotent,
  isProblem,
  memoryTokenStore,
  refreshingToken,
  sessionStorageTokenStore,
  SignInError,
  signInWithPassword,
  startSignIn,
  TokenRefreshError,
  type KeyValueStorage,
} from '../../client-sdk/src/index.ts';
import { TEST_PASSWORD, type TestUser } from '../helpers/app.ts';
import { changeOwnPassword, insertClient, NEW_PASSWORD, REDIRECT_URI, signInWithForm, startOAuthServer, type OAuthTestServer, type TestClient } from '../helpers/oauth.ts';
import { createProduct } from '../helpers/products.ts';

let server: OAuthTestServer;
let app: TestClient;

beforeAll(async () => {
  server = await startOAuthServer();
  app = await insertClient(server.db);
});
afterAll(() => server?.close());

/** A `sessionStorage` of its own (Node has none). */
function memoryStorage(): KeyValueStorage & { items: Map<string, string> } {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
    removeItem: (key) => void items.delete(key),
  };
}

const options = () => ({ url: server.base, clientId: app.client.client_id });

describe('signInWithPassword', () => {
  it('signs a shopper in with the customer scopes, keeps the tokens in the store, and the client checks out with them', async () => {
    const ada = await server.createUser('customer');
    const store = memoryTokenStore();
    const tokens = await signInWithPassword({ ...options(), username: ada.email, password: TEST_PASSWORD, store });
    expect(tokens.scope).toBe(CUSTOMER_SCOPES.join(' '));
    expect(store.get()).toEqual(tokens);
    expect(tokens.expires_at).toBeGreaterThan(Date.now());

    const product = await createProduct(server, { price: 450, stock: 5 });
    const client = createOrderServiceClient({ url: server.base, getToken: refreshingToken({ ...options(), store }) });
    const order = await client.orders.create.mutate({ address: '1 Main Street, Springfield', items: [{ product_id: product.id, quantity: 2 }] });
    await client.orders.confirm.mutate({ id: order.id });
    const pay = { order_id: order.id, amount: 900, method: 'card' as const };
    const key = `checkout-${order.id}`;
    // A double click: two calls with one key pay once.
    const [first, second] = await Promise.all([client.payments.create.mutate(pay, idempotent(key)), client.payments.create.mutate(pay, idempotent(key))]);
    expect(second.id).toBe(first.id);
    expect(await client.orders.get.query({ id: order.id })).toMatchObject({ status: 'paid' });
  });

  it('fetches the service metadata once for many sign-ins, and again after a failed fetch', async () => {
    const ada = await server.createUser('customer');
    const metadataPaths: string[] = [];
    let failNext = true;
    const counting: typeof fetch = async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.pathname.startsWith('/.well-known/')) {
        metadataPaths.push(url.pathname);
        if (failNext) {
          failNext = false;
          return new Response('unavailable', { status: 503 });
        }
      }
      return fetch(input, init);
    };
    const signIn = () => signInWithPassword({ ...options(), username: ada.email, password: TEST_PASSWORD, fetch: counting });
    await expect(signIn()).rejects.toBeInstanceOf(SignInError);
    await signIn();
    await signIn();
    await startSignIn({ ...options(), redirectUri: REDIRECT_URI, pending: memoryStorage(), fetch: counting });
    expect(metadataPaths).toEqual(['/.well-known/oauth-authorization-server', '/.well-known/oauth-authorization-server']);
  });

  it('asks only for what is given: a narrower scope is granted as asked', async () => {
    const ada = await server.createUser('customer');
    const tokens = await signInWithPassword({ ...options(), username: ada.email, password: TEST_PASSWORD, scope: ['orders:read'] });
    expect(tokens.scope).toBe('orders:read');
  });

  it('a wrong password is a SignInError invalid_grant (400) and stores nothing', async () => {
    const ada = await server.createUser('customer');
    const store = memoryTokenStore();
    const failure = await signInWithPassword({ ...options(), username: ada.email, password: 'not-the-password', store }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SignInError);
    expect(failure).toMatchObject({ error: 'invalid_grant', status: 400, message: 'The email or password is incorrect.' });
    expect(store.get()).toBeUndefined();
  });

  it('a service that is not the issuer named by url is refused (the metadata must name it)', async () => {
    const failure = await signInWithPassword({ url: server.base.replace('127.0.0.1', 'localhost'), clientId: app.client.client_id, username: 'a@example.com', password: 'x' }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(SignInError);
    expect(failure).toMatchObject({ error: 'invalid_response' });
  });
});

describe('startSignIn and finishSignIn (authorization code with PKCE)', () => {
  /** The browser's part: the service's sign-in form, submitted, answering the redirect back. */
  const signInOnThePage = (authorizeUrl: URL, user: TestUser) => signInWithForm(server.base, Object.fromEntries(authorizeUrl.searchParams), { email: user.email, password: TEST_PASSWORD });

  it('sends the browser to the sign-in page with state and an S256 challenge, and exchanges the code on the way back', async () => {
    const ada = await server.createUser('customer');
    const pending = memoryStorage();
    const authorizeUrl = await startSignIn({ ...options(), redirectUri: REDIRECT_URI, pending });
    expect(authorizeUrl.origin + authorizeUrl.pathname).toBe(`${server.base}/oauth/authorize`);
    expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizeUrl.searchParams.get('scope')).toBe(CUSTOMER_SCOPES.join(' '));
    expect(pending.items.size).toBe(1);

    const callback = await signInOnThePage(authorizeUrl, ada);
    const store = memoryTokenStore();
    const tokens = await finishSignIn({ ...options(), callbackUrl: callback, pending, store });
    expect(tokens.scope).toBe(CUSTOMER_SCOPES.join(' '));
    expect(store.get()).toEqual(tokens);
    expect(pending.items.size).toBe(0);
    const client = createOrderServiceClient({ url: server.base, getToken: refreshingToken({ ...options(), store }) });
    expect(await client.users.get.query({ id: ada.id })).toMatchObject({ id: ada.id });

    // The answer is used up: finishing again fails, and sends nothing.
    const again = await finishSignIn({ ...options(), callbackUrl: callback, pending }).catch((error: unknown) => error);
    expect(again).toBeInstanceOf(SignInError);
    expect(again).toMatchObject({ error: 'invalid_request' });
  });

  it('an answer whose state is not the one kept is refused before any code is exchanged (the code stays unused)', async () => {
    const ada = await server.createUser('customer');
    const pending = memoryStorage();
    const callback = await signInOnThePage(await startSignIn({ ...options(), redirectUri: REDIRECT_URI, pending }), ada);
    const kept = pending.items.get('order-service:sign-in') ?? '';
    const forged = new URL(callback);
    forged.searchParams.set('state', 'another-state');
    const failure = await finishSignIn({ ...options(), callbackUrl: forged, pending }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SignInError);
    expect(failure).toMatchObject({ error: 'invalid_response' });
    // The genuine answer still works with the genuine state: the forged one spent nothing.
    pending.setItem('order-service:sign-in', kept);
    expect(await finishSignIn({ ...options(), callbackUrl: callback, pending })).toMatchObject({ token_type: expect.stringMatching(/^bearer$/i) });
  });

  it('an answer naming another issuer (a mix-up) is refused', async () => {
    const ada = await server.createUser('customer');
    const pending = memoryStorage();
    const callback = await signInOnThePage(await startSignIn({ ...options(), redirectUri: REDIRECT_URI, pending }), ada);
    const mixedUp = new URL(callback);
    mixedUp.searchParams.set('iss', 'https://attacker.example');
    const failure = await finishSignIn({ ...options(), callbackUrl: mixedUp, pending }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SignInError);
    expect(failure).toMatchObject({ error: 'invalid_response' });
  });

  it('a refusal sent back by the service (invalid_scope) is a SignInError with its code', async () => {
    const ada = await server.createUser('customer');
    const pending = memoryStorage();
    const callback = await signInOnThePage(await startSignIn({ ...options(), redirectUri: REDIRECT_URI, pending, scope: ['products:write'] }), ada);
    const failure = await finishSignIn({ ...options(), callbackUrl: callback, pending }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SignInError);
    expect(failure).toMatchObject({ error: 'invalid_scope', message: 'The scope asks for nothing your role can use.' });
  });

  it("prompt: 'create' opens the service's sign-up form for the same request", async () => {
    const authorizeUrl = await startSignIn({ ...options(), redirectUri: REDIRECT_URI, pending: memoryStorage(), prompt: 'create' });
    expect(authorizeUrl.searchParams.get('prompt')).toBe('create');
    const page = await fetch(authorizeUrl);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('autocomplete="new-password"');
  });

  it('finishing without a started sign-in is a SignInError invalid_request', async () => {
    const failure = await finishSignIn({ ...options(), callbackUrl: `${REDIRECT_URI}?code=x&state=y`, pending: memoryStorage() }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SignInError);
    expect(failure).toMatchObject({ error: 'invalid_request' });
  });
});

describe('tokens in a store, renewed through it', () => {
  it('a client made before signing in calls anonymously, then with the stored sign-in', async () => {
    const store = sessionStorageTokenStore('tokens', memoryStorage());
    const client = createOrderServiceClient({ url: server.base, getToken: refreshingToken({ ...options(), store }) });
    const anonymous = await client.orders.list.query().catch((error: unknown) => error);
    expect(isProblem(anonymous) && anonymous.status).toBe(401);
    const ada = await server.createUser('customer');
    await signInWithPassword({ ...options(), username: ada.email, password: TEST_PASSWORD, store });
    expect(await client.orders.list.query()).toMatchObject({ data: [] });
  });

  it('a renewal is written back to the store (rotated refresh token, new expiry)', async () => {
    const ada = await server.createUser('customer');
    const storage = memoryStorage();
    const store = sessionStorageTokenStore('tokens', storage);
    const first = await signInWithPassword({ ...options(), username: ada.email, password: TEST_PASSWORD, store });
    const getToken = refreshingToken({ ...options(), store, renewBeforeSeconds: 10_000 });
    const renewed = await getToken();
    expect(renewed).not.toBe(first.access_token);
    expect(store.get()).toMatchObject({ access_token: renewed });
    expect(store.get()?.refresh_token).not.toBe(first.refresh_token);
    expect(JSON.parse(storage.items.get('tokens') ?? '{}')).toMatchObject({ access_token: renewed });
  });

  it('an ended sign-in: the call rejects with the TokenRefreshError itself, later calls too (never anonymous), the store is cleared', async () => {
    const ada = await server.createUser('customer');
    const store = memoryTokenStore();
    await signInWithPassword({ ...options(), username: ada.email, password: TEST_PASSWORD, store });
    const client = createOrderServiceClient({ url: server.base, getToken: refreshingToken({ ...options(), store, renewBeforeSeconds: 10_000 }) });
    await changeOwnPassword(server, ada);
    const failure = await client.orders.list.query().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TokenRefreshError);
    expect(failure).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(store.get()).toBeUndefined();
    const later = await client.orders.list.query().catch((error: unknown) => error);
    expect(later).toBeInstanceOf(TokenRefreshError);
    // A new sign-in in the store ends the refusal.
    await signInWithPassword({ ...options(), username: ada.email, password: NEW_PASSWORD, store });
    expect(await client.orders.list.query()).toMatchObject({ data: [] });
  });
});
