/**
 * Abuse limits (CONTRACT section 9, issue 10 item 8): a per-address limit on the token,
 * revocation and sign-in endpoints, and a per-account sign-in backoff that neither tells which
 * accounts exist nor keeps the real user out longer than its cap.
 */
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInFailures } from '../../server/db/schema.ts';
import { TEST_PASSWORD, type TestUser } from '../helpers/app.ts';
import { codeFlowStart, getForm, insertClient, postForm, postToken, startOAuthServer, type OAuthTestServer, type TestClient } from '../helpers/oauth.ts';

describe('the per-address limit on /oauth (small limit)', () => {
  let server: OAuthTestServer;
  let app: TestClient;
  beforeAll(async () => {
    server = await startOAuthServer({ oauth: { rateLimit: { max: 3, timeWindow: '1 minute' } } });
    app = await insertClient(server.db);
  });
  afterAll(() => server?.close());

  it('POST /oauth/token: past the limit 429 in OAuth form with Retry-After; RateLimit-* show the stricter limit', async () => {
    const send = () => postToken(server.base, { grant_type: 'client_credentials', client_id: app.client.client_id });
    for (let i = 0; i < 3; i++) {
      const response = await send();
      expect(response.status).toBe(400);
      expect(response.headers.get('ratelimit-limit')).toBe('3');
      expect(response.headers.get('ratelimit-remaining')).toBe(String(2 - i));
    }
    const limited = await send();
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(limited.headers.get('cache-control')).toBe('no-store');
    expect(await limited.json()).toMatchObject({ error: 'temporarily_unavailable', type: '/problems/rate-limited', status: 429 });
  });

  it('the sign-in form POST and /oauth/revoke share it; the form answers a 429 page', async () => {
    const form = await postForm(server.base, {}, undefined);
    expect(form.status).toBe(429);
    expect(form.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(Number(form.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await form.text()).toMatch(/<h1>Too many attempts<\/h1>[\s\S]*role="alert"/);
    const revoke = await postToken(server.base, { token: 'x', client_id: app.client.client_id }, {}, '/oauth/revoke');
    expect(revoke.status).toBe(429);
  });

  it('reading the form, the metadata and the API is not limited by it', async () => {
    const { query } = await codeFlowStart(app.client);
    expect((await getForm(server.base, query)).status).toBe(200);
    expect((await fetch(`${server.base}/.well-known/oauth-authorization-server`)).status).toBe(200);
    expect((await fetch(`${server.base}/api/v1/products`)).status).toBe(200);
  });
});

describe('the sign-in backoff per account', () => {
  let server: OAuthTestServer;
  let app: TestClient;
  let ada: TestUser;
  beforeAll(async () => {
    server = await startOAuthServer({ oauth: { backoff: { freeFailures: 3, baseDelayMs: 1000, maxDelayMs: 8000 } } });
    app = await insertClient(server.db);
    ada = await server.createUser('customer');
  });
  afterAll(() => server?.close());

  const passwordGrant = (username: string, password: string) => postToken(server.base, { grant_type: 'password', client_id: app.client.client_id, username, password });

  /** Lets the account's current wait pass, as time would. */
  const waitOut = () => server.db.update(signInFailures).set({ blockedUntil: sql`now() - interval '1 millisecond'` });

  const rows = () => server.db.select().from(signInFailures);

  it('after the free failures each attempt waits, even with the right password; then it works and resets', async () => {
    for (let i = 0; i < 3; i++) {
      expect(await (await passwordGrant(ada.email, 'wrong-password')).json()).toMatchObject({ error: 'invalid_grant', error_description: 'The email or password is incorrect.' });
    }
    const blocked = await passwordGrant(ada.email, TEST_PASSWORD);
    expect(blocked.status).toBe(400);
    expect(blocked.headers.get('retry-after')).toBe('1');
    expect(await blocked.json()).toMatchObject({ error: 'invalid_grant', error_description: 'Too many failed sign-ins for this email: try again in 1 second.' });
    // The email in another case is the same account.
    expect((await passwordGrant(ada.email.toUpperCase(), TEST_PASSWORD)).status).toBe(400);
    await waitOut();
    const ok = await passwordGrant(ada.email, TEST_PASSWORD);
    expect(ok.status).toBe(200);
    expect(await rows()).toEqual([]);
  });

  it('the wait doubles with each further failure, up to the cap', async () => {
    const email = `backoff-${Date.now()}@example.com`;
    const waits: number[] = [];
    for (let failure = 1; failure <= 8; failure++) {
      await waitOut();
      await passwordGrant(email, 'wrong-password');
      const [row] = await server.db
        .select({ ms: sql<number>`extract(epoch from (${signInFailures.blockedUntil} - ${signInFailures.lastFailureAt})) * 1000` })
        .from(signInFailures);
      waits.push(Math.round(Number(row?.ms ?? 0)));
    }
    expect(waits).toEqual([0, 0, 1000, 2000, 4000, 8000, 8000, 8000]);
    await server.db.delete(signInFailures);
  });

  it('an unknown email is treated exactly like a known one: same words, same backoff, one row', async () => {
    const ghost = `nobody-${Date.now()}@example.com`;
    const answers: unknown[] = [];
    for (const email of [ada.email, ghost]) {
      for (let i = 0; i < 3; i++) await passwordGrant(email, 'wrong-password');
      const response = await passwordGrant(email, 'wrong-password');
      answers.push({ status: response.status, retryAfter: response.headers.get('retry-after'), body: ((await response.json()) as { error_description: string }).error_description });
    }
    expect(answers[1]).toEqual(answers[0]);
    // Keyed by an HMAC: the table holds no email, not even a plain hash of one.
    const stored = await rows();
    expect(stored).toHaveLength(2);
    for (const row of stored) expect(row.accountKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(stored)).not.toContain(ada.email);
    await server.db.delete(signInFailures);
  });

  it('the sign-in form waits too, with a 429 page that says so', async () => {
    const { query } = await codeFlowStart(app.client);
    const form = await getForm(server.base, query);
    for (let i = 0; i < 3; i++) {
      const response = await postForm(server.base, { ...form.fields, email: ada.email, password: 'wrong-password' }, form.cookie);
      expect(response.status).toBe(400);
    }
    const response = await postForm(server.base, { ...form.fields, email: ada.email, password: TEST_PASSWORD }, form.cookie);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.text()).toContain('<p role="alert" id="sign-in-error">Too many failed sign-ins for this email: try again in 1 second.</p>');
    await waitOut();
    const signedIn = await postForm(server.base, { ...form.fields, email: ada.email, password: TEST_PASSWORD }, form.cookie);
    expect(signedIn.status).toBe(303);
  });

  it('old failures are forgotten: the count starts again', async () => {
    const email = `forgotten-${Date.now()}@example.com`;
    for (let i = 0; i < 2; i++) await passwordGrant(email, 'wrong-password');
    await server.db.update(signInFailures).set({ lastFailureAt: sql`now() - interval '1 hour'` });
    await passwordGrant(email, 'wrong-password');
    const [row] = await rows();
    expect(row?.failures).toBe(1);
    expect(row?.blockedUntil).toBeNull();
    await server.db.delete(signInFailures).where(eq(signInFailures.accountKey, row?.accountKey ?? ''));
  });
});
