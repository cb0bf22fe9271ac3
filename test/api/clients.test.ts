/**
 * OAuth clients over REST (docs/signing-in.md#oauth-clients): an admin registers, lists, reads and
 * deletes clients; a confidential client's secret is answered once and stored only as a hash;
 * bad registrations are 422 naming the field and create nothing; deleting a client takes its
 * refresh tokens with it; the built-in docs and development clients are made sure of at start.
 */
import { count, eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../server/auth/policy.ts';
import { bootstrapClients } from '../../server/bootstrap.ts';
import { idempotencyKeys, oauthClients } from '../../server/db/schema.ts';
import {
  DEV_CLIENT_ID,
  DEV_REDIRECT_URI,
  DOCS_CLIENT_ID,
  ensureDevClient,
  ensureDocsClient,
} from '../../server/modules/clients/clients.service.ts';
import { hashSecret, secretMatches } from '../../server/auth/secrets.ts';
import { type TestUser, useTestApp } from '../helpers/app.ts';
import {
  CLIENTS,
  clientRow,
  confidentialClientInput,
  createClient,
  insertRefreshToken,
  publicClientInput,
  refreshTokenExists,
  registrationOf,
  withoutSecret,
  type ClientBody,
  type ClientListBody,
  type CreatedClientBody,
} from '../helpers/clients.ts';
import { expectProblem } from '../helpers/problems.ts';

let customer: TestUser;

const t = useTestApp();
beforeAll(async () => {
  customer = await t.createUser('customer');
});

// `null`: no token at all (undefined would fall back to the admin's).
const post = (body: unknown, token: string | null = t.admin.token, headers: Record<string, string> = {}) =>
  t.request({ method: 'POST', url: CLIENTS, payload: body as Record<string, unknown>, headers, ...(token === null ? {} : { token }) });
const get = (clientId: string, token: string | null = t.admin.token, headers: Record<string, string> = {}) =>
  t.request({ method: 'GET', url: `${CLIENTS}/${encodeURIComponent(clientId)}`, headers, ...(token === null ? {} : { token }) });
const del = (clientId: string, token: string | null = t.admin.token, headers: Record<string, string> = {}) =>
  t.request({ method: 'DELETE', url: `${CLIENTS}/${encodeURIComponent(clientId)}`, headers, ...(token === null ? {} : { token }) });
const list = (query = '', token: string | null = t.admin.token) =>
  t.request({ method: 'GET', url: `${CLIENTS}${query}`, ...(token === null ? {} : { token }) });

const clientCount = async (): Promise<number> => (await t.db.select({ n: count() }).from(oauthClients))[0]?.n ?? 0;

describe('POST /clients registers a client and answers 201 with its client_id', () => {
  it('a public client: 201, Location, no-store, the representation without any secret; GET answers the same', async () => {
    const body = publicClientInput();
    const res = await post(body);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const created = res.json<CreatedClientBody>();
    expect(created).toEqual({
      client_id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      ...body,
      created_at: expect.any(String),
      updated_at: created.created_at,
    });
    expect(created).not.toHaveProperty('client_secret');
    expect(res.headers.location).toBe(`/api/v1/clients/${created.client_id}`);
    const read = await get(created.client_id);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(created);
    expect((await clientRow(t.db, created.client_id))?.secretHash).toBeNull();
  });

  it('a confidential client gets a client_secret in the 201 only; the table keeps just its hash', async () => {
    const created = await createClient(t, confidentialClientInput());
    const secret = created.client_secret;
    expect(secret).toEqual(expect.stringMatching(/^[A-Za-z0-9_-]{43}$/));
    const row = await clientRow(t.db, created.client_id);
    expect(row?.secretHash).toBe(hashSecret(secret ?? ''));
    expect(row?.secretHash).not.toContain(secret);
    expect(secretMatches(secret ?? '', row?.secretHash)).toBe(true);
    // Never shown again: not by GET, not in the list.
    const read = await get(created.client_id);
    expect(read.json()).not.toHaveProperty('client_secret');
    expect(read.body).not.toContain(secret);
    expect(read.json()).toEqual(withoutSecret(created));
    const listed = await list('?limit=100');
    expect(listed.body).not.toContain(secret);
    expect(listed.body).not.toContain('secret');
  });

  it('every confidential client gets a secret of its own, and every client an id of its own', async () => {
    const [a, b] = [await createClient(t, confidentialClientInput()), await createClient(t, confidentialClientInput())];
    expect(a.client_id).not.toBe(b.client_id);
    expect(a.client_secret).not.toBe(b.client_secret);
  });

  it('redirect_uris defaults to none, first_party and confidential to false', async () => {
    const backend = await createClient(t, { name: 'Backend', grant_types: ['client_credentials'], scopes: ['orders:read'], confidential: true });
    expect(backend).toMatchObject({ redirect_uris: [], first_party: false, confidential: true });
    const app = await createClient(t, { name: 'App', redirect_uris: ['https://app.example.com/cb'], grant_types: ['authorization_code'], scopes: ['orders:read'] });
    expect(app).toMatchObject({ first_party: false, confidential: false });
    expect(app).not.toHaveProperty('client_secret');
  });

  it('a first-party confidential client may use every grant at once', async () => {
    const created = await createClient(
      t,
      confidentialClientInput({
        grant_types: ['authorization_code', 'refresh_token', 'client_credentials', 'password'],
        redirect_uris: ['https://first.example.com/cb'],
        first_party: true,
        scopes: [...SCOPES],
      }),
    );
    expect(created.grant_types).toEqual(['authorization_code', 'refresh_token', 'client_credentials', 'password']);
    expect(created.scopes).toEqual([...SCOPES]);
  });

  it.each([
    ['https with a port, path and query', 'https://app.example.com:8443/oauth/cb?tenant=a%20b'],
    ['http to 127.0.0.1 (RFC 8252 loopback)', 'http://127.0.0.1:8765/callback'],
    ['http to localhost', 'http://localhost:3000/cb'],
    ['http to [::1]', 'http://[::1]:8080/cb'],
    ['a private-use scheme of a native app (RFC 8252 7.1)', 'com.example.app:/oauth2redirect'],
  ])('accepts a redirect URI: %s', async (_name, uri) => {
    const created = await createClient(t, publicClientInput({ redirect_uris: [uri] }));
    // Kept as written: the authorization endpoint compares exact strings.
    expect(created.redirect_uris).toEqual([uri]);
  });

  it(`accepts 10 redirect URIs of up to 2000 characters`, async () => {
    const uris = Array.from({ length: 10 }, (_, i) => `https://app.example.com/${String(i)}/`.padEnd(2000, 'x'));
    expect((await createClient(t, publicClientInput({ redirect_uris: uris }))).redirect_uris).toEqual(uris);
  });
});

describe('a bad registration is 422 naming the field, and creates nothing', () => {
  const bad: [string, Record<string, unknown>, string][] = [
    ['an empty name', { name: '' }, 'name'],
    ['a name of 201 characters', { name: 'n'.repeat(201) }, 'name'],
    ['a name with a control character', { name: 'App\u001b[31m' }, 'name'],
    ['no name', { name: undefined }, 'name'],
    ['a redirect URI that is not a URI', { redirect_uris: ['not a uri'] }, 'redirect_uris.0'],
    ['a relative redirect URI', { redirect_uris: ['/oauth/callback'] }, 'redirect_uris.0'],
    ['a redirect URI with a fragment (RFC 6749 3.1.2)', { redirect_uris: ['https://app.example.com/cb#done'] }, 'redirect_uris.0'],
    ['a redirect URI with an empty fragment', { redirect_uris: ['https://app.example.com/cb#'] }, 'redirect_uris.0'],
    ['plain http to a host that is not loopback', { redirect_uris: ['http://app.example.com/cb'] }, 'redirect_uris.0'],
    ['plain http to a host that only starts like localhost', { redirect_uris: ['http://localhost.evil.example/cb'] }, 'redirect_uris.0'],
    ['a javascript: URI', { redirect_uris: ['javascript:alert(1)'] }, 'redirect_uris.0'],
    ['a data: URI', { redirect_uris: ['data:text/html,hi'] }, 'redirect_uris.0'],
    ['a file: URI', { redirect_uris: ['file:///etc/passwd'] }, 'redirect_uris.0'],
    ['an ftp: URI', { redirect_uris: ['ftp://files.example.com/cb'] }, 'redirect_uris.0'],
    ['https without //', { redirect_uris: ['https:app.example.com/cb'] }, 'redirect_uris.0'],
    ['user credentials in the URI', { redirect_uris: ['https://user:pw@app.example.com/cb'] }, 'redirect_uris.0'],
    ['a space in the URI', { redirect_uris: ['https://app.example.com/o auth'] }, 'redirect_uris.0'],
    ['a backslash in the URI', { redirect_uris: ['https://app.example.com\\@evil.example/cb'] }, 'redirect_uris.0'],
    ['a broken percent escape', { redirect_uris: ['https://app.example.com/%zz'] }, 'redirect_uris.0'],
    ['non-ASCII text in the URI', { redirect_uris: ['https://app.example.com/café'] }, 'redirect_uris.0'],
    ['a redirect URI of 2001 characters', { redirect_uris: ['https://app.example.com/'.padEnd(2001, 'x')] }, 'redirect_uris.0'],
    ['an empty redirect URI', { redirect_uris: [''] }, 'redirect_uris.0'],
    ['a redirect URI that is not a string', { redirect_uris: [42] }, 'redirect_uris.0'],
    ['11 redirect URIs', { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example.com/${String(i)}`) }, 'redirect_uris'],
    ['a repeated redirect URI', { redirect_uris: ['https://app.example.com/cb', 'https://app.example.com/cb'] }, 'redirect_uris.1'],
    ['redirect_uris that is not an array', { redirect_uris: 'https://app.example.com/cb' }, 'redirect_uris'],
    ['no grant types', { grant_types: [] }, 'grant_types'],
    ['grant_types missing', { grant_types: undefined }, 'grant_types'],
    ['an unknown grant type', { grant_types: ['implicit'] }, 'grant_types.0'],
    ['a repeated grant type', { grant_types: ['authorization_code', 'authorization_code'] }, 'grant_types'],
    ['authorization_code without a redirect URI', { grant_types: ['authorization_code'], redirect_uris: [] }, 'redirect_uris'],
    ['password for a client that is not first-party', { grant_types: ['password'], redirect_uris: [], first_party: false }, 'grant_types'],
    ['client_credentials for a public client (RFC 6749 4.4)', { grant_types: ['client_credentials'], redirect_uris: [], confidential: false }, 'grant_types'],
    ['refresh_token alone', { grant_types: ['refresh_token'], redirect_uris: [] }, 'grant_types'],
    ['refresh_token beside client_credentials only', { grant_types: ['client_credentials', 'refresh_token'], redirect_uris: [], confidential: true }, 'grant_types'],
    ['redirect URIs without the authorization_code grant', { grant_types: ['client_credentials'], confidential: true }, 'redirect_uris'],
    ['no scopes', { scopes: [] }, 'scopes'],
    ['scopes missing', { scopes: undefined }, 'scopes'],
    ['an unknown scope', { scopes: ['admin'] }, 'scopes.0'],
    ['a repeated scope', { scopes: ['orders:read', 'orders:read'] }, 'scopes'],
    ['first_party that is not a boolean', { first_party: 'yes' }, 'first_party'],
    ['confidential that is not a boolean', { confidential: 1 }, 'confidential'],
    ['a client_secret chosen by the caller', { client_secret: 'my-own-secret-value' }, 'client_secret'],
    ['a client_id chosen by the caller', { client_id: 'order-service-docs' }, 'client_id'],
  ];

  it.each(bad)('%s', async (_name, change, field) => {
    const before = await clientCount();
    const body = Object.fromEntries(Object.entries({ ...publicClientInput(), ...change }).filter(([, value]) => value !== undefined));
    expectProblem(await post(body), 422, 'validation-error', { fields: [field] });
    expect(await clientCount()).toBe(before);
  });

  it('every invalid field is named at once', async () => {
    const problem = expectProblem(await post({ name: '', redirect_uris: ['http://evil.example/cb'], grant_types: ['password'], scopes: [] }), 422, 'validation-error');
    expect((problem.errors ?? []).map((e) => e.field)).toEqual(expect.arrayContaining(['name', 'redirect_uris.0', 'grant_types', 'scopes']));
  });

  it('a body that is not a JSON object is 422, a missing Content-Type 415', async () => {
    expect((await t.request({ method: 'POST', url: CLIENTS, payload: '[]', headers: { 'content-type': 'application/json' }, token: t.admin.token })).statusCode).toBe(422);
    expectProblem(await t.request({ method: 'POST', url: CLIENTS, payload: 'name=x', headers: { 'content-type': 'text/plain' }, token: t.admin.token }), 415, 'unsupported-media-type');
  });
});

describe('only admins manage clients (policy: admin role, clients:manage scope)', () => {
  let existing: CreatedClientBody;
  beforeAll(async () => {
    existing = await createClient(t);
  });

  const operations = [
    ['POST /clients', (token: string | null) => post(publicClientInput(), token)],
    ['GET /clients', (token: string | null) => list('', token)],
    ['GET /clients/{client_id}', (token: string | null) => get(existing.client_id, token)],
    ['DELETE /clients/{client_id}', (token: string | null) => del(existing.client_id, token)],
  ] as const;

  it.each(operations)('%s without a token is 401', async (_name, call) => {
    const before = await clientCount();
    const res = await call(null);
    expectProblem(res, 401, 'unauthorized');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(await clientCount()).toBe(before);
  });

  it.each(operations)('%s as a customer is 403', async (_name, call) => {
    const before = await clientCount();
    expectProblem(await call(customer.token), 403, 'forbidden');
    expect(await clientCount()).toBe(before);
  });

  it.each(operations)('%s as a service client without clients:manage is 403', async (_name, call) => {
    const before = await clientCount();
    const res = await call(await t.serviceToken(['orders:read', 'orders:write', 'products:write', 'users:read']));
    expect(res.statusCode, res.body).toBe(403);
    expect(await clientCount()).toBe(before);
  });

  it.each(operations)('%s as a service client even with clients:manage is 403: clients are registered by people', async (_name, call) => {
    const res = await call(await t.serviceToken(['clients:manage']));
    expect(res.statusCode, res.body).toBe(403);
  });

  it.each(operations)('%s with an admin token limited by a scope claim without clients:manage is 403', async (_name, call) => {
    const before = await clientCount();
    const token = await t.tokens.mint({ sub: String(t.admin.id), role: 'admin', name: t.admin.name, scope: 'orders:read orders:write' });
    const res = await call(token);
    expect(res.statusCode, res.body).toBe(403);
    expect(await clientCount()).toBe(before);
  });

  it('an admin token whose scope claim grants clients:manage registers a client', async () => {
    const token = await t.tokens.mint({ sub: String(t.admin.id), role: 'admin', name: t.admin.name, scope: 'clients:manage' });
    expect((await post(publicClientInput(), token)).statusCode).toBe(201);
  });

  it('the same through /trpc: a customer is 403, an admin gets the client', async () => {
    const { client_id: clientId } = await createClient(t);
    const trpcGet = (token: string) =>
      t.request({ method: 'GET', url: `/trpc/clients.get?input=${encodeURIComponent(JSON.stringify({ client_id: clientId }))}`, token });
    expect((await trpcGet(customer.token)).statusCode).toBe(403);
    const res = await trpcGet(t.admin.token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<{ result: { data: ClientBody } }>().result.data.client_id).toBe(clientId);
  });
});

describe('GET /clients lists clients, newest first, in pages', () => {
  it('answers the list envelope; pages neither overlap nor skip; Link points to the next page', async () => {
    for (let i = 0; i < 3; i++) await createClient(t);
    const all = (await list('?limit=100')).json<ClientListBody>();
    expect(all).toMatchObject({ page: 1, limit: 100, has_more: false });
    expect(all.data.length).toBeGreaterThanOrEqual(3);
    const created = all.data.map((c) => c.created_at);
    expect(created).toEqual([...created].sort().reverse());

    const first = await list('?limit=2&page=1');
    expect(first.statusCode).toBe(200);
    expect(first.headers['cache-control']).toBe('private, max-age=0, must-revalidate');
    expect(first.headers.link).toContain('rel="next"');
    const pages: ClientBody[] = [];
    for (let page = 1; page <= Math.ceil(all.data.length / 2) + 1; page++) {
      const body = (await list(`?limit=2&page=${String(page)}`)).json<ClientListBody>();
      expect(body.has_more).toBe(page * 2 < all.data.length);
      pages.push(...body.data);
    }
    expect(pages.map((c) => c.client_id)).toEqual(all.data.map((c) => c.client_id));
  });

  it('no client in the list carries a secret', async () => {
    await createClient(t, confidentialClientInput());
    for (const client of (await list('?limit=100')).json<ClientListBody>().data) expect(client).not.toHaveProperty('client_secret');
  });

  it.each([['?limit=0'], ['?limit=101'], ['?page=0'], ['?page=1000001']])('%s is 422', async (query) => {
    expectProblem(await list(query), 422, 'validation-error');
  });

  it('a page past the end is empty', async () => {
    expect((await list('?page=100000')).json<ClientListBody>()).toMatchObject({ data: [], has_more: false });
  });
});

describe('GET /clients/{client_id}', () => {
  it('answers the client with ETag and Last-Modified, and 304 to a matching If-None-Match', async () => {
    const created = await createClient(t);
    const res = await get(created.client_id);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('private, max-age=0, must-revalidate');
    expect(res.headers['last-modified']).toBe(new Date(created.updated_at).toUTCString());
    const etag = String(res.headers.etag);
    expect((await get(created.client_id, t.admin.token, { 'if-none-match': etag })).statusCode).toBe(304);
  });

  it.each([
    ['an unknown client_id', 'Hq3cY1n0x9K7d2mWv8Jt4A'],
    ['a client_id of a form the service never makes', 'not.a.client'],
    ['a client_id of 65 characters', 'a'.repeat(65)],
  ])('%s is 404', async (_name, clientId) => {
    expectProblem(await get(clientId), 404, 'not-found');
  });
});

describe('DELETE /clients/{client_id}', () => {
  it('answers 204; afterwards GET is 404 and a second DELETE 404', async () => {
    const created = await createClient(t);
    const res = await del(created.client_id);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expectProblem(await get(created.client_id), 404, 'not-found');
    expectProblem(await del(created.client_id), 404, 'not-found');
    expect(await clientRow(t.db, created.client_id)).toBeUndefined();
  });

  it("revokes the client's refresh tokens (their rows go with it) and leaves other clients' alone", async () => {
    const [doomed, other] = [await createClient(t), await createClient(t)];
    const user = await t.createUser();
    const doomedToken = await insertRefreshToken(t.db, doomed.client_id, user.id);
    const otherToken = await insertRefreshToken(t.db, other.client_id, user.id);
    expect(await refreshTokenExists(t.db, doomedToken)).toBe(true);
    expect((await del(doomed.client_id)).statusCode).toBe(204);
    expect(await refreshTokenExists(t.db, doomedToken)).toBe(false);
    expect(await refreshTokenExists(t.db, otherToken)).toBe(true);
  });

  it('honours If-Match: a stale tag is 412 and keeps the client; the current one deletes it', async () => {
    const created = await createClient(t);
    const stale = await del(created.client_id, t.admin.token, { 'if-match': '"not-the-current-tag"' });
    expectProblem(stale, 412, 'precondition-failed');
    expect(await clientRow(t.db, created.client_id)).toBeDefined();
    const etag = String((await get(created.client_id)).headers.etag);
    expect((await del(created.client_id, t.admin.token, { 'if-match': etag })).statusCode).toBe(204);
  });

  it('an unknown client_id is 404 and deletes nothing', async () => {
    const before = await clientCount();
    expectProblem(await del('Hq3cY1n0x9K7d2mWv8Jt4A'), 404, 'not-found');
    expect(await clientCount()).toBe(before);
  });
});

describe('Idempotency-Key on POST /clients: a replay never shows the secret again', () => {
  it('the replay answers 200 with the same client, without client_secret; one client is created', async () => {
    const body = confidentialClientInput();
    const key = `clients-${Math.random().toString(36).slice(2)}`;
    const first = await post(body, t.admin.token, { 'idempotency-key': key });
    expect(first.statusCode, first.body).toBe(201);
    const created = first.json<CreatedClientBody>();
    expect(created.client_secret).toEqual(expect.any(String));

    const replay = await post(body, t.admin.token, { 'idempotency-key': key });
    expect(replay.statusCode, replay.body).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers.location).toBe(first.headers.location);
    expect(replay.headers['cache-control']).toBe('no-store');
    const { client_secret: secret, ...representation } = created;
    expect(replay.json()).toEqual(representation);
    expect(replay.body).not.toContain(String(secret));
    // The replay is what GET answers, validators included.
    const read = await get(created.client_id);
    expect(replay.headers.etag).toBe(read.headers.etag);

    const rows = await t.db.select({ n: count() }).from(oauthClients).where(eq(oauthClients.name, body.name));
    expect(rows[0]?.n).toBe(1);
  });

  it('the stored answer kept with the key holds no secret', async () => {
    const key = `clients-${Math.random().toString(36).slice(2)}`;
    const first = await post(confidentialClientInput(), t.admin.token, { 'idempotency-key': key });
    const secret = first.json<CreatedClientBody>().client_secret;
    const [row] = await t.db.select({ body: idempotencyKeys.responseBody }).from(idempotencyKeys).where(eq(idempotencyKeys.key, key));
    expect(row?.body).toContain(first.json<CreatedClientBody>().client_id);
    expect(row?.body).not.toContain(String(secret));
    expect(row?.body).not.toContain('client_secret');
  });

  it('another body with the same key is 422 idempotency-key-mismatch', async () => {
    const key = `clients-${Math.random().toString(36).slice(2)}`;
    expect((await post(confidentialClientInput(), t.admin.token, { 'idempotency-key': key })).statusCode).toBe(201);
    expectProblem(await post(confidentialClientInput(), t.admin.token, { 'idempotency-key': key }), 422, 'idempotency-key-mismatch');
  });
});

describe('built-in clients, made sure of at start (server/bootstrap.ts)', () => {
  it('ensureDocsClient creates the docs page client: first-party, public, code flow + refresh, every scope, redirect under the base', async () => {
    const docs = await ensureDocsClient(t.db, 'http://127.0.0.1:3000');
    const expected = {
      client_id: DOCS_CLIENT_ID,
      redirect_uris: ['http://127.0.0.1:3000/api/docs/oauth2-redirect.html'],
      grant_types: ['authorization_code', 'refresh_token'],
      scopes: [...SCOPES],
      first_party: true,
      confidential: false,
    };
    expect(docs).toMatchObject(expected);
    expect((await get(DOCS_CLIENT_ID)).json()).toEqual(docs);
    expect((await clientRow(t.db, DOCS_CLIENT_ID))?.secretHash).toBeNull();
  });

  it('running it again changes nothing (same row, same updated_at); a new base replaces the redirect URI', async () => {
    const first = await ensureDocsClient(t.db, 'https://shop.example.com');
    const again = await ensureDocsClient(t.db, 'https://shop.example.com/');
    expect(again).toEqual(first);
    expect(again.redirect_uris).toEqual(['https://shop.example.com/api/docs/oauth2-redirect.html']);
    const user = await t.createUser();
    const token = await insertRefreshToken(t.db, DOCS_CLIENT_ID, user.id);

    const moved = await ensureDocsClient(t.db, 'https://api.example.org/orders');
    expect(moved.redirect_uris).toEqual(['https://api.example.org/orders/api/docs/oauth2-redirect.html']);
    expect(moved.created_at).toBe(first.created_at);
    expect(Date.parse(moved.updated_at)).toBeGreaterThanOrEqual(Date.parse(first.updated_at));
    // Updated in place, never re-created: what it issued stays valid.
    expect(await refreshTokenExists(t.db, token)).toBe(true);
    expect(await t.db.select({ n: count() }).from(oauthClients).where(eq(oauthClients.id, DOCS_CLIENT_ID))).toEqual([{ n: 1 }]);
  });

  it('a built-in client that was changed in the table is brought back to its shape', async () => {
    await ensureDevClient(t.db);
    await t.db.execute(sql`update ${oauthClients} set scopes = '{orders:read}', first_party = false where id = ${DEV_CLIENT_ID}`);
    const dev = await ensureDevClient(t.db);
    expect(dev).toMatchObject({ scopes: [...SCOPES], first_party: true });
  });

  it('a deleted docs client comes back at the next start', async () => {
    await ensureDocsClient(t.db, 'http://127.0.0.1:3000');
    expect((await del(DOCS_CLIENT_ID)).statusCode).toBe(204);
    expect((await ensureDocsClient(t.db, 'http://127.0.0.1:3000')).client_id).toBe(DOCS_CLIENT_ID);
    expect((await get(DOCS_CLIENT_ID)).statusCode).toBe(200);
  });

  it('ensureDevClient: a first-party public client for password, code flow (loopback redirect) and refresh; twice is once', async () => {
    const dev = await ensureDevClient(t.db);
    expect(dev).toMatchObject({
      client_id: DEV_CLIENT_ID,
      redirect_uris: [DEV_REDIRECT_URI],
      grant_types: ['password', 'refresh_token', 'authorization_code'],
      scopes: [...SCOPES],
      first_party: true,
      confidential: false,
    });
    expect(await ensureDevClient(t.db)).toEqual(dev);
    expect((await clientRow(t.db, DEV_CLIENT_ID))?.secretHash).toBeNull();
  });

  it('bootstrapClients: the docs client in every environment, the development client only in development', async () => {
    await t.db.delete(oauthClients).where(eq(oauthClients.id, DEV_CLIENT_ID));
    const production = await bootstrapClients(t.db, { env: 'production' }, 'https://orders.example.com');
    expect(production.dev).toBeUndefined();
    expect(production.docs.redirect_uris).toEqual(['https://orders.example.com/api/docs/oauth2-redirect.html']);
    expect(await clientRow(t.db, DEV_CLIENT_ID)).toBeUndefined();

    const development = await bootstrapClients(t.db, { env: 'development' }, 'http://127.0.0.1:3000');
    expect(development.dev?.client_id).toBe(DEV_CLIENT_ID);
    expect(await bootstrapClients(t.db, { env: 'development' }, 'http://127.0.0.1:3000')).toEqual(development);
  });

  it('the built-in clients pass the rules an admin registration must pass', async () => {
    for (const client of [await ensureDocsClient(t.db, 'http://127.0.0.1:3000'), await ensureDevClient(t.db)]) {
      const res = await post(registrationOf(client));
      expect(res.statusCode, res.body).toBe(201);
    }
  });
});
