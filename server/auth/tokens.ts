import { randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { z } from 'zod';
import { DomainError } from '../errors/problems.ts';

export type Role = 'customer' | 'admin' | 'service';

/** The verified caller of a request, taken from the access token alone (no lookup). */
export interface Caller {
  sub: string;
  /** Numeric user id for `customer`/`admin`; undefined for a service client. */
  userId: number | undefined;
  role: Role;
  name: string | undefined;
  scopes: ReadonlySet<string>;
}

export interface TokenSettings {
  secret: string;
  issuer: string;
  audience: string;
  accessTokenTtlSeconds: number;
}

const ClaimsSchema = z.object({
  sub: z.string().min(1),
  role: z.enum(['customer', 'admin', 'service']),
  name: z.string().optional(),
  scope: z.string().optional(),
});

export class TokenService {
  private readonly key: Uint8Array;

  constructor(private readonly settings: TokenSettings) {
    this.key = new TextEncoder().encode(settings.secret);
  }

  async mint(subject: { sub: string; role: Role; name?: string; scope?: string }, ttlSeconds?: number): Promise<string> {
    return new SignJWT({ role: subject.role, name: subject.name, scope: subject.scope })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(subject.sub)
      .setIssuer(this.settings.issuer)
      .setAudience(this.settings.audience)
      .setIssuedAt()
      .setJti(randomUUID())
      .setExpirationTime(`${ttlSeconds ?? this.settings.accessTokenTtlSeconds}s`)
      .sign(this.key);
  }

  /** Verifies an `Authorization` header value. Undefined header -> anonymous (null). */
  async authenticate(header: string | undefined): Promise<Caller | null> {
    if (header === undefined) return null;
    const match = /^Bearer +([A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]*)\s*$/i.exec(header);
    if (!match?.[1]) throw invalidToken('The Authorization header must be "Bearer <access token>".');
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(match[1], this.key, {
        algorithms: ['HS256'],
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (error) {
      throw invalidToken(describeJoseError(error));
    }
    const claims = ClaimsSchema.safeParse(payload);
    if (!claims.success) throw invalidToken('The access token lacks a valid sub or role claim.');
    const { sub, role, name, scope } = claims.data;
    const userId = role === 'service' ? undefined : Number(sub);
    if (userId !== undefined && !(Number.isSafeInteger(userId) && userId > 0)) {
      throw invalidToken('The access token subject is not a user id.');
    }
    return { sub, userId, role, name, scopes: new Set(scope?.split(' ').filter(Boolean) ?? []) };
  }
}

function describeJoseError(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'The access token has expired.';
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `The access token claim "${error.claim}" is invalid.`;
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'The access token is signed with an algorithm this service does not accept.';
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'The access token signature is invalid.';
  return 'The access token is malformed or invalid.';
}

function invalidToken(detail: string): DomainError {
  const quoted = detail.replace(/["\\]/g, '');
  return new DomainError('unauthorized', detail, {
    headers: { 'www-authenticate': `Bearer realm="order-service", error="invalid_token", error_description="${quoted}"` },
  });
}

export const missingToken = (): DomainError =>
  new DomainError('unauthorized', 'This operation needs an access token: send "Authorization: Bearer <token>".', {
    headers: { 'www-authenticate': 'Bearer realm="order-service"' },
  });
