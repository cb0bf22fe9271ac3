import { randomUUID, webcrypto } from 'node:crypto';
import { decodeProtectedHeader, errors as joseErrors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { z } from 'zod';
import { DomainError } from '../errors/problems.ts';
import { EXTERNAL_ALGORITHMS, ExternalIssuer, KeySetUnavailable, type JwksSettings } from './jwks.ts';
import { VerifiedTokens, type Validity } from './verified-tokens.ts';

export type Role = 'customer' | 'admin' | 'service';

interface CallerClaims {
  /** The token's `sub`: the user id as a string, or the client id. */
  sub: string;
  name: string | undefined;
  /**
   * The token's `exp` (seconds since the epoch): a live stream ends then (docs/api.md#live-updates).
   * Absent for a caller made without a token (createCaller in tests and scripts).
   */
  expiresAt?: number;
  /**
   * The token's `sid`: the refresh-token family of the sign-in that earned it (server/oauth), so a
   * live stream ends when that family is revoked. Absent from tokens minted without a sign-in.
   */
  family?: string;
}

/** A person signed in: acts on their own resources (customer) or on all (admin). */
export interface UserCaller extends CallerClaims {
  role: 'customer' | 'admin';
  userId: number;
  /**
   * The scopes the token's `scope` claim grants, or `'all'` when it has no such claim (a token
   * minted by another system with the shared secret, the development banner's): the role alone
   * then bounds what the person may do. An empty claim grants nothing.
   */
  scopes: ReadonlySet<string> | 'all';
}

/** An OAuth client acting for itself (client credentials): acts by scope, never as a user. */
export interface ServiceCaller extends CallerClaims {
  role: 'service';
  clientId: string;
  /** The scopes the token's `scope` claim grants; none without a claim (a service acts by scope alone). */
  scopes: ReadonlySet<string>;
}

/** The verified caller of a request, taken from the access token alone (no lookup); `role` tells which. */
export type Caller = UserCaller | ServiceCaller;

export interface TokenSettings {
  secret: string;
  issuer: string;
  audience: string;
  accessTokenTtlSeconds: number;
  /** An external authorization server whose RS256/ES256/EdDSA tokens are accepted too (server/auth/jwks.ts). */
  jwks?: JwksSettings | undefined;
}

/**
 * The longest an access token may live (`exp - iat`), and the cap of ACCESS_TOKEN_TTL_SECONDS.
 * A token minted elsewhere with the same secret cannot outlive what this service would issue.
 */
export const MAX_ACCESS_TOKEN_TTL_SECONDS = 24 * 3600;
/** How far in the future `iat` may lie: clocks of the minting and verifying hosts may differ a little. */
export const CLOCK_SKEW_SECONDS = 60;
/** HS256 keys shorter than the hash output (32 bytes) weaken the signature (RFC 7518 section 3.2). */
export const MIN_SECRET_BYTES = 32;
/** The largest user id (PostgreSQL integer). */
const MAX_USER_ID = 2_147_483_647;
/** A user id as exactly one string spells it: no sign, space, exponent, hex or leading zero. */
const CANONICAL_USER_ID = /^[1-9][0-9]{0,9}$/;

const ClaimsSchema = z.object({
  sub: z.string().min(1),
  role: z.enum(['customer', 'admin', 'service']),
  name: z.string().optional(),
  scope: z.string().optional(),
  // The sign-in's refresh-token family (OpenID Connect's session id claim); any other shape is ignored.
  sid: z.string().min(1).max(200).optional().catch(undefined),
  exp: z.number(),
});

/**
 * The `typ` header values of an access token (RFC 7519 section 5.1, RFC 9068 section 2.1),
 * lower-cased. A token whose header names another type (an ID token, a logout token, a DPoP
 * proof...) is no access token, and is refused whoever signed it (RFC 8725 section 3.11): ours
 * say `JWT`, and tokens minted elsewhere with our secret may say `at+jwt` or nothing.
 */
const ACCESS_TOKEN_TYPES = new Set(['jwt', 'application/jwt', 'at+jwt', 'application/at+jwt']);

const isAccessTokenType = (typ: unknown): boolean => typ === undefined || (typeof typ === 'string' && ACCESS_TOKEN_TYPES.has(typ.toLowerCase()));

/** Claims every accepted token carries, ours or the external server's. */
const REQUIRED_CLAIMS = ['exp', 'iat', 'sub'];

/**
 * How many verified tokens of our own secret a process remembers (server/auth/verified-tokens.ts):
 * about 1 KB each, so a few MB at most.
 */
export const VERIFIED_TOKENS_KEPT = 4096;

export class TokenService {
  private readonly key: Uint8Array;
  /**
   * The secret as a WebCrypto key, imported once: given the bytes, jose imports a key on every
   * sign and verify (about 50 us of CPU per authenticated request, measured).
   */
  private readonly cryptoKey: Promise<webcrypto.CryptoKey>;
  private readonly external: ExternalIssuer | undefined;
  /**
   * Tokens signed with our secret, already verified. Not those of the external server: its key
   * set may drop a key before the tokens it signed expire, and only a new verification sees that.
   */
  private readonly verified = new VerifiedTokens<Caller>(VERIFIED_TOKENS_KEPT);

  constructor(private readonly settings: TokenSettings) {
    this.key = new TextEncoder().encode(settings.secret);
    this.external = settings.jwks ? new ExternalIssuer(settings.jwks, REQUIRED_CLAIMS) : undefined;
    if (this.key.byteLength < MIN_SECRET_BYTES) {
      throw new Error(`The JWT signing secret must be at least ${MIN_SECRET_BYTES} bytes (it has ${this.key.byteLength}).`);
    }
    if (settings.accessTokenTtlSeconds > MAX_ACCESS_TOKEN_TTL_SECONDS) {
      throw new Error(`The access token lifetime must be at most ${MAX_ACCESS_TOKEN_TTL_SECONDS} seconds.`);
    }
    this.cryptoKey = webcrypto.subtle.importKey('raw', this.key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    // Handled here so a failed import is no unhandled rejection; `ready()` (awaited by buildApp)
    // and every sign and verify still see it.
    this.cryptoKey.catch(() => undefined);
  }

  /** Resolves once the signing key is usable; rejects, at start, if it cannot be. */
  async ready(): Promise<void> {
    await this.cryptoKey;
  }

  async mint(subject: { sub: string; role: Role; name?: string; scope?: string; sid?: string }, ttlSeconds?: number): Promise<string> {
    const ttl = ttlSeconds ?? this.settings.accessTokenTtlSeconds;
    // Never mint what authenticate() would refuse.
    if (!(Number.isInteger(ttl) && ttl > 0 && ttl <= MAX_ACCESS_TOKEN_TTL_SECONDS)) {
      throw new RangeError(`A token lifetime must be 1-${MAX_ACCESS_TOKEN_TTL_SECONDS} seconds.`);
    }
    return new SignJWT({ role: subject.role, name: subject.name, scope: subject.scope, sid: subject.sid })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(subject.sub)
      .setIssuer(this.settings.issuer)
      .setAudience(this.settings.audience)
      .setIssuedAt()
      .setJti(randomUUID())
      .setExpirationTime(`${ttl}s`)
      .sign(await this.cryptoKey);
  }

  /** Verifies an `Authorization` header value. Undefined header -> anonymous (null). */
  async authenticate(header: string | undefined): Promise<Caller | null> {
    if (header === undefined) return null;
    const match = /^Bearer +([A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]*)\s*$/i.exec(header);
    const token = match?.[1];
    if (!token) throw invalidToken('The Authorization header must be "Bearer <access token>".');
    const known = this.verified.get(token, epochSeconds());
    if (known) return known;
    const { payload, ours } = await this.verify(token);
    // The same rules for every token, whoever signed it.
    const validity = checkLifetime(payload);
    const caller = callerOf(payload);
    if (ours) this.verified.set(token, caller, validity);
    return caller;
  }

  /**
   * Checks the header's `typ` (an access token's, or none), then the signature, `iss`, `aud` and
   * presence of `exp`/`iat`/`sub`, by the header's `alg`:
   * HS256 with our secret, our issuer and audience; RS256/ES256/EdDSA with the external server's
   * keys, issuer and audience (when JWT_JWKS_URL is set); any other algorithm is refused. Each
   * path pins its own algorithms, so an HS256 token signed with a public key (algorithm confusion)
   * is checked against our secret and fails.
   */
  private async verify(token: string): Promise<{ payload: JWTPayload; ours: boolean }> {
    let alg: unknown;
    let typ: unknown;
    try {
      ({ alg, typ } = decodeProtectedHeader(token));
    } catch {
      throw invalidToken('The access token is malformed or invalid.');
    }
    if (!isAccessTokenType(typ)) throw invalidToken('The token type (typ) is not an access token: JWT or at+jwt expected.');
    try {
      if (alg === 'HS256') {
        const options = { algorithms: ['HS256'], issuer: this.settings.issuer, audience: this.settings.audience, requiredClaims: REQUIRED_CLAIMS };
        return { payload: (await jwtVerify(token, await this.cryptoKey, options)).payload, ours: true };
      }
      if (this.external && typeof alg === 'string' && EXTERNAL_ALGORITHMS.includes(alg)) {
        return { payload: await this.external.verify(token), ours: false };
      }
    } catch (error) {
      if (error instanceof KeySetUnavailable) throw keySetUnavailable(error);
      throw invalidToken(describeJoseError(error));
    }
    throw invalidToken('The access token is signed with an algorithm this service does not accept.');
  }
}

/** Now in whole seconds since the epoch, as jose compares `exp` and `nbf`. */
const epochSeconds = (): number => Math.floor(Date.now() / 1000);

/**
 * `iat` is required, may lie at most CLOCK_SKEW_SECONDS in the future, and `exp - iat` at most
 * MAX_ACCESS_TOKEN_TTL_SECONDS. By hand rather than with jose's `clockTolerance`, which would
 * also accept an `exp` that has already passed. Returns the seconds in which the token's time
 * claims are acceptable: from `iat - CLOCK_SKEW_SECONDS` (and `nbf`, which jose checked) until `exp`.
 */
function checkLifetime(payload: { iat?: number; exp?: number; nbf?: number }): Validity {
  const { iat, exp, nbf } = payload;
  if (iat === undefined || exp === undefined) throw invalidToken('The access token needs iat and exp claims.');
  if (iat > epochSeconds() + CLOCK_SKEW_SECONDS) throw invalidToken('The access token claim "iat" lies in the future.');
  if (exp - iat > MAX_ACCESS_TOKEN_TTL_SECONDS) {
    throw invalidToken(`The access token lives longer than ${MAX_ACCESS_TOKEN_TTL_SECONDS} seconds (exp - iat).`);
  }
  return { from: Math.max(iat - CLOCK_SKEW_SECONDS, nbf ?? -Infinity), until: exp };
}

/** A Set that cannot change once made (every change throws): a remembered token's scopes are shared by its requests. */
export class FixedSet<T> extends Set<T> {
  constructor(values: Iterable<T>) {
    super();
    for (const value of values) super.add(value);
  }

  override add(): this {
    throw new TypeError('This set cannot change.');
  }

  override delete(): boolean {
    throw new TypeError('This set cannot change.');
  }

  override clear(): void {
    throw new TypeError('This set cannot change.');
  }
}

/**
 * The caller a verified token's claims name. Frozen, its scopes a FixedSet: a remembered token's
 * caller is the same object on each of its requests.
 */
function callerOf(payload: JWTPayload): Caller {
  const claims = ClaimsSchema.safeParse(payload);
  if (!claims.success) throw invalidToken('The access token lacks a valid sub or role claim.');
  const { sub, role, name, scope, sid, exp } = claims.data;
  const held = { expiresAt: exp, ...(sid === undefined ? {} : { family: sid }) };
  // RFC 6749 section 3.3: space-delimited. No claim at all is not the same as an empty one.
  const granted = new FixedSet(scope?.split(' ').filter(Boolean) ?? []);
  if (role === 'service') return Object.freeze({ sub, clientId: sub, role, name, scopes: granted, ...held });
  // One user, one spelling: `1e0`, ` 1`, `0x1` or `01` would otherwise be user 1 under another
  // `sub` (and so another rate-limit bucket and idempotency scope).
  const userId = CANONICAL_USER_ID.test(sub) ? Number(sub) : Number.NaN;
  if (!(userId >= 1 && userId <= MAX_USER_ID)) throw invalidToken('The access token subject is not a user id.');
  return Object.freeze({ sub, userId, role, name, scopes: scope === undefined ? 'all' : granted, ...held });
}

function describeJoseError(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'The access token has expired.';
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `The access token claim "${error.claim}" is invalid.`;
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'The access token is signed with an algorithm this service does not accept.';
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'The access token signature is invalid.';
  if (error instanceof joseErrors.JWKSNoMatchingKey) return 'The access token names a signing key the issuer does not publish.';
  return 'The access token is malformed or invalid.';
}

/** 401 for a token that cannot be used, with the RFC 6750 challenge naming `invalid_token`. */
export function invalidToken(detail: string): DomainError {
  const quoted = detail.replace(/["\\]/g, '');
  return new DomainError('unauthorized', detail, {
    headers: { 'www-authenticate': `Bearer realm="order-service", error="invalid_token", error_description="${quoted}"` },
  });
}

/**
 * 503 when the external server's keys cannot be fetched: its outage is not the caller's fault (a
 * 401 would tell the client to throw away a token that may be perfectly good). Logged with the cause.
 */
const keySetUnavailable = (error: KeySetUnavailable): DomainError =>
  new DomainError('service-unavailable', 'The signing keys of the authorization server that issued this token cannot be fetched right now; retry later.', {
    headers: { 'retry-after': String(error.retryAfterSeconds) },
    cause: error.cause ?? error,
  });

export const missingToken = (): DomainError =>
  new DomainError('unauthorized', 'This operation needs an access token: send "Authorization: Bearer <token>".', {
    headers: { 'www-authenticate': 'Bearer realm="order-service"' },
  });
