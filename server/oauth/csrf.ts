/**
 * The sign-in form's CSRF token, stateless so that any instance can check it: a random nonce is
 * kept in a cookie (HttpOnly, SameSite=Strict), and the form carries
 * `<issued-at>.<HMAC(nonce, issued-at, the authorization request's parameters)>`. A POST is
 * accepted only with the cookie of the browser the form was served to, the parameters the form
 * was made for, within the form's lifetime. A cross-site page can neither read the token nor make
 * the browser send the cookie, so it cannot sign a victim in (login CSRF) or alter the request.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The parameters of an authorization request the form carries in hidden fields. */
export const REQUEST_PARAMETERS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method'] as const;
export type AuthorizationRequestParams = Partial<Record<(typeof REQUEST_PARAMETERS)[number], string>>;

const NONCE = /^[A-Za-z0-9_-]{22,64}$/;

/**
 * Over HTTPS the `__Host-` prefix pins the cookie to this host and path `/` (and requires
 * `Secure`); over plain HTTP (development) browsers drop `Secure` cookies, so the cookie is
 * unprefixed and limited to `/oauth`.
 */
function cookieName(secure: boolean): string {
  return secure ? '__Host-oauth-csrf' : 'oauth-csrf';
}

function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

const isSecure = (request: FastifyRequest): boolean => request.protocol === 'https';

export class CsrfTokens {
  constructor(
    private readonly key: Buffer,
    private readonly ttlSeconds: number,
  ) {}

  private mac(nonce: string, issuedAt: number, params: AuthorizationRequestParams): Buffer {
    const bound = JSON.stringify([nonce, issuedAt, ...REQUEST_PARAMETERS.map((name) => params[name] ?? null)]);
    return createHmac('sha256', this.key).update(bound).digest();
  }

  /**
   * A token for a form about to be served; sets (or renews) the nonce cookie. A nonce the browser
   * already holds is kept, so forms open in several tabs all stay valid.
   */
  issue(request: FastifyRequest, reply: FastifyReply, params: AuthorizationRequestParams): string {
    const secure = isSecure(request);
    const name = cookieName(secure);
    const held = readCookie(request, name);
    const nonce = held !== undefined && NONCE.test(held) ? held : randomBytes(24).toString('base64url');
    const attributes = secure ? 'Path=/; Secure' : 'Path=/oauth';
    reply.header('set-cookie', `${name}=${nonce}; ${attributes}; HttpOnly; SameSite=Strict; Max-Age=${this.ttlSeconds}`);
    const issuedAt = Math.floor(Date.now() / 1000);
    return `${issuedAt}.${this.mac(nonce, issuedAt, params).toString('base64url')}`;
  }

  /** Whether `token` was issued to this browser for exactly these parameters, and is still fresh. */
  verify(request: FastifyRequest, token: string | undefined, params: AuthorizationRequestParams): boolean {
    const nonce = readCookie(request, cookieName(isSecure(request)));
    if (token === undefined || nonce === undefined || !NONCE.test(nonce)) return false;
    const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!match?.[1] || !match[2]) return false;
    const issuedAt = Number(match[1]);
    const age = Math.floor(Date.now() / 1000) - issuedAt;
    if (age < -60 || age > this.ttlSeconds) return false;
    const expected = this.mac(nonce, issuedAt, params);
    const presented = Buffer.from(match[2], 'base64url');
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  }

  /** The form did its job: the browser forgets the nonce. */
  clear(request: FastifyRequest, reply: FastifyReply): void {
    const secure = isSecure(request);
    reply.header('set-cookie', `${cookieName(secure)}=; ${secure ? 'Path=/; Secure' : 'Path=/oauth'}; HttpOnly; SameSite=Strict; Max-Age=0`);
  }
}
