/**
 * Access tokens of an external authorization server (`JWT_JWKS_URL`, docs/api.md#external-identity-providers): signed
 * with RS256, ES256 or EdDSA by keys its JWKS publishes. jose's remote key set fetches the set,
 * keeps it (10 minutes), and fetches it again when a token names a `kid` it does not hold (at most
 * once per cooldown), which is how a rotated key is picked up.
 *
 * Identity providers differ in how they grant scopes, read here so the claim rules stay one:
 * `scope` (RFC 8693, space-separated) as our tokens carry it; without it, `scp` (an array, or a
 * space-separated string, as Okta and Entra ID issue it) stands in for it. The `typ` header is
 * checked for every token alike, before either path (server/auth/tokens.ts).
 */
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey, type JWTVerifyOptions } from 'jose';

/** `scp` as the `scope` claim when `scope` is absent; a malformed `scp` refuses the token (never "no claim"). */
function withScope(payload: JWTPayload): JWTPayload {
  if (payload.scope !== undefined || payload.scp === undefined) return payload;
  const { scp } = payload;
  if (typeof scp === 'string') return { ...payload, scope: scp };
  if (Array.isArray(scp) && scp.every((entry): entry is string => typeof entry === 'string' && !entry.includes(' '))) return { ...payload, scope: scp.join(' ') };
  // Read as no claim, it would grant a person everything their role allows.
  throw new joseErrors.JWTClaimValidationFailed('"scp" claim must be a string or an array of scope names', payload, 'scp', 'invalid');
}

/** The algorithms accepted from the external server; HS256 stays ours alone (never from a JWKS). */
export const EXTERNAL_ALGORITHMS: readonly string[] = ['RS256', 'ES256', 'EdDSA'];

export interface JwksSettings {
  /** Where the key set is published (`JWT_JWKS_URL`). */
  url: string;
  /** The `iss` its tokens must carry (`JWT_JWKS_ISSUER`). */
  issuer: string;
  /** The `aud` its tokens must carry (`JWT_JWKS_AUDIENCE`). */
  audience: string;
  /** After a fetch, how long an unknown `kid` is refused without fetching again (jose's cooldown; 30 s). */
  cooldownMs?: number;
  /** How long a fetched set is used before it is fetched again (10 minutes). */
  cacheMaxAgeMs?: number;
  /** How long one fetch may take (5 s). */
  timeoutMs?: number;
  /**
   * After a failed fetch, how long tokens that need a fetch are answered 503 at once instead of
   * asking the server again (5 s); also the `Retry-After` of that 503.
   */
  retryAfterSeconds?: number;
}

/**
 * The key set could not be fetched or read (unreachable, timeout, not 200, not a JWKS): an outage
 * of the identity provider, not the caller's fault, so no 401.
 */
export class KeySetUnavailable extends Error {
  constructor(
    readonly retryAfterSeconds: number,
    options?: { cause?: unknown },
  ) {
    super('The JSON Web Key Set of the external authorization server cannot be fetched.', options);
    this.name = 'KeySetUnavailable';
  }
}

/** What the caller's token is to blame for; anything else the key set throws is the server's outage. */
const isTokenFault = (error: unknown): boolean =>
  error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWKSMultipleMatchingKeys || error instanceof joseErrors.JOSENotSupported;

export class ExternalIssuer {
  private readonly keys: ReturnType<typeof createRemoteJWKSet>;
  private readonly retryAfterSeconds: number;
  private readonly options: JWTVerifyOptions;
  /** Until when (ms since the epoch) a needed fetch is not tried again after a failed one. */
  private failedUntil = 0;

  constructor(settings: JwksSettings, requiredClaims: string[]) {
    this.keys = createRemoteJWKSet(new URL(settings.url), {
      cooldownDuration: settings.cooldownMs ?? 30_000,
      cacheMaxAge: settings.cacheMaxAgeMs ?? 600_000,
      timeoutDuration: settings.timeoutMs ?? 5_000,
    });
    this.retryAfterSeconds = settings.retryAfterSeconds ?? 5;
    this.options = { algorithms: [...EXTERNAL_ALGORITHMS], issuer: settings.issuer, audience: settings.audience, requiredClaims };
  }

  /**
   * The verified payload of `token`. Throws jose's errors for a token at fault (the caller: 401),
   * `KeySetUnavailable` when the keys cannot be had (503).
   */
  async verify(token: string): Promise<JWTPayload> {
    return withScope(await this.verifySignature(token));
  }

  private async verifySignature(token: string): Promise<JWTPayload> {
    try {
      return (await jwtVerify(token, this.getKey, this.options)).payload;
    } catch (error) {
      // A token without `kid` that several keys of the set could verify: jose hands over each (its documented way).
      if (!(error instanceof joseErrors.JWKSMultipleMatchingKeys)) throw error;
      for await (const key of error) {
        try {
          return (await jwtVerify(token, key, this.options)).payload;
        } catch (attempt) {
          if (!(attempt instanceof joseErrors.JWSSignatureVerificationFailed)) throw attempt;
        }
      }
      throw new joseErrors.JWSSignatureVerificationFailed();
    }
  }

  private readonly getKey: JWTVerifyGetKey = async (header, token) => {
    // No usable set and the last fetch just failed: answer at once rather than every request
    // asking the identity provider again (a fresh set in memory still serves the keys it holds).
    if (!this.keys.fresh && Date.now() < this.failedUntil) throw new KeySetUnavailable(this.retryAfterSeconds);
    try {
      return await this.keys(header, token);
    } catch (error) {
      if (isTokenFault(error)) throw error;
      this.failedUntil = Date.now() + this.retryAfterSeconds * 1000;
      throw new KeySetUnavailable(this.retryAfterSeconds, { cause: error });
    }
  };
}
