import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { SignJWT, type JWTHeaderParameters, type JWTPayload } from 'jose';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { MAX_ACCESS_TOKEN_TTL_SECONDS, TokenService } from '../../server/auth/tokens.ts';
import { TEST_JWT, type TestUser, useTestApp } from '../helpers/app.ts';
import { expectProblem } from '../helpers/problems.ts';
import { productInput } from '../helpers/products.ts';

let customer: TestUser;
const t = useTestApp();
beforeAll(async () => {
  customer = await t.createUser('customer');
});

const PROTECTED = '/api/v1/users';
const PUBLIC = '/api/v1/products';
const now = () => Math.floor(Date.now() / 1000);
const secretKey = (secret: string) => new TextEncoder().encode(secret);

interface SignOptions {
  alg?: string;
  secret?: string;
  iss?: string;
  aud?: string;
  /** Seconds since the epoch; `null` leaves the claim out. */
  exp?: number | null;
  /** Seconds since the epoch (default ten seconds ago); `null` leaves the claim out. */
  iat?: number | null;
  /** The header's `typ` (`JWT` by default); `null` leaves it out. */
  typ?: string | number | null;
}

/** A token minted outside the service with jose; by default exactly what the service accepts. */
async function signToken(claims: JWTPayload, options: SignOptions = {}): Promise<string> {
  const typ = options.typ === undefined ? 'JWT' : options.typ;
  // A typ that is no string (never sent by a well-behaved issuer) goes in as the header says it.
  const header: JWTHeaderParameters = { alg: options.alg ?? 'HS256', ...(typ === null ? {} : { typ: typ as string }) };
  let jwt = new SignJWT({ name: 'Outside', ...claims })
    .setProtectedHeader(header)
    .setIssuer(options.iss ?? TEST_JWT.issuer)
    .setAudience(options.aud ?? TEST_JWT.audience)
    .setJti(randomUUID());
  const iat = options.iat === undefined ? now() - 10 : options.iat;
  if (iat !== null) jwt = jwt.setIssuedAt(iat);
  const exp = options.exp === undefined ? now() + 600 : options.exp;
  if (exp !== null) jwt = jwt.setExpirationTime(exp);
  return jwt.sign(secretKey(options.secret ?? TEST_JWT.secret));
}

const adminClaims = (): JWTPayload => ({ sub: String(t.admin.id), role: 'admin' });

/** `alg: none`: header and payload, empty signature. */
function unsignedToken(claims: JWTPayload): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
}

/** A 401 problem with a Bearer challenge (docs/api.md#access-tokens). */
function expectUnauthorized(res: LightMyRequestResponse): void {
  expectProblem(res, 401, 'unauthorized');
  expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/);
}

function expectInvalidToken(res: LightMyRequestResponse): void {
  expectUnauthorized(res);
  expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
}

const getWith = (url: string, authorization: string) => t.request({ method: 'GET', url, headers: { authorization } });

describe('absent credentials on a protected route are 401 with a Bearer challenge', () => {
  it('no Authorization header: 401, WWW-Authenticate starts with Bearer', async () => {
    expectUnauthorized(await t.request({ method: 'GET', url: PROTECTED }));
  });

  it('the problem names the request path and echoes the request id', async () => {
    const res = await t.request({ method: 'GET', url: PROTECTED, headers: { 'x-request-id': 'auth-test-1' } });
    expect(res.json()).toMatchObject({ instance: PROTECTED, request_id: 'auth-test-1' });
    expect(res.headers['x-request-id']).toBe('auth-test-1');
  });

  it('a public route needs no token', async () => {
    const res = await t.request({ method: 'GET', url: PUBLIC });
    expect(res.statusCode).toBe(200);
  });
});

describe('only the Bearer scheme is accepted', () => {
  it('Authorization: Basic ... is 401', async () => {
    const basic = `Basic ${Buffer.from(`${t.admin.email}:correct-horse-battery`).toString('base64')}`;
    expectUnauthorized(await getWith(PROTECTED, basic));
  });

  it('"Bearer" with no token is 401', async () => {
    expectUnauthorized(await getWith(PROTECTED, 'Bearer '));
  });

  it('the scheme name is case-insensitive (RFC 9110): "bearer <token>" works', async () => {
    const res = await getWith(PROTECTED, `bearer ${t.admin.token}`);
    expect(res.statusCode).toBe(200);
  });
});

describe('an invalid access token is 401 with error="invalid_token"', () => {
  it('a garbage token', async () => {
    expectInvalidToken(await getWith(PROTECTED, 'Bearer not-a-jwt'));
  });

  it('a token of three garbage segments', async () => {
    expectInvalidToken(await getWith(PROTECTED, 'Bearer aaaa.bbbb.cccc'));
  });

  it('an expired token (exp in the past)', async () => {
    const token = await signToken(adminClaims(), { exp: now() - 60 });
    expectInvalidToken(await getWith(PROTECTED, `Bearer ${token}`));
  });

  it('a token without exp', async () => {
    const token = await signToken(adminClaims(), { exp: null });
    expectInvalidToken(await getWith(PROTECTED, `Bearer ${token}`));
  });

  it('an unsigned token (alg: none)', async () => {
    const token = unsignedToken({ ...adminClaims(), iss: TEST_JWT.issuer, aud: TEST_JWT.audience, iat: now(), exp: now() + 600 });
    expectInvalidToken(await getWith(PROTECTED, `Bearer ${token}`));
  });

  it('a token signed with another algorithm (HS512) and the right secret', async () => {
    const token = await signToken(adminClaims(), { alg: 'HS512' });
    expectInvalidToken(await getWith(PROTECTED, `Bearer ${token}`));
  });

  it('a token signed with the wrong secret', async () => {
    const token = await signToken(adminClaims(), { secret: 'another-secret-that-is-also-32-bytes-long' });
    expectInvalidToken(await getWith(PROTECTED, `Bearer ${token}`));
  });

  it('a token whose signature was tampered with', async () => {
    const [header, payload] = t.admin.token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...adminClaims(), sub: String(customer.id) })).toString('base64url');
    expect(payload).not.toBe(forged);
    expectInvalidToken(await getWith(PROTECTED, `Bearer ${header}.${forged}.${t.admin.token.split('.')[2]}`));
  });

  it('a token with the wrong issuer', async () => {
    const token = await signToken(adminClaims(), { iss: 'someone-else' });
    expectInvalidToken(await getWith(PROTECTED, `Bearer ${token}`));
  });

  it('a token with the wrong audience', async () => {
    const token = await signToken(adminClaims(), { aud: 'another-api' });
    expectInvalidToken(await getWith(PROTECTED, `Bearer ${token}`));
  });
});

describe('token lifetime is bounded: iat required, not in the future, exp - iat at most 24 hours', () => {
  it('exp in the year 9999 is refused (regression: no maximum lifetime)', async () => {
    const token = await signToken(adminClaims(), { exp: 253402300799 });
    expectInvalidToken(await getWith(PROTECTED, `Bearer ${token}`));
  });

  it('exp - iat one second over 24 hours is refused', async () => {
    const iat = now() - 10;
    const token = await signToken(adminClaims(), { iat, exp: iat + MAX_ACCESS_TOKEN_TTL_SECONDS + 1 });
    expectInvalidToken(await getWith(PROTECTED, `Bearer ${token}`));
  });

  it('exp - iat of exactly 24 hours is accepted', async () => {
    const iat = now() - 10;
    const token = await signToken(adminClaims(), { iat, exp: iat + MAX_ACCESS_TOKEN_TTL_SECONDS });
    expect((await getWith(PROTECTED, `Bearer ${token}`)).statusCode).toBe(200);
  });

  it('a token without iat is refused', async () => {
    const token = await signToken(adminClaims(), { iat: null });
    expectInvalidToken(await getWith(PROTECTED, `Bearer ${token}`));
  });

  it('iat an hour in the future is refused (regression: a future iat was accepted)', async () => {
    const token = await signToken(adminClaims(), { iat: now() + 3600, exp: now() + 3700 });
    expectInvalidToken(await getWith(PROTECTED, `Bearer ${token}`));
  });

  it('iat a few seconds in the future (clock skew under 60 s) is accepted', async () => {
    const token = await signToken(adminClaims(), { iat: now() + 5 });
    expect((await getWith(PROTECTED, `Bearer ${token}`)).statusCode).toBe(200);
  });

  it('the same limits apply on /trpc', async () => {
    const token = await signToken(adminClaims(), { exp: 253402300799 });
    const res = await t.request({ method: 'GET', url: '/trpc/products.list', headers: { authorization: `Bearer ${token}` } });
    expect(res.statusCode).toBe(401);
  });

  it('the service never mints a token it would refuse', async () => {
    const tokens = new TokenService(TEST_JWT);
    await expect(tokens.mint({ sub: '1', role: 'admin' }, MAX_ACCESS_TOKEN_TTL_SECONDS + 1)).rejects.toThrow(RangeError);
  });
});

describe('a user token names its user in one canonical spelling', () => {
  const spellings = (id: number) => [`${id}e0`, ` ${id}`, `${id} `, `0x${id.toString(16)}`, `0${id}`, `+${id}`, `${id}.0`];
  it('another spelling of a real user id is refused (regression: 1e0, " 1", 0x1 were user 1)', async () => {
    for (const sub of spellings(t.admin.id)) {
      const token = await signToken({ sub, role: 'admin' });
      expectInvalidToken(await getWith(PROTECTED, `Bearer ${token}`));
    }
  });

  it.each(['0', '-1', '2147483648', '99999999999', 'abc'])('sub %j is not a user id', async (sub) => {
    const token = await signToken({ sub, role: 'customer' });
    expectInvalidToken(await getWith(PUBLIC, `Bearer ${token}`));
  });

  it('sub "2147483647" (the largest id) is a well-formed subject', async () => {
    const token = await signToken({ sub: '2147483647', role: 'customer' });
    // Well-formed, so it authenticates; that user does not exist, so it reads nothing.
    expect((await getWith('/api/v1/users/2147483647', `Bearer ${token}`)).statusCode).not.toBe(401);
  });
});

describe('the signing secret is at least 32 bytes', () => {
  it('TokenService refuses a 31-byte secret', () => {
    expect(() => new TokenService({ ...TEST_JWT, secret: 's'.repeat(31) })).toThrow(/32 bytes/);
  });

  it('TokenService refuses a 1-character secret (regression: a 1-character development secret was accepted)', () => {
    expect(() => new TokenService({ ...TEST_JWT, secret: 'x' })).toThrow(/32 bytes/);
  });

  it('TokenService accepts 32 bytes', () => {
    expect(() => new TokenService({ ...TEST_JWT, secret: 's'.repeat(32) })).not.toThrow();
  });
});

describe('tokens minted elsewhere with the same secret, issuer and audience are accepted', () => {
  it('an admin token signed by jose outside the service lists users', async () => {
    const token = await signToken(adminClaims());
    const res = await getWith(PROTECTED, `Bearer ${token}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ page: 1 });
  });

  it('a customer token signed outside the service reads that customer', async () => {
    const token = await signToken({ sub: String(customer.id), role: 'customer' });
    const res = await getWith(`/api/v1/users/${customer.id}`, `Bearer ${token}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: customer.id });
  });
});

describe('our own tokens too must say they are access tokens when they carry a typ (RFC 8725 section 3.11), like the external server\'s', () => {
  it.each(['JWT', 'at+jwt', 'application/at+jwt', 'application/jwt', 'AT+JWT', null])('typ %s is an access token: accepted', async (typ) => {
    const token = await signToken(adminClaims(), { typ });
    expect((await getWith(PROTECTED, `Bearer ${token}`)).statusCode).toBe(200);
  });

  it.each(['id_token+jwt', 'logout+jwt', 'dpop+jwt', 'JOSE', 'secevent+jwt', 42])(
    'typ %s is not an access token: 401 invalid_token with our signature, every time, on REST and /trpc (regression: accepted)',
    async (typ) => {
      const token = await signToken(adminClaims(), { typ });
      for (let i = 0; i < 2; i++) {
        const res = await getWith(PROTECTED, `Bearer ${token}`);
        expectInvalidToken(res);
        expect(res.headers['www-authenticate']).toContain('not an access token');
        expect((await getWith('/trpc/users.list', `Bearer ${token}`)).headers['www-authenticate']).toContain('error="invalid_token"');
      }
    },
  );

  it('the tokens the service mints say typ JWT', async () => {
    const [header = ''] = t.admin.token.split('.');
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
  });
});

describe('a token verified once is not trusted beyond what verifying it again would allow', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a token accepted a moment ago is refused once it expires (exp <= now), on REST and /trpc', async () => {
    const exp = now() + 30;
    const [rest, trpc] = [await signToken(adminClaims(), { exp }), await signToken(adminClaims(), { exp })];
    for (let i = 0; i < 2; i++) {
      expect((await getWith(PROTECTED, `Bearer ${rest}`)).statusCode).toBe(200);
      expect((await getWith('/trpc/users.list', `Bearer ${trpc}`)).statusCode).toBe(200);
    }

    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime((exp - 1) * 1000);
    expect((await getWith(PROTECTED, `Bearer ${rest}`)).statusCode).toBe(200);
    expect((await getWith('/trpc/users.list', `Bearer ${trpc}`)).statusCode).toBe(200);
    vi.setSystemTime(exp * 1000);
    const refused = await getWith(PROTECTED, `Bearer ${rest}`);
    expectInvalidToken(refused);
    expect(refused.json().detail).toBe('The access token has expired.');
    const refusedOnTrpc = await getWith('/trpc/users.list', `Bearer ${trpc}`);
    expect(refusedOnTrpc.statusCode).toBe(401);
    expect(refusedOnTrpc.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('a token accepted a moment ago is refused when the clock is set back before its iat (less the 60 s skew)', async () => {
    const token = await signToken(adminClaims(), { iat: now() - 10 });
    expect((await getWith(PROTECTED, `Bearer ${token}`)).statusCode).toBe(200);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() - 120_000);
    const refused = await getWith(PROTECTED, `Bearer ${token}`);
    expectInvalidToken(refused);
    expect(refused.json().detail).toBe('The access token claim "iat" lies in the future.');
  });

  it('a token refused after its signature checked out (lifetime, subject) is refused again, every time', async () => {
    const tooLong = await signToken(adminClaims(), { iat: now() - 10, exp: now() - 10 + MAX_ACCESS_TOKEN_TTL_SECONDS + 1 });
    const badSubject = await signToken({ sub: '01', role: 'admin' });
    for (let i = 0; i < 2; i++) {
      expectInvalidToken(await getWith(PROTECTED, `Bearer ${tooLong}`));
      expectInvalidToken(await getWith(PROTECTED, `Bearer ${badSubject}`));
    }
  });

  it('the accepted token with one character of its signature changed is refused', async () => {
    const token = await signToken(adminClaims());
    expect((await getWith(PROTECTED, `Bearer ${token}`)).statusCode).toBe(200);
    const [header, payload, signature = ''] = token.split('.');
    // The first character: the last one of a base64url signature may carry only padding bits.
    const forged = `${header}.${payload}.${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
    expectInvalidToken(await getWith(PROTECTED, `Bearer ${forged}`));
    expect((await getWith(PROTECTED, `Bearer ${token}`)).statusCode).toBe(200);
  });

  it('a customer token remembered for one request still names only its own customer', async () => {
    const token = await signToken({ sub: String(customer.id), role: 'customer' });
    for (let i = 0; i < 2; i++) {
      expect((await getWith(`/api/v1/users/${customer.id}`, `Bearer ${token}`)).statusCode).toBe(200);
      expectProblem(await getWith(`/api/v1/users/${t.admin.id}`, `Bearer ${token}`), 404, 'not-found');
    }
  });
});

describe('an invalid token is 401 on a public route too', () => {
  it('garbage token on GET /products', async () => {
    expectInvalidToken(await getWith(PUBLIC, 'Bearer not-a-jwt'));
  });

  it('expired token on GET /products', async () => {
    const token = await signToken(adminClaims(), { exp: now() - 60 });
    expectInvalidToken(await getWith(PUBLIC, `Bearer ${token}`));
  });

  it('Basic credentials on GET /products', async () => {
    expectUnauthorized(await getWith(PUBLIC, 'Basic dXNlcjpwYXNz'));
  });

  it('a valid token on GET /products is fine', async () => {
    const res = await getWith(PUBLIC, `Bearer ${customer.token}`);
    expect(res.statusCode).toBe(200);
  });
});

describe('a known caller without the right is 403', () => {
  it('a customer may not create a product', async () => {
    const res = await t.request({ method: 'POST', url: PUBLIC, payload: productInput(), token: customer.token });
    expect(res.statusCode).toBe(403);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ type: '/problems/forbidden', status: 403 });
  });

  it('a service client without products:write may not create a product', async () => {
    const token = await t.serviceToken(['orders:read']);
    const res = await t.request({ method: 'POST', url: PUBLIC, payload: productInput(), token });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ type: '/problems/insufficient-scope', scope: 'products:write' });
  });

  it('a service client with products:write may create a product', async () => {
    const token = await t.serviceToken(['products:write']);
    const res = await t.request({ method: 'POST', url: PUBLIC, payload: productInput(), token });
    expect(res.statusCode).toBe(201);
  });

  it('an admin may create a product', async () => {
    const res = await t.request({ method: 'POST', url: PUBLIC, payload: productInput(), token: t.admin.token });
    expect(res.statusCode).toBe(201);
  });
});

describe('the tRPC endpoint applies the same authentication', () => {
  it('no token on a protected procedure is UNAUTHORIZED with the unauthorized problem', async () => {
    const res = await t.request({ method: 'GET', url: '/trpc/users.list' });
    expect(res.statusCode).toBe(401);
    const body = res.json() as { error: { data: { problem: { type: string } } } };
    expect(body.error.data.problem.type).toBe('/problems/unauthorized');
  });

  it('an invalid token is 401 on tRPC too', async () => {
    const token = await signToken(adminClaims(), { exp: now() - 60 });
    const res = await t.request({ method: 'GET', url: '/trpc/products.list', headers: { authorization: `Bearer ${token}` } });
    expect(res.statusCode).toBe(401);
  });

  it('a valid token calls a protected procedure', async () => {
    const res = await t.request({ method: 'GET', url: `/trpc/users.list?input=${encodeURIComponent('{}')}`, token: t.admin.token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ result: { data: { page: 1 } } });
  });
});
