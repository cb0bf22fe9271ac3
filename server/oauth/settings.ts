/**
 * How the authorization server under /oauth behaves: lifetimes, limits, the sign-in backoff and
 * the key its HMACs (CSRF tokens, sign-in account keys) derive from. `main.ts` fills it from the
 * configuration; tests pass small limits.
 */
import { createHmac } from 'node:crypto';

export interface SignInBackoffSettings {
  /** Failed sign-ins in a row a bucket may have before each further attempt waits. */
  freeFailures: number;
  /** The wait after the last free failure; it doubles with each further failure. */
  baseDelayMs: number;
  /** The longest wait after one failure. */
  maxDelayMs: number;
  /** Failures older than this are forgotten (the count starts again). */
  forgetAfterMs: number;
}

export interface OAuthSettings {
  /**
   * The issuer identifier and base of every endpoint URL (`PUBLIC_URL`). Undefined: derived from
   * the address the service listens on (`http(s)://host:port`), fixed once it listens.
   */
  issuer: string | undefined;
  /**
   * Key material of the server's HMACs. Every instance must use the same one (`main.ts` derives it
   * from JWT_SECRET, so a CSRF token made by one instance is good on another); the default serves
   * tests and scripts only.
   */
  secretKey: string;
  /** Lifetime of a refresh token from its issue (each rotation issues a new one). */
  refreshTokenTtlDays: number;
  /** Lifetime of an authorization code (RFC 6749 section 4.1.2 recommends at most 10 minutes). */
  codeTtlSeconds: number;
  /** How long the sign-in form may be submitted after it was served. */
  formTtlSeconds: number;
  /**
   * Whether the sign-in form offers "Create an account" (`SIGN_UP_ENABLED`): a sign-up form that
   * registers a customer and continues the authorization (docs/signing-in.md#the-sign-up-form).
   */
  signUpEnabled: boolean;
  /** Requests per window per client address on POST /oauth/token, /oauth/authorize and /oauth/revoke. */
  rateLimit: { max: number; timeWindow: string | number };
  /** The sign-in backoff per account and client address (server/oauth/sign-in.ts). */
  backoff: SignInBackoffSettings;
  /** The sign-in backoff per account, from every address together: a much higher threshold. */
  accountBackoff: SignInBackoffSettings;
  /** How often expired codes and refresh tokens are purged. */
  purgeIntervalMs: number;
}

export const defaultOAuthSettings: OAuthSettings = {
  issuer: undefined,
  secretKey: 'order-service-local',
  refreshTokenTtlDays: 30,
  codeTtlSeconds: 60,
  formTtlSeconds: 30 * 60,
  signUpEnabled: true,
  rateLimit: { max: 20, timeWindow: '1 minute' },
  backoff: { freeFailures: 5, baseDelayMs: 1000, maxDelayMs: 60_000, forgetAfterMs: 15 * 60_000 },
  accountBackoff: { freeFailures: 50, baseDelayMs: 1000, maxDelayMs: 5 * 60_000, forgetAfterMs: 15 * 60_000 },
  purgeIntervalMs: 10 * 60_000,
};

/** What `buildApp({ oauth })` takes: any part of the settings; the rest keeps its default. */
export type OAuthOptions = Partial<Omit<OAuthSettings, 'backoff' | 'accountBackoff'>> & {
  backoff?: Partial<SignInBackoffSettings>;
  accountBackoff?: Partial<SignInBackoffSettings>;
};

export function resolveOAuthSettings(options: OAuthOptions = {}): OAuthSettings {
  const { backoff, accountBackoff, ...rest } = options;
  const defined = Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined)) as Partial<OAuthSettings>;
  return {
    ...defaultOAuthSettings,
    ...defined,
    backoff: { ...defaultOAuthSettings.backoff, ...backoff },
    accountBackoff: { ...defaultOAuthSettings.accountBackoff, ...accountBackoff },
  };
}

/** One key per purpose, so a value made for one purpose is never good for another. */
export function purposeKey(secretKey: string, purpose: 'csrf' | 'sign-in-account'): Buffer {
  return createHmac('sha256', secretKey).update(`order-service oauth ${purpose}`).digest();
}
