/**
 * A back end calling the service as itself (issue 36 item 11): `getToken: clientCredentials(...)`
 * with a confidential client registered through the clients API, against a listening service. The
 * token is kept while fresh, renewed in the background before it expires (at most halfway through
 * its life) with one token request at a time, and a refusal says why. A token endpoint that hangs
 * or answers 429 is a local fake (node:http): calls are answered the held token at once, and a
 * failure is followed by a back-off.
 *
 * The clock: `vi.useFakeTimers({ toFake: ['Date'] })` stops `Date` (only it: timers, sockets and
 * AbortSignal.timeout run on real time) and `vi.setSystemTime` moves it, for the helper and the
 * service alike, so "minutes later" is exact and no test waits for time to pass.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
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
afterEach(() => {
  vi.useRealTimers();
});

/** Stops `Date` at the present (see the file's comment); `at(seconds)` moves it to that many seconds after. */
function stoppedClock(): { at: (seconds: number) => void } {
  const start = Date.now();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(start);
  return { at: (seconds) => vi.setSystemTime(start + seconds * 1000) };
}

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

  it('renews renewBeforeSeconds before the token expires, in the background: the call is answered the held token at once (one token request)', async () => {
    const clock = stoppedClock();
    const counter = countingFetch();
    const getToken = clientCredentials({ url: server.base, ...backEnd, scope: ['orders:read'], fetch: counter.fetch });
    const first = await getToken();
    expect(claimsOf(first).scope).toBe('orders:read');
    // ACCESS_TOKEN_TTL_SECONDS is 900; the default renewBeforeSeconds is 60.
    clock.at(839);
    expect(await getToken()).toBe(first);
    expect(counter.tokenRequests()).toBe(1);
    clock.at(841);
    expect(await getToken()).toBe(first);
    await vi.waitFor(async () => expect(await getToken()).not.toBe(first), { timeout: 30_000 });
    const second = await getToken();
    expect(claimsOf(second).jti).not.toBe(claimsOf(first).jti);
    expect(counter.tokenRequests()).toBe(2);
  });

  it('with no valid token, calls made at once wait for one token request', async () => {
    const clock = stoppedClock();
    const counter = countingFetch();
    const getToken = clientCredentials({ url: server.base, ...backEnd, scope: ['orders:read'], fetch: counter.fetch });
    const first = await getToken();
    clock.at(901);
    // Eight clients, each its own HTTP request, asking at once for an expired token: one request.
    const clients = Array.from({ length: 8 }, () => createOrderServiceClient({ url: server.base, getToken }));
    const pages = await Promise.all(clients.map((client) => client.orders.list.query()));
    expect(pages.every((page) => Array.isArray(page.data))).toBe(true);
    expect(counter.tokenRequests()).toBe(2);
    expect(await getToken()).not.toBe(first);
  });

  it('a token that lives no longer than renewBeforeSeconds is kept for half its life, not asked for again on every call', async () => {
    const clock = stoppedClock();
    const counter = countingFetch();
    // 1000 s before a 900 s token expires is before it was issued: renewed at 450 s instead.
    const getToken = clientCredentials({ url: server.base, ...backEnd, renewBeforeSeconds: 1000, fetch: counter.fetch });
    const first = await getToken();
    const client = createOrderServiceClient({ url: server.base, getToken });
    for (let i = 0; i < 3; i += 1) await client.orders.list.query();
    clock.at(449);
    await client.orders.list.query();
    expect(await getToken()).toBe(first);
    expect(counter.tokenRequests()).toBe(1);
    clock.at(451);
    expect(await getToken()).toBe(first);
    await vi.waitFor(async () => expect(await getToken()).not.toBe(first), { timeout: 30_000 });
    expect(counter.tokenRequests()).toBe(2);
  });

  it('sends the secret in the body with authMethod client_secret_post', async () => {
    const getToken = clientCredentials({ url: server.base, ...backEnd, authMethod: 'client_secret_post' });
    expect(claimsOf(await getToken()).sub).toBe(backEnd.clientId);
  });

  it('a wrong secret or a scope the client may not have: SignInError naming it, and the call rejects with it as its cause', async () => {
    const wrong = await clientCredentials({ url: server.base, clientId: backEnd.clientId, clientSecret: 'not-the-secret' })().catch((error: unknown) => error);
    expect(wrong).toBeInstanceOf(SignInError);
    // The service's own words, read from the 401's body (a body that could not be read would give a message of the helper's).
    expect(wrong).toMatchObject({ error: 'invalid_client', status: 401, message: 'The client is unknown or its credentials are wrong.' });
    const scope = await clientCredentials({ url: server.base, ...backEnd, scope: ['users:read'] })().catch((error: unknown) => error);
    expect(scope).toMatchObject({ error: 'invalid_scope' });
    const client = createOrderServiceClient({ url: server.base, getToken: clientCredentials({ url: server.base, clientId: backEnd.clientId, clientSecret: 'wrong' }) });
    const call = await client.orders.list.query().catch((error: unknown) => error);
    expect((call as { cause?: unknown }).cause).toBeInstanceOf(SignInError);
  });

  it('a renewal refused while the held token is still valid answers the held token; once it expires, the refusal; a new helper is refused', async () => {
    const created = await admin.clients.create.mutate({ name: 'Short-lived job', grant_types: ['client_credentials'], scopes: ['orders:read'], confidential: true });
    const credentials = { url: server.base, clientId: created.client_id, clientSecret: created.client_secret ?? '' };
    const getToken = clientCredentials(credentials);
    const clock = stoppedClock();
    const held = await getToken();
    await admin.clients.delete.mutate({ client_id: created.client_id });
    clock.at(850);
    expect(await getToken()).toBe(held);
    expect(await getToken()).toBe(held);
    clock.at(901);
    expect(await getToken().catch((error: unknown) => error)).toMatchObject({ error: 'invalid_client' });
    expect(await clientCredentials(credentials)().catch((error: unknown) => error)).toMatchObject({ error: 'invalid_client' });
  });
});

/**
 * A token endpoint of our own: the RFC 8414 metadata, and token requests answered by `reply` (the
 * n-th request's answer, or 'hang': kept open until `release`). Tokens are `token-<n>`.
 */
interface FakeTokenEndpoint {
  base: string;
  /** Token requests received (the metadata's not counted). */
  requests: () => number;
  reply: (n: number) => { status: number; headers?: Record<string, string>; body: unknown } | 'hang';
  /** Answers every hung request with a token. */
  release: () => void;
  close: () => Promise<void>;
}

const tokenAnswer = (n: number, expiresIn: number) => ({ status: 200, body: { access_token: `token-${n}`, token_type: 'Bearer', expires_in: expiresIn } });

async function startTokenEndpoint(): Promise<FakeTokenEndpoint> {
  let count = 0;
  const hung: { n: number; response: ServerResponse }[] = [];
  const send = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  };
  const http = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (request.url === '/.well-known/oauth-authorization-server') {
        send(response, 200, { issuer: endpoint.base, token_endpoint: `${endpoint.base}/oauth/token` });
        return;
      }
      count += 1;
      const answer = endpoint.reply(count);
      if (answer === 'hang') hung.push({ n: count, response });
      else send(response, answer.status, answer.body, answer.headers);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const endpoint: FakeTokenEndpoint = {
    base: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    requests: () => count,
    reply: (n) => tokenAnswer(n, 100),
    release: () => {
      for (const { n, response } of hung.splice(0)) if (!response.destroyed) send(response, 200, tokenAnswer(n, 100).body);
    },
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
  return endpoint;
}

describe('clientCredentials when the token endpoint hangs or refuses (a fake endpoint)', () => {
  let endpoint: FakeTokenEndpoint;
  beforeAll(async () => {
    endpoint = await startTokenEndpoint();
  });
  afterAll(() => endpoint?.close());
  const credentials = () => ({ url: endpoint.base, clientId: 'back-end', clientSecret: 'secret' });

  it('a renewal that hangs: calls are answered the held token at once, and one renewal is in flight however many calls', async () => {
    const clock = stoppedClock();
    endpoint.reply = (n) => (n === 1 ? tokenAnswer(n, 100) : 'hang');
    const getToken = clientCredentials({ ...credentials(), timeoutSeconds: 600 });
    expect(await getToken()).toBe('token-1');
    // Renewed from 40 s (60 s before expiry).
    clock.at(50);
    expect(await Promise.all(Array.from({ length: 10 }, () => getToken()))).toEqual(Array(10).fill('token-1'));
    await vi.waitFor(() => expect(endpoint.requests()).toBe(2), { timeout: 30_000 });
    clock.at(60);
    expect(await Promise.all(Array.from({ length: 10 }, () => getToken()))).toEqual(Array(10).fill('token-1'));
    endpoint.release();
    await vi.waitFor(async () => expect(await getToken()).toBe('token-2'), { timeout: 30_000 });
    expect(endpoint.requests()).toBe(2);
  });

  it('a renewal answered 429 with Retry-After: the held token is answered, and no token request is made before Retry-After has passed', async () => {
    const clock = stoppedClock();
    const base = endpoint.requests();
    endpoint.reply = (n) =>
      n === base + 1 ? tokenAnswer(n, 100) : n === base + 2 ? { status: 429, headers: { 'retry-after': '120' }, body: { error: 'temporarily_unavailable', error_description: 'Rate limit exceeded, retry in 2 minutes' } } : tokenAnswer(n, 100);
    const getToken = clientCredentials(credentials());
    expect(await getToken()).toBe(`token-${base + 1}`);
    clock.at(50);
    expect(await Promise.all(Array.from({ length: 5 }, () => getToken()))).toEqual(Array(5).fill(`token-${base + 1}`));
    clock.at(60);
    expect(await Promise.all(Array.from({ length: 5 }, () => getToken()))).toEqual(Array(5).fill(`token-${base + 1}`));
    // Expired, within Retry-After of the 429 (received between 50 s and now): its refusal, at once.
    clock.at(101);
    expect(await getToken().catch((error: unknown) => error)).toMatchObject({ error: 'temporarily_unavailable', status: 429 });
    expect(await getToken().catch((error: unknown) => error)).toMatchObject({ error: 'temporarily_unavailable', status: 429 });
    expect(endpoint.requests()).toBe(base + 2);
    // Past Retry-After however late the 429 was read (at most 101 s + 120 s): asked again.
    clock.at(222);
    expect(await getToken()).toBe(`token-${base + 3}`);
    expect(endpoint.requests()).toBe(base + 3);
  });

  it('a token request that does not answer within timeoutSeconds fails; then none is made for 5 s', async () => {
    const clock = stoppedClock();
    const base = endpoint.requests();
    endpoint.reply = (n) => (n === base + 1 ? 'hang' : tokenAnswer(n, 100));
    const getToken = clientCredentials({ ...credentials(), timeoutSeconds: 1 });
    const timedOut = await getToken().catch((error: unknown) => error);
    expect(timedOut).toBeInstanceOf(SignInError);
    expect(endpoint.requests()).toBe(base + 1);
    clock.at(4);
    expect(await getToken().catch((error: unknown) => error)).toBe(timedOut);
    expect(endpoint.requests()).toBe(base + 1);
    clock.at(6);
    expect(await getToken()).toBe(`token-${base + 2}`);
  });
});
