/**
 * External identity providers (issue 10 item 7, docs/api.md#external-identity-providers): with JWT_JWKS_URL the service
 * also accepts RS256/ES256/EdDSA tokens signed by keys of that JWKS, with its issuer and audience;
 * our HS256 tokens keep working. The JWKS is served by the test itself (node:http on port 0).
 */
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { LightMyRequestResponse } from 'fastify';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { JwksSettings } from '../../server/auth/jwks.ts';
import { TokenService } from '../../server/auth/tokens.ts';
import { DomainError } from '../../server/errors/problems.ts';
import { TEST_JWT, type TestUser, useTestApp } from '../helpers/app.ts';
import { expectProblem } from '../helpers/problems.ts';

const ISSUER = 'https://idp.example.test/';
const AUDIENCE = 'order-service-at-idp';

type Alg = 'RS256' | 'ES256' | 'EdDSA';
interface SigningKey {
  alg: Alg;
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  /** As the JWKS publishes it. */
  jwk: JWK;
}

async function signingKey(alg: Alg, kid: string): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  return { alg, kid, privateKey, publicKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

type Mode = 'ok' | 'error' | 'reset' | 'hang' | 'not-json' | 'not-a-jwks';

/** A JWKS endpoint the test controls: which keys it serves, how it fails, how often it was asked. */
interface KeyServer {
  url: string;
  keys: JWK[];
  mode: Mode;
  fetches: number;
  close(): Promise<void>;
}

async function startKeyServer(keys: JWK[] = []): Promise<KeyServer> {
  const hanging = new Set<ServerResponse>();
  const state = { keys, mode: 'ok' as Mode, fetches: 0 };
  const server: Server = createServer((request, response) => {
    state.fetches += 1;
    if (state.mode === 'ok') response.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end(JSON.stringify({ keys: state.keys }));
    else if (state.mode === 'error') response.writeHead(500).end();
    else if (state.mode === 'not-json') response.writeHead(200, { 'content-type': 'application/json' }).end('<html>');
    else if (state.mode === 'not-a-jwks') response.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":"none"}');
    else if (state.mode === 'reset') request.socket.destroy();
    else hanging.add(response);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return Object.assign(state, {
    url: `http://127.0.0.1:${address.port}/.well-known/jwks.json`,
    close: async () => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

const now = () => Math.floor(Date.now() / 1000);

interface TokenOptions {
  iss?: string;
  aud?: string;
  /** Seconds since the epoch. */
  exp?: number;
  iat?: number;
  /** `null`: no `kid` in the header. */
  kid?: string | null;
  /** The header's `typ` (`JWT` by default); `null`: none. */
  typ?: string | null;
}

/** A token of the external server signed with `key`; by default an admin's, exactly what is accepted. */
function externalToken(key: SigningKey, claims: JWTPayload, options: TokenOptions = {}): Promise<string> {
  const kid = options.kid === undefined ? key.kid : options.kid;
  const typ = options.typ === undefined ? 'JWT' : options.typ;
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: key.alg, ...(typ === null ? {} : { typ }), ...(kid === null ? {} : { kid }) })
    .setIssuer(options.iss ?? ISSUER)
    .setAudience(options.aud ?? AUDIENCE)
    .setIssuedAt(options.iat ?? now() - 10)
    .setExpirationTime(options.exp ?? now() + 600)
    .sign(key.privateKey);
}

const settings = (server: KeyServer, overrides: Partial<JwksSettings> = {}): JwksSettings => ({ url: server.url, issuer: ISSUER, audience: AUDIENCE, ...overrides });

/** The error `authenticate` rejects with (a DomainError), or undefined when it accepted. */
async function refusalOf(service: TokenService, token: string): Promise<DomainError | undefined> {
  try {
    await service.authenticate(`Bearer ${token}`);
    return undefined;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
}

function expectInvalidToken(res: LightMyRequestResponse): void {
  expectProblem(res, 401, 'unauthorized');
  expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
}

let keyServer: KeyServer;
let keys: Record<Alg, SigningKey>;
let customer: TestUser;
const admin = (): JWTPayload => ({ sub: String(t.admin.id), role: 'admin' });

beforeAll(async () => {
  keys = { RS256: await signingKey('RS256', 'rsa-1'), ES256: await signingKey('ES256', 'ec-1'), EdDSA: await signingKey('EdDSA', 'ed-1') };
  keyServer = await startKeyServer(Object.values(keys).map((key) => key.jwk));
});
// Built after the key server above has started: it is given that server's address.
const t = useTestApp(() => ({ jwks: settings(keyServer) }));
beforeAll(async () => {
  customer = await t.createUser('customer');
});
afterAll(async () => {
  await keyServer?.close();
});
afterEach(() => {
  vi.useRealTimers();
});

const USERS = '/api/v1/users';

describe('tokens of the external authorization server are accepted (RS256, ES256, EdDSA)', () => {
  it.each(['RS256', 'ES256', 'EdDSA'] as const)('an admin token signed with %s lists users on REST and /trpc', async (alg) => {
    const token = await externalToken(keys[alg], admin());
    expect((await t.request({ method: 'GET', url: USERS, token })).statusCode).toBe(200);
    const trpc = await t.request({ method: 'GET', url: `/trpc/users.list?input=${encodeURIComponent('{}')}`, token });
    expect(trpc.statusCode).toBe(200);
  });

  it('the key set is fetched once and then served from the cache', async () => {
    for (const alg of ['RS256', 'ES256', 'EdDSA'] as const) {
      expect((await t.request({ method: 'GET', url: USERS, token: await externalToken(keys[alg], admin()) })).statusCode).toBe(200);
    }
    expect(keyServer.fetches).toBe(1);
  });

  it('our own HS256 tokens keep working beside them', async () => {
    expect((await t.request({ method: 'GET', url: USERS, token: t.admin.token })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: `${USERS}/${customer.id}`, token: customer.token })).statusCode).toBe(200);
  });

  it('a token without kid is verified by the one key of its type', async () => {
    const token = await externalToken(keys.ES256, admin(), { kid: null });
    expect((await t.request({ method: 'GET', url: USERS, token })).statusCode).toBe(200);
  });

  it('the same claim rules apply: a customer reads only themself, a scope claim limits, role and sub are required', async () => {
    const own = await externalToken(keys.RS256, { sub: String(customer.id), role: 'customer' });
    expect((await t.request({ method: 'GET', url: `${USERS}/${customer.id}`, token: own })).statusCode).toBe(200);
    expectProblem(await t.request({ method: 'GET', url: USERS, token: own }), 403, 'forbidden');
    const limited = await externalToken(keys.RS256, { sub: String(customer.id), role: 'customer', scope: 'orders:read' });
    expect(expectProblem(await t.request({ method: 'GET', url: `${USERS}/${customer.id}`, token: limited }), 403, 'insufficient-scope').scope).toBe('users:read');
    expectInvalidToken(await t.request({ method: 'GET', url: USERS, token: await externalToken(keys.RS256, { sub: String(t.admin.id) }) }));
    expectInvalidToken(await t.request({ method: 'GET', url: USERS, token: await externalToken(keys.RS256, { sub: 'alice', role: 'customer' }) }));
    // Lifetime bounded as for our own tokens: exp - iat at most 24 hours.
    const long = await externalToken(keys.RS256, admin(), { iat: now() - 10, exp: now() + 48 * 3600 });
    expectInvalidToken(await t.request({ method: 'GET', url: USERS, token: long }));
  });
});

describe('what identity providers differ in: the typ header and the scp claim (RFC 9068)', () => {
  const ownUser = () => `${USERS}/${customer.id}`;
  const customerClaims = (extra: JWTPayload = {}): JWTPayload => ({ sub: String(customer.id), role: 'customer', ...extra });

  it.each(['JWT', 'at+jwt', 'application/at+jwt', 'AT+JWT', null])('typ %s is an access token: accepted', async (typ) => {
    const token = await externalToken(keys.RS256, customerClaims(), { typ });
    expect((await t.request({ method: 'GET', url: ownUser(), token })).statusCode).toBe(200);
  });

  it.each(['id_token+jwt', 'logout+jwt', 'dpop+jwt', 'JOSE', 'secevent+jwt'])('typ %s is not an access token: 401 invalid_token, whatever the signature', async (typ) => {
    const token = await externalToken(keys.ES256, customerClaims(), { typ });
    const res = await t.request({ method: 'GET', url: ownUser(), token });
    expectInvalidToken(res);
    expect(res.headers['www-authenticate']).toContain('not an access token');
  });

  it('scp as an array limits like scope: without users:read the own user is 403 insufficient-scope; with it, 200', async () => {
    const without = await externalToken(keys.RS256, customerClaims({ scp: ['orders:read', 'orders:write'] }));
    expect(expectProblem(await t.request({ method: 'GET', url: ownUser(), token: without }), 403, 'insufficient-scope').scope).toBe('users:read');
    const withIt = await externalToken(keys.RS256, customerClaims({ scp: ['orders:read', 'users:read'] }));
    expect((await t.request({ method: 'GET', url: ownUser(), token: withIt })).statusCode).toBe(200);
  });

  it('scp as a space-separated string too; an empty scp grants nothing', async () => {
    const spaced = await externalToken(keys.EdDSA, customerClaims({ scp: 'orders:read users:read' }));
    expect((await t.request({ method: 'GET', url: ownUser(), token: spaced })).statusCode).toBe(200);
    const empty = await externalToken(keys.EdDSA, customerClaims({ scp: [] }));
    expectProblem(await t.request({ method: 'GET', url: ownUser(), token: empty }), 403, 'insufficient-scope');
  });

  it('scope wins over scp when both are present', async () => {
    const token = await externalToken(keys.RS256, customerClaims({ scope: 'orders:read', scp: ['users:read'] }));
    expectProblem(await t.request({ method: 'GET', url: ownUser(), token }), 403, 'insufficient-scope');
  });

  it('a malformed scp (not strings) is 401, never read as "no claim" (which would grant the whole role)', async () => {
    for (const scp of [42, { users: 'read' }, [1, 2], ['users:read orders:read']]) {
      const token = await externalToken(keys.RS256, customerClaims({ scp }));
      const res = await t.request({ method: 'GET', url: ownUser(), token });
      expectInvalidToken(res);
      expect(res.headers['www-authenticate']).toContain('scp');
    }
  });
});

describe('an external token that cannot be trusted is 401 invalid_token', () => {
  it('another issuer', async () => {
    expectInvalidToken(await t.request({ method: 'GET', url: USERS, token: await externalToken(keys.RS256, admin(), { iss: TEST_JWT.issuer }) }));
  });

  it('another audience (ours is not the external server\'s)', async () => {
    expectInvalidToken(await t.request({ method: 'GET', url: USERS, token: await externalToken(keys.ES256, admin(), { aud: TEST_JWT.audience }) }));
  });

  it('expired', async () => {
    const token = await externalToken(keys.EdDSA, admin(), { iat: now() - 3600, exp: now() - 60 });
    const res = await t.request({ method: 'GET', url: USERS, token });
    expectInvalidToken(res);
    expect(res.headers['www-authenticate']).toContain('expired');
  });

  it('an unknown kid (refused without asking the server again within its cooldown)', async () => {
    const stranger = await signingKey('RS256', 'not-published');
    const before = keyServer.fetches;
    expectInvalidToken(await t.request({ method: 'GET', url: USERS, token: await externalToken(stranger, admin()) }));
    expectInvalidToken(await t.request({ method: 'GET', url: USERS, token: await externalToken(stranger, admin()) }));
    expect(keyServer.fetches - before).toBeLessThanOrEqual(1);
  });

  it('a published kid on a token signed by another key (bad signature)', async () => {
    const forger = await signingKey('RS256', keys.RS256.kid);
    expectInvalidToken(await t.request({ method: 'GET', url: USERS, token: await externalToken(forger, admin()) }));
  });

  it('alg none', async () => {
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const token = `${part({ alg: 'none', typ: 'JWT', kid: keys.RS256.kid })}.${part({ ...admin(), iss: ISSUER, aud: AUDIENCE, iat: now(), exp: now() + 600 })}.`;
    expectInvalidToken(await t.request({ method: 'GET', url: USERS, token }));
  });

  it('HS256 signed with the published RSA public key as the secret (algorithm confusion)', async () => {
    const publicPem = new TextEncoder().encode(await exportSPKI(keys.RS256.publicKey));
    for (const iss of [ISSUER, TEST_JWT.issuer]) {
      const aud = iss === ISSUER ? AUDIENCE : TEST_JWT.audience;
      const token = await new SignJWT(admin())
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: keys.RS256.kid })
        .setIssuer(iss)
        .setAudience(aud)
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(publicPem);
      expectInvalidToken(await t.request({ method: 'GET', url: USERS, token }));
    }
  });

  it('another asymmetric algorithm (RS384), naming a published kid', async () => {
    const { privateKey } = await generateKeyPair('RS384');
    const token = await new SignJWT(admin())
      .setProtectedHeader({ alg: 'RS384', kid: keys.RS256.kid })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey);
    expectInvalidToken(await t.request({ method: 'GET', url: USERS, token }));
  });

  it('without JWT_JWKS_URL an RS256 token is refused like any other algorithm', async () => {
    const error = await refusalOf(new TokenService(TEST_JWT), await externalToken(keys.RS256, admin()));
    expect(error?.slug).toBe('unauthorized');
    expect(error?.headers['www-authenticate']).toContain('error="invalid_token"');
  });
});

describe('key rotation: a new kid makes the service fetch the set again', () => {
  it('after the cooldown, a token with a newly published key is accepted; one whose key was withdrawn is not', async () => {
    const old = await signingKey('ES256', 'rotating-1');
    const server = await startKeyServer([old.jwk]);
    try {
      const service = new TokenService({ ...TEST_JWT, jwks: settings(server) });
      const accepted = await externalToken(old, admin());
      expect(await refusalOf(service, accepted)).toBeUndefined();
      expect(server.fetches).toBe(1);

      const fresh = await signingKey('ES256', 'rotating-2');
      server.keys = [fresh.jwk];
      // Within the 30-second cooldown after a fetch, an unknown kid is refused without a new fetch.
      expect((await refusalOf(service, await externalToken(fresh, admin())))?.slug).toBe('unauthorized');
      expect(server.fetches).toBe(1);

      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.now() + 31_000);
      expect(await refusalOf(service, await externalToken(fresh, admin()))).toBeUndefined();
      expect(server.fetches).toBe(2);
      // The old key is gone from the set now held: a token it signs is refused, and so is the one
      // accepted before (an external token is verified every time, never remembered).
      expect((await refusalOf(service, await externalToken(old, admin())))?.slug).toBe('unauthorized');
      expect((await refusalOf(service, accepted))?.slug).toBe('unauthorized');
    } finally {
      await server.close();
    }
  });

  it('a set holding several keys of one type verifies a token without kid with the right one', async () => {
    const first = await signingKey('RS256', 'multi-1');
    const second = await signingKey('RS256', 'multi-2');
    const server = await startKeyServer([first.jwk, second.jwk]);
    try {
      const service = new TokenService({ ...TEST_JWT, jwks: settings(server) });
      expect(await refusalOf(service, await externalToken(second, admin(), { kid: null }))).toBeUndefined();
      const stranger = await signingKey('RS256', 'multi-3');
      expect((await refusalOf(service, await externalToken(stranger, admin(), { kid: null })))?.slug).toBe('unauthorized');
    } finally {
      await server.close();
    }
  });
});

describe('a key set that cannot be fetched is 503 service-unavailable with Retry-After (the outage is not the caller\'s fault)', () => {
  it.each<[Mode, Partial<JwksSettings>]>([
    ['error', {}],
    ['reset', {}],
    ['not-json', {}],
    ['not-a-jwks', {}],
    ['hang', { timeoutMs: 200 }],
  ])('JWKS answering %s', async (mode, overrides) => {
    const server = await startKeyServer([keys.RS256.jwk]);
    server.mode = mode;
    try {
      const error = await refusalOf(new TokenService({ ...TEST_JWT, jwks: settings(server, overrides) }), await externalToken(keys.RS256, admin()));
      expect(error?.slug).toBe('service-unavailable');
      expect(error?.headers['retry-after']).toBe('5');
      expect(server.fetches).toBe(1);
    } finally {
      await server.close();
    }
  });

  describe('over HTTP', () => {
    let down: KeyServer;
    beforeAll(async () => {
      down = await startKeyServer([keys.RS256.jwk]);
      down.mode = 'error';
    });
    const app = useTestApp(() => ({ jwks: settings(down) }));
    afterAll(async () => {
      await down?.close();
    });

    it('REST and /trpc answer 503 with Retry-After, and the problem tells nothing internal', async () => {
      const token = await externalToken(keys.RS256, { sub: String(app.admin.id), role: 'admin' });
      const rest = await app.request({ method: 'GET', url: USERS, token });
      const problem = expectProblem(rest, 503, 'service-unavailable');
      expect(rest.headers['retry-after']).toBe('5');
      expect(problem.detail).not.toContain('127.0.0.1');
      const trpc = await app.request({ method: 'GET', url: `/trpc/users.list?input=${encodeURIComponent('{}')}`, token });
      expect(trpc.statusCode).toBe(503);
      expect(trpc.headers['retry-after']).toBe('5');
    });

    it('our own HS256 tokens are unaffected by the outage', async () => {
      expect((await app.request({ method: 'GET', url: USERS, token: app.admin.token })).statusCode).toBe(200);
    });

    it('within Retry-After the service does not ask again; afterwards it does and, the server back, accepts', async () => {
      const token = await externalToken(keys.RS256, { sub: String(app.admin.id), role: 'admin' });
      expectProblem(await app.request({ method: 'GET', url: USERS, token }), 503, 'service-unavailable');
      const before = down.fetches;
      expectProblem(await app.request({ method: 'GET', url: USERS, token }), 503, 'service-unavailable');
      expect(down.fetches).toBe(before);

      down.mode = 'ok';
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.now() + 6_000);
      const later = await externalToken(keys.RS256, { sub: String(app.admin.id), role: 'admin' });
      expect((await app.request({ method: 'GET', url: USERS, token: later })).statusCode).toBe(200);
      expect(down.fetches).toBe(before + 1);
    });
  });
});
