/**
 * Abuse limits (docs/signing-in.md#limits-and-backoff, issue 10 item 8): a per-address limit on the token,
 * revocation and sign-in endpoints, and a sign-in backoff (per account and address, and per
 * account) that counts parallel guesses, tells nothing about which accounts exist, and cannot be
 * used to keep the real user out.
 *
 * No assertion here depends on the machine's speed: the waits the tests meet are a minute or
 * more, longer than a test may run, and time passing is simulated by moving the stored waits back.
 */
import { eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { signInFailures } from '../../server/db/schema.ts';
import { passwordMatches } from '../../server/modules/users/users.service.ts';
import { defaultOAuthSettings, purposeKey } from '../../server/oauth/settings.ts';
import { SignIn, waitMessage } from '../../server/oauth/sign-in.ts';
import { TEST_PASSWORD, type TestUser } from '../helpers/app.ts';
import { codeFlowStart, getForm, insertClient, postForm, postToken, type TestClient, useOAuthServer } from '../helpers/oauth.ts';

describe('the per-address limit on /oauth (small limit)', () => {
  let app: TestClient;
  const server = useOAuthServer({ oauth: { rateLimit: { max: 3, timeWindow: '1 minute' } } });
  beforeAll(async () => {
    app = await insertClient(server.db);
  });

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

describe('the sign-in backoff per account and address', () => {
  let app: TestClient;
  let ada: TestUser;
  const server = useOAuthServer({ oauth: { backoff: { freeFailures: 3, baseDelayMs: 60_000, maxDelayMs: 480_000 } } });
  beforeAll(async () => {
    app = await insertClient(server.db);
    ada = await server.createUser('customer');
  });

  const passwordGrant = (username: string, password: string) => postToken(server.base, { grant_type: 'password', client_id: app.client.client_id, username, password });

  /** Lets the current waits pass, as time would. */
  const waitOut = () => server.db.update(signInFailures).set({ blockedUntil: sql`now() - interval '1 millisecond'` });

  const rows = () => server.db.select().from(signInFailures);

  /** The Retry-After of a refusal: the wait of a minute, less what a loaded machine took since the failure. */
  const retryAfter = (response: Response): number => {
    const seconds = Number(response.headers.get('retry-after'));
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThanOrEqual(60);
    return seconds;
  };

  it('after the free failures each attempt waits, even with the right password; then it works and resets', async () => {
    for (let i = 0; i < 3; i++) {
      expect(await (await passwordGrant(ada.email, 'wrong-password')).json()).toMatchObject({ error: 'invalid_grant', error_description: 'The email or password is incorrect.' });
    }
    const blocked = await passwordGrant(ada.email, TEST_PASSWORD);
    expect(blocked.status).toBe(400);
    const seconds = retryAfter(blocked);
    expect(await blocked.json()).toMatchObject({ error: 'invalid_grant', error_description: waitMessage(seconds) });
    // The email in another case is the same account.
    expect((await passwordGrant(ada.email.toUpperCase(), TEST_PASSWORD)).status).toBe(400);
    await waitOut();
    const ok = await passwordGrant(ada.email, TEST_PASSWORD);
    expect(ok.status).toBe(200);
    // The address starts afresh; the account keeps its three real failures (far below its own threshold).
    expect((await rows()).map((row) => [row.failures, row.blockedUntil])).toEqual([[3, null]]);
    await server.db.delete(signInFailures);
  });

  it('the wait doubles with each further failure, up to the cap', async () => {
    const email = `backoff-${Date.now()}@example.com`;
    const waits: number[] = [];
    for (let failure = 1; failure <= 8; failure++) {
      await waitOut();
      await passwordGrant(email, 'wrong-password');
      const [row] = await server.db
        .select({ ms: sql<number>`max(extract(epoch from (${signInFailures.blockedUntil} - ${signInFailures.lastFailureAt})) * 1000)` })
        .from(signInFailures);
      waits.push(Math.round(Number(row?.ms ?? 0)));
    }
    expect(waits).toEqual([0, 0, 60_000, 120_000, 240_000, 480_000, 480_000, 480_000]);
    await server.db.delete(signInFailures);
  });

  it('an unknown email is treated exactly like a known one: same words, same backoff, same rows', async () => {
    const ghost = `nobody-${Date.now()}@example.com`;
    const answers: unknown[] = [];
    for (const email of [ada.email, ghost]) {
      for (let i = 0; i < 3; i++) await passwordGrant(email, 'wrong-password');
      const response = await passwordGrant(email, 'wrong-password');
      answers.push({ status: response.status, retryAfter: response.headers.get('retry-after'), body: ((await response.json()) as { error_description: string }).error_description });
    }
    expect(answers[1]).toEqual(answers[0]);
    // Keyed by HMACs: the table holds no email, user id or address, not even a plain hash of one.
    const stored = await rows();
    expect(stored).toHaveLength(4);
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
    const seconds = retryAfter(response);
    expect(await response.text()).toContain(`<p role="alert" id="sign-in-error">${waitMessage(seconds)}</p>`);
    await waitOut();
    const signedIn = await postForm(server.base, { ...form.fields, email: ada.email, password: TEST_PASSWORD }, form.cookie);
    expect(signedIn.status).toBe(303);
    await server.db.delete(signInFailures);
  });

  it('old failures are forgotten: the count starts again', async () => {
    const email = `forgotten-${Date.now()}@example.com`;
    for (let i = 0; i < 2; i++) await passwordGrant(email, 'wrong-password');
    await server.db.update(signInFailures).set({ lastFailureAt: sql`now() - interval '1 hour'` });
    await passwordGrant(email, 'wrong-password');
    const stored = await rows();
    expect(stored.map((row) => [row.failures, row.blockedUntil])).toEqual([
      [1, null],
      [1, null],
    ]);
    await server.db.delete(signInFailures);
  });

  it('parallel guesses are counted before any is checked: of 30 at once, only the free 3 get their password checked, on any machine', async () => {
    const guesses = await Promise.all(Array.from({ length: 30 }, (_, i) => passwordGrant(ada.email, `wrong-password-${i}`)));
    const words = await Promise.all(guesses.map(async (response) => ((await response.json()) as { error_description: string }).error_description));
    expect(words.filter((text) => text === 'The email or password is incorrect.')).toHaveLength(3);
    expect(words.filter((text) => text.startsWith('Too many failed sign-ins'))).toHaveLength(27);
    await waitOut();
    expect((await passwordGrant(ada.email, TEST_PASSWORD)).status).toBe(200);
    await server.db.delete(signInFailures);
  });

  it('an email spelled outside ASCII is refused unchecked: it never signs in as the user the database would fold it to', async () => {
    const alice = await server.createUser('customer', `alice-${Date.now()}@example.com`);
    // U+0130 (capital I with dot above): PostgreSQL's lower() makes it "i", JavaScript's two characters.
    const lookalike = alice.email.replace('alice', 'al\u0130ce');
    for (let i = 0; i < 3; i++) await passwordGrant(alice.email, 'wrong-password');
    const response = await passwordGrant(lookalike, TEST_PASSWORD);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_grant', error_description: 'The email or password is incorrect.' });
    // Nor while the account is not waiting: such a username is never checked.
    await waitOut();
    expect((await passwordGrant(lookalike, TEST_PASSWORD)).status).toBe(400);
    expect((await passwordGrant(alice.email.toUpperCase(), TEST_PASSWORD)).status).toBe(200);
    await server.db.delete(signInFailures);
  });
});

describe('the sign-in backoff cannot keep the real user out', () => {
  let app: TestClient;
  let ada: TestUser;
  const server = useOAuthServer({
    oauth: { backoff: { freeFailures: 3, baseDelayMs: 60_000, maxDelayMs: 60_000 }, accountBackoff: { freeFailures: 6, baseDelayMs: 60_000, maxDelayMs: 60_000 } },
  });
  beforeAll(async () => {
    app = await insertClient(server.db);
    ada = await server.createUser('customer');
  });

  /** The password grant from a client address of one's choosing. */
  const grantFrom = async (address: string, password: string, username = ada.email) => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/oauth/token',
      remoteAddress: address,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: 'password', client_id: app.client.client_id, username, password }).toString(),
    });
    return { status: response.statusCode, description: (response.json() as { error_description?: string }).error_description };
  };
  const waiting = expect.stringMatching(/^Too many failed sign-ins/);
  const incorrect = 'The email or password is incorrect.';

  it('an attacker failing from one address waits; the real user elsewhere signs in', async () => {
    for (let i = 0; i < 3; i++) expect(await grantFrom('198.51.100.1', 'wrong-password')).toEqual({ status: 400, description: incorrect });
    expect(await grantFrom('198.51.100.1', TEST_PASSWORD)).toEqual({ status: 400, description: waiting });
    expect((await grantFrom('192.0.2.10', TEST_PASSWORD)).status).toBe(200);
    // The attacker still waits; an IPv6 attacker's neighbours in the same /64 are the same address.
    expect((await grantFrom('198.51.100.1', 'wrong-password')).description).toEqual(waiting);
    for (let i = 0; i < 3; i++) await grantFrom(`2001:db8:7:7::${i + 1}`, 'wrong-password');
    expect(await grantFrom('2001:db8:7:7::99', TEST_PASSWORD)).toEqual({ status: 400, description: waiting });
    await server.db.delete(signInFailures);
  });

  it('failures from many addresses make the account wait, but an address without failures on it is still heard', async () => {
    // Two failures from each of three addresses: none waits for itself, the account has 6.
    for (const address of ['198.51.100.11', '198.51.100.12', '198.51.100.13']) {
      for (let i = 0; i < 2; i++) expect((await grantFrom(address, 'wrong-password')).description).toBe(incorrect);
    }
    // The attackers' addresses wait now, even with the right password.
    expect(await grantFrom('198.51.100.11', TEST_PASSWORD)).toEqual({ status: 400, description: waiting });
    // A fresh address is checked: a wrong password fails (and that address then waits too) ...
    expect(await grantFrom('198.51.100.14', 'wrong-password')).toEqual({ status: 400, description: incorrect });
    expect(await grantFrom('198.51.100.14', TEST_PASSWORD)).toEqual({ status: 400, description: waiting });
    // ... and the real user, from an address that has not failed, signs in during the account's wait.
    expect((await grantFrom('192.0.2.20', TEST_PASSWORD)).status).toBe(200);
    // Another email's account is unaffected by this one's wait.
    const grace = await server.createUser('customer');
    expect((await grantFrom('198.51.100.11', TEST_PASSWORD, grace.email)).status).toBe(200);
    await server.db.delete(signInFailures);
  });
});

describe('the sign-in wait starts when a failure is recorded, whatever the password check takes (issue 21 item 6)', () => {
  let ada: TestUser;
  const server = useOAuthServer();
  beforeAll(async () => {
    ada = await server.createUser('customer');
  });

  const backoff = { freeFailures: 3, baseDelayMs: 60_000, maxDelayMs: 60_000, forgetAfterMs: 15 * 60_000 };
  const address = '198.51.100.7';
  const keyMaterial = purposeKey('limits-test', 'sign-in-account');

  /**
   * Sign-ins whose every password check outlasts the wait: while it runs, the address's stored
   * wait moves two minutes back, as two minutes passing would (a check is 50-100 ms of scrypt, and
   * seconds on a loaded host). `checked` counts the checks.
   */
  function slowChecks(check: typeof passwordMatches = passwordMatches) {
    const { pair } = new SignIn(server.db, keyMaterial, backoff, defaultOAuthSettings.accountBackoff).keys({ userId: ada.id }, address);
    const counts = { checked: 0 };
    const signIn = new SignIn(server.db, keyMaterial, backoff, defaultOAuthSettings.accountBackoff, async (account, password) => {
      counts.checked += 1;
      await server.db
        .update(signInFailures)
        .set({ blockedUntil: sql`${signInFailures.blockedUntil} - interval '2 minutes'` })
        .where(eq(signInFailures.accountKey, pair));
      return check(account, password);
    });
    return { signIn, counts, pair };
  }

  const refused = { ok: false, retryAfterSeconds: expect.any(Number) };

  it('a failure whose check outlasts the wait still makes the next attempt wait, even with the right password', async () => {
    const { signIn, counts } = slowChecks();
    for (let i = 0; i < 3; i++) expect(await signIn.signIn(ada.email, 'wrong-password', address)).toEqual({ ok: false });
    // Counted from before the check, the wait had passed by the time the third failure answered.
    expect(await signIn.signIn(ada.email, TEST_PASSWORD, address)).toEqual(refused);
    expect(counts.checked).toBe(3);
    await server.db.delete(signInFailures);
  });

  it('of 30 parallel guesses exactly the free 3 are checked, however long each check takes; the next waits the whole wait', async () => {
    const { signIn, counts, pair } = slowChecks();
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => signIn.signIn(ada.email, `wrong-password-${i}`, address)));
    expect(counts.checked).toBe(3);
    expect(outcomes.filter((outcome) => !outcome.ok && outcome.retryAfterSeconds === undefined)).toHaveLength(3);
    // The wait is a whole minute from the last recorded failure.
    const [row] = await server.db
      .select({ failures: signInFailures.failures, ms: sql<number>`extract(epoch from (${signInFailures.blockedUntil} - ${signInFailures.lastFailureAt})) * 1000` })
      .from(signInFailures)
      .where(eq(signInFailures.accountKey, pair));
    expect({ failures: row?.failures, ms: Math.round(Number(row?.ms)) }).toEqual({ failures: 3, ms: 60_000 });
    expect(await signIn.signIn(ada.email, TEST_PASSWORD, address)).toEqual(refused);
    await server.db.update(signInFailures).set({ blockedUntil: sql`now() - interval '1 millisecond'` });
    expect(await signIn.signIn(ada.email, TEST_PASSWORD, address)).toMatchObject({ ok: true });
    expect(counts.checked).toBe(4);
    await server.db.delete(signInFailures);
  });

  it('a check that throws counts as a failure and holds nobody off afterwards', async () => {
    const broken = async (): Promise<boolean> => {
      throw new Error('the check broke');
    };
    const { signIn } = slowChecks(broken);
    await expect(signIn.signIn(ada.email, TEST_PASSWORD, address)).rejects.toThrow('the check broke');
    const { signIn: working } = slowChecks();
    expect(await working.signIn(ada.email, TEST_PASSWORD, address)).toMatchObject({ ok: true });
    // The account keeps the broken attempt as a failure; the address started afresh.
    expect(await server.db.select({ failures: signInFailures.failures, checking: signInFailures.checking }).from(signInFailures)).toEqual([{ failures: 1, checking: 0 }]);
    await server.db.delete(signInFailures);
  });

  it('an attempt never settled (its process died during the check) holds nobody off once its failures are forgotten', async () => {
    const { signIn, pair } = slowChecks();
    for (let i = 0; i < 3; i++) await signIn.signIn(ada.email, 'wrong-password', address);
    // As a process that counted a fourth attempt and died during its check leaves the row.
    await server.db.update(signInFailures).set({ failures: 4, checking: 1, blockedUntil: null }).where(eq(signInFailures.accountKey, pair));
    expect(await signIn.signIn(ada.email, TEST_PASSWORD, address)).toEqual(refused);
    await server.db.update(signInFailures).set({ lastFailureAt: sql`now() - interval '1 hour'` });
    expect(await signIn.signIn(ada.email, TEST_PASSWORD, address)).toMatchObject({ ok: true });
    await server.db.delete(signInFailures);
  });
});
