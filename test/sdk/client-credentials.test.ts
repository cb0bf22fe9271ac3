/**
 * A back end calling the service as itself (issue 36 item 11): `getToken: clientCredentials(...)`
 * with a confidential client registered through the clients API, against a listening service. The
 * token is kept while fresh, renewed before it expires with one token request for every call
 * waiting on it, and a refusal says why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientCredentials, createOrderServiceClient, isProblem, SignInError, type OrderServiceClient } from '../../client-sdk/src/index.ts';
import { startOAuthServer, type OAuthTestServer } from '../helpers/oauth.ts';

let server: OAuthTestServer;
let admin: OrderServiceClient;
/** A back end's registration: client credentials, orders:read and products:write. */
let backEnd: { clientId: string; clientSecret: string };

beforeAll(async () => {
  server = await startOAuthServer();
  admin = createOrderServiceClient({ url: server.base, token: server.admin.token });
  const created = await admin.clients.create.mutate({ name: 'Warehouse sync', grant_types: ['client_credentials'], scopes: ['orders:read', 'products:write'], confidential: true });
  backEnd = { clientId: created.client_id, clientSecret: created.client_secret ?? '' };
}, 120_000);
afterAll(() => server?.close());

/** A fetch that counts the token requests it carries (not the metadata's). */
function countingFetch(): { fetch: typeof fetch; tokenRequests: () => number } {
  let count = 0;
  return {
    fetch: (input, init) => {
      if (String(input instanceof Request ? input.url : input).endsWith('/oauth/token')) count += 1;
      return fetch(input, init);
    },
    tokenRequests: () => count,
  };
}

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { sub: string; role: string; scope: string; exp: number; jti: string };

describe('clientCredentials as the typed client getToken', () => {
  it("gets a service token with the client's registered scopes, and calls go through with it", async () => {
    const getToken = clientCredentials({ url: server.base, ...backEnd });
    const client = createOrderServiceClient({ url: server.base, getToken });
    const product = await client.products.create.mutate({ sku: `SYNC-${Date.now()}`, name: 'Crate', category: 'warehouse', price: 1200 });
    expect(product).toMatchObject({ name: 'Crate' });
    expect(await client.orders.list.query()).toMatchObject({ page: 1 });
    expect(claimsOf(await getToken())).toMatchObject({ sub: backEnd.clientId, role: 'service', scope: 'orders:read products:write' });
    // Not granted: users:read.
    const refused = await client.users.list.query().catch((error: unknown) => error);
    expect(isProblem(refused) && refused.status).toBe(403);
  });

  it('keeps a fresh token: later calls make no token request', async () => {
    const counter = countingFetch();
    const getToken = clientCredentials({ url: server.base, ...backEnd, fetch: counter.fetch });
    const first = await getToken();
    const client = createOrderServiceClient({ url: server.base, getToken });
    for (let i = 0; i < 3; i += 1) await client.orders.list.query();
    expect(await getToken()).toBe(first);
    expect(counter.tokenRequests()).toBe(1);
  });

  it('renews before the token expires, and calls made during one renewal share it (one token request)', async () => {
    const counter = countingFetch();
    // Renew whenever asked: a token of ACCESS_TOKEN_TTL_SECONDS (900) is always within 1000 s of expiring.
    const getToken = clientCredentials({ url: server.base, ...backEnd, scope: ['orders:read'], renewBeforeSeconds: 1000, fetch: counter.fetch });
    const first = await getToken();
    expect(claimsOf(first).scope).toBe('orders:read');
    const second = await getToken();
    expect(claimsOf(second).jti).not.toBe(claimsOf(first).jti);
    expect(counter.tokenRequests()).toBe(2);
    // Eight clients, each its own HTTP request, asking at once: one renewal.
    const clients = Array.from({ length: 8 }, () => createOrderServiceClient({ url: server.base, getToken }));
    const pages = await Promise.all(clients.map((client) => client.orders.list.query()));
    expect(pages.every((page) => Array.isArray(page.data))).toBe(true);
    expect(counter.tokenRequests()).toBe(3);
  });

  it('sends the secret in the body with authMethod client_secret_post', async () => {
    const getToken = clientCredentials({ url: server.base, ...backEnd, authMethod: 'client_secret_post' });
    expect(claimsOf(await getToken()).sub).toBe(backEnd.clientId);
  });

  it('a wrong secret or a scope the client may not have: SignInError naming it, and the call rejects with it as its cause', async () => {
    const wrong = await clientCredentials({ url: server.base, clientId: backEnd.clientId, clientSecret: 'not-the-secret' })().catch((error: unknown) => error);
    expect(wrong).toBeInstanceOf(SignInError);
    expect(wrong).toMatchObject({ error: 'invalid_client', status: 401 });
    const scope = await clientCredentials({ url: server.base, ...backEnd, scope: ['users:read'] })().catch((error: unknown) => error);
    expect(scope).toMatchObject({ error: 'invalid_scope' });
    const client = createOrderServiceClient({ url: server.base, getToken: clientCredentials({ url: server.base, clientId: backEnd.clientId, clientSecret: 'wrong' }) });
    const call = await client.orders.list.query().catch((error: unknown) => error);
    expect((call as { cause?: unknown }).cause).toBeInstanceOf(SignInError);
  });

  it('a renewal refused while the held token is still valid answers the held token; once the client is gone, a new helper is refused', async () => {
    const created = await admin.clients.create.mutate({ name: 'Short-lived job', grant_types: ['client_credentials'], scopes: ['orders:read'], confidential: true });
    const credentials = { url: server.base, clientId: created.client_id, clientSecret: created.client_secret ?? '' };
    const getToken = clientCredentials({ ...credentials, renewBeforeSeconds: 1000 });
    const held = await getToken();
    await admin.clients.delete.mutate({ client_id: created.client_id });
    expect(await getToken()).toBe(held);
    expect(await clientCredentials(credentials)().catch((error: unknown) => error)).toMatchObject({ error: 'invalid_client' });
  });
});
