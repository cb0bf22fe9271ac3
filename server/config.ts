/**
 * Environment -> typed, validated configuration. A bad value stops the service at start with a
 * message naming the variable.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { MAX_ACCESS_TOKEN_TTL_SECONDS, MIN_SECRET_BYTES } from './auth/tokens.ts';
import { defaultDatabaseTimeouts, type DatabaseTimeouts } from './db/client.ts';
import { defaultHttpTimeouts, type HttpTimeouts } from './http/timeouts.ts';
import { isProxyEntry, type TrustProxy } from './lib/client-address.ts';
import { Email } from './modules/users/users.schemas.ts';
import { Settings } from './lib/settings.ts';
import type { AppModule } from './modules/module.ts';
import { modules as appModules } from './modules/modules.ts';

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
/**
 * `false`/`no`: no proxy; `true`/`yes`: one proxy (only the nearest is believed); a hop count; or a
 * comma list of the proxies' addresses and CIDR ranges.
 */
const trustProxy = z.string().transform((value, ctx): TrustProxy => {
  const text = value.trim().toLowerCase();
  if (text === 'false' || text === 'no') return false;
  if (text === 'true' || text === 'yes') return 1;
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops <= 32) return hops === 0 ? false : hops;
  }
  const entries = value.split(',').map((entry) => entry.trim());
  if (entries.every((entry) => entry !== '' && isProxyEntry(entry))) return entries;
  ctx.addIssue({ code: 'custom', message: 'must be true (one proxy), false, a hop count (0-32), or a comma list of proxy addresses or CIDR ranges such as 10.0.0.0/8' });
  return z.NEVER;
});

const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port.default(3000),
  DATABASE_URL: z
    .string()
    .refine((v) => v === 'memory://' || /^postgres(ql)?:\/\/.+/.test(v), 'must be postgres://..., postgresql://... or memory://')
    .optional(),
  DATA_DIR: z.string().min(1).default('.data'),
  DATABASE_POOL_SIZE: positiveInt.max(200).default(10),
  // `false`: migrations are a deploy step of their own (`npm run migrate`); start refuses a database that lacks one.
  MIGRATE_ON_START: z.enum(['true', 'false']).default('true'),
  DATABASE_CONNECT_TIMEOUT_MS: positiveInt.max(600_000).default(defaultDatabaseTimeouts.connectTimeoutMs),
  DATABASE_STATEMENT_TIMEOUT_MS: positiveInt.max(3_600_000).default(defaultDatabaseTimeouts.statementTimeoutMs),
  DATABASE_LOCK_TIMEOUT_MS: positiveInt.max(3_600_000).default(defaultDatabaseTimeouts.lockTimeoutMs),
  DATABASE_ACQUIRE_TIMEOUT_MS: positiveInt.max(600_000).default(defaultDatabaseTimeouts.acquireTimeoutMs),
  // PostgreSQL ends a transaction left idle this long (a stalled process's) and closes its connection.
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: positiveInt.max(3_600_000).default(defaultDatabaseTimeouts.idleInTransactionTimeoutMs),
  HTTP_HEADERS_TIMEOUT_MS: positiveInt.max(600_000).default(defaultHttpTimeouts.headersTimeoutMs),
  HTTP_REQUEST_TIMEOUT_MS: positiveInt.max(3_600_000).default(defaultHttpTimeouts.requestTimeoutMs),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: positiveInt.max(600_000).default(defaultHttpTimeouts.keepAliveTimeoutMs),
  // SIGTERM: readiness answers 503 this long before the drain (0: drain at once), then the drain's bound.
  SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(600_000).default(5000),
  SHUTDOWN_TIMEOUT_MS: positiveInt.max(600_000).default(15_000),
  // Bytes, not characters: the HMAC key is the secret's UTF-8 encoding.
  JWT_SECRET: z
    .string()
    .refine((v) => Buffer.byteLength(v, 'utf8') >= MIN_SECRET_BYTES, `must be at least ${MIN_SECRET_BYTES} bytes`)
    .optional(),
  JWT_ISSUER: z.string().min(1).default('order-service'),
  JWT_AUDIENCE: z.string().min(1).default('order-service-api'),
  ACCESS_TOKEN_TTL_SECONDS: positiveInt.max(MAX_ACCESS_TOKEN_TTL_SECONDS).default(900),
  // An external authorization server whose tokens are accepted too (RS256/ES256/EdDSA, keys from its JWKS).
  JWT_JWKS_URL: z.url({ protocol: /^https?$/ }).optional(),
  JWT_JWKS_ISSUER: z.string().min(1).optional(),
  JWT_JWKS_AUDIENCE: z.string().min(1).optional(),
  // docs/signing-in.md#refresh-tokens: refresh tokens live 30 days.
  REFRESH_TOKEN_TTL_DAYS: positiveInt.max(365).default(30),
  // docs/signing-in.md#limits-and-backoff: /oauth/token and the sign-in form, per client address per minute.
  OAUTH_RATE_LIMIT_MAX: positiveInt.default(20),
  // docs/signing-in.md#the-sign-up-form: `false` takes "Create an account" off the sign-in form.
  SIGN_UP_ENABLED: z.enum(['true', 'false']).default('true'),
  // The address the users API accepts: the admin must be able to sign in with it and PUT itself back.
  ADMIN_EMAIL: Email.optional(),
  ADMIN_PASSWORD: z.string().min(8, 'must be at least 8 characters').max(256).optional(),
  BODY_LIMIT: positiveInt.default(1024 * 1024),
  RATE_LIMIT_MAX: positiveInt.default(600),
  RATE_LIMIT_WINDOW: z.string().min(1).default('1 minute'),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be redis://... or rediss://...').optional(),
  TRUST_PROXY: trustProxy.optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // --- metrics (docs/api.md#metrics): GET /metrics, never public by default ---
  METRICS_PORT: port.optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  METRICS_TOKEN: z
    .string()
    .regex(/^[\x21-\x7e]{16,256}$/, 'must be 16 to 256 visible ASCII characters (no spaces), such as the output of openssl rand -hex 32')
    .optional(),
  // --- end of metrics ---
  PUBLIC_URL: z.url().optional(),
  CORS_ORIGINS: z
    .string()
    .refine((v) => v === '*' || v.split(',').every((o) => /^https?:\/\/[^/\s]+$/.test(o.trim())), 'must be * or a comma list of origins such as https://shop.example.com')
    .optional(),
  TLS_CERT_FILE: z.string().min(1).optional(),
  TLS_KEY_FILE: z.string().min(1).optional(),
  // docs/api.md#idempotency: keys are kept 24 to 48 hours.
  IDEMPOTENCY_TTL_HOURS: z.coerce.number().int().min(24).max(48).default(24),
});

export interface Config {
  env: 'development' | 'production' | 'test';
  host: string;
  port: number;
  databaseUrl: string | undefined;
  dataDir: string;
  databasePoolSize: number;
  /** Apply pending migrations at start (else refuse to start while any is pending). */
  migrateOnStart: boolean;
  /** Bounds on waiting for PostgreSQL, so an outage or a held lock answers 503 in bounded time. */
  databaseTimeouts: Pick<DatabaseTimeouts, 'connectTimeoutMs' | 'statementTimeoutMs' | 'lockTimeoutMs' | 'acquireTimeoutMs' | 'idleInTransactionTimeoutMs'>;
  /** Bounds on slow clients: headers, the whole request, idle keep-alive connections. */
  httpTimeouts: HttpTimeouts;
  /** The graceful stop (server/http/lifecycle.ts): readiness 503 for `delayMs`, then a drain of at most `timeoutMs`. */
  shutdown: { delayMs: number; timeoutMs: number };
  jwt: { secret: string; issuer: string; audience: string; accessTokenTtlSeconds: number };
  /** An external authorization server whose access tokens are accepted beside our own. */
  jwks: { url: string; issuer: string; audience: string } | undefined;
  /** The authorization server under /oauth. */
  oauth: { refreshTokenTtlDays: number; rateLimitMax: number; signUpEnabled: boolean };
  admin: { email: string; password: string } | undefined;
  bodyLimit: number;
  rateLimit: { max: number; window: string };
  /** Rate-limit counters in Redis, shared by every instance; in each process's memory when unset. */
  redisUrl: string | undefined;
  /** Which proxies' `X-Forwarded-*` to believe (server/lib/client-address.ts). */
  trustProxy: TrustProxy;
  logLevel: string;
  /**
   * `GET /metrics` (server/http/metrics.ts): on a port of its own at `host`, and/or on the main port
   * to a bearer of `token`; neither set: not served, nothing recorded.
   */
  metrics: { port: number | undefined; host: string; token: string | undefined };
  publicUrl: string | undefined;
  tls: { cert: string; key: string } | undefined;
  /** Browser origins allowed to call the API; `'*'` for any; empty: no CORS headers. */
  corsOrigins: string[] | '*';
  /** Hours an idempotency key is kept before it is purged (24-48). */
  idempotencyTtlHours: number;
  /** Every module's settings, from the variables it declares (server/modules/module.ts). */
  settings: Settings;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Only where the database is, for `npm run migrate`: a migration step needs no JWT secret, and
 * must not create the development one.
 */
export function loadDatabaseConfig(env: NodeJS.ProcessEnv = process.env): Pick<Config, 'databaseUrl' | 'dataDir'> & { connectTimeoutMs: number } {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = EnvSchema.pick({ DATABASE_URL: true, DATA_DIR: true, DATABASE_CONNECT_TIMEOUT_MS: true }).safeParse(present);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  return { databaseUrl: parsed.data.DATABASE_URL, dataDir: resolve(parsed.data.DATA_DIR), connectTimeoutMs: parsed.data.DATABASE_CONNECT_TIMEOUT_MS };
}

/**
 * Reads and validates the environment: the service's variables and those every module of the list
 * declares. Throws ConfigError listing every bad variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, modules: readonly AppModule[] = appModules): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const declared = modules.flatMap((module) => (module.settings ? [module.settings] : []));
  const parsed = EnvSchema.safeParse(present);
  // The modules' variables (server/modules/module.ts), checked as the service's are, after them.
  const parsedModules = z.object(Object.assign({}, ...declared.map((settings) => settings.env)) as z.ZodRawShape).safeParse(present);
  const problems = [parsed, parsedModules].flatMap((result) => (result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`)));
  // Rules between variables are checked on the raw values too, so one run names every problem.
  const has = (name: string) => present[name] !== undefined;
  const production = present.NODE_ENV === 'production';
  if (has('ADMIN_EMAIL') !== has('ADMIN_PASSWORD')) problems.push('ADMIN_EMAIL and ADMIN_PASSWORD: set both or neither');
  if (has('TLS_CERT_FILE') !== has('TLS_KEY_FILE')) problems.push('TLS_CERT_FILE and TLS_KEY_FILE: set both or neither');
  for (const name of ['TLS_CERT_FILE', 'TLS_KEY_FILE'] as const) {
    const file = present[name];
    if (file !== undefined && !existsSync(file)) problems.push(`${name}: no such file ${file}`);
  }
  if (has('JWT_JWKS_URL') && !(has('JWT_JWKS_ISSUER') && has('JWT_JWKS_AUDIENCE'))) {
    problems.push('JWT_JWKS_URL: also set JWT_JWKS_ISSUER and JWT_JWKS_AUDIENCE (the external tokens\' iss and aud)');
  }
  // Node refuses a headers timeout longer than the request's (the headers are part of the request).
  if (parsed.success && parsed.data.HTTP_HEADERS_TIMEOUT_MS > parsed.data.HTTP_REQUEST_TIMEOUT_MS) {
    problems.push('HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)');
  }
  if (production && !has('JWT_SECRET')) problems.push('JWT_SECRET: required in production (at least 32 bytes)');
  const trustsProxy = has('TRUST_PROXY') && !['false', 'no', '0'].includes(String(present.TRUST_PROXY).trim().toLowerCase());
  if (production && !trustsProxy && !has('TLS_CERT_FILE')) {
    problems.push('TRUST_PROXY: production refuses plain HTTP; set TLS_CERT_FILE/TLS_KEY_FILE, or TRUST_PROXY behind a TLS-terminating proxy');
  }
  // The OAuth issuer and every URL the metadata names: never guessed from the listening address.
  if (production && !has('PUBLIC_URL')) {
    problems.push('PUBLIC_URL: required in production (the public base URL, such as https://orders.example.com: the OAuth issuer and its endpoints)');
  }
  // Metrics: METRICS_HOST alone would serve nothing; the main port cannot serve them twice.
  if (has('METRICS_HOST') && !has('METRICS_PORT')) problems.push('METRICS_HOST: set METRICS_PORT too (the metrics server listens only on a port of its own)');
  if (has('METRICS_PORT') && Number(present.METRICS_PORT) !== 0 && Number(present.METRICS_PORT) === Number(present.PORT ?? 3000)) {
    problems.push('METRICS_PORT: must differ from PORT (set METRICS_TOKEN instead to serve /metrics on the main port)');
  }
  // Each module's rules between its variables, once every variable is valid.
  if (parsedModules.success) {
    const values = parsedModules.data;
    problems.push(...declared.flatMap((settings) => settings.check?.(values) ?? []));
  }
  if (!parsed.success || !parsedModules.success || problems.length > 0) throw new ConfigError(problems);
  const e = parsed.data;
  const moduleValues = parsedModules.data;

  const secret = e.JWT_SECRET ?? developmentSecret(e.DATA_DIR, e.DATABASE_URL === 'memory://');
  return {
    env: e.NODE_ENV,
    host: e.HOST,
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    dataDir: resolve(e.DATA_DIR),
    databasePoolSize: e.DATABASE_POOL_SIZE,
    migrateOnStart: e.MIGRATE_ON_START === 'true',
    databaseTimeouts: {
      connectTimeoutMs: e.DATABASE_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
      lockTimeoutMs: e.DATABASE_LOCK_TIMEOUT_MS,
      acquireTimeoutMs: e.DATABASE_ACQUIRE_TIMEOUT_MS,
      idleInTransactionTimeoutMs: e.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    },
    httpTimeouts: {
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    },
    shutdown: { delayMs: e.SHUTDOWN_DELAY_MS, timeoutMs: e.SHUTDOWN_TIMEOUT_MS },
    jwt: { secret, issuer: e.JWT_ISSUER, audience: e.JWT_AUDIENCE, accessTokenTtlSeconds: e.ACCESS_TOKEN_TTL_SECONDS },
    jwks: e.JWT_JWKS_URL && e.JWT_JWKS_ISSUER && e.JWT_JWKS_AUDIENCE ? { url: e.JWT_JWKS_URL, issuer: e.JWT_JWKS_ISSUER, audience: e.JWT_JWKS_AUDIENCE } : undefined,
    oauth: { refreshTokenTtlDays: e.REFRESH_TOKEN_TTL_DAYS, rateLimitMax: e.OAUTH_RATE_LIMIT_MAX, signUpEnabled: e.SIGN_UP_ENABLED === 'true' },
    admin: e.ADMIN_EMAIL && e.ADMIN_PASSWORD ? { email: e.ADMIN_EMAIL, password: e.ADMIN_PASSWORD } : undefined,
    bodyLimit: e.BODY_LIMIT,
    rateLimit: { max: e.RATE_LIMIT_MAX, window: e.RATE_LIMIT_WINDOW },
    redisUrl: e.REDIS_URL,
    trustProxy: e.TRUST_PROXY ?? false,
    logLevel: e.LOG_LEVEL,
    metrics: { port: e.METRICS_PORT, host: e.METRICS_HOST, token: e.METRICS_TOKEN },
    publicUrl: e.PUBLIC_URL,
    idempotencyTtlHours: e.IDEMPOTENCY_TTL_HOURS,
    settings: new Settings(declared.map((settings) => [settings.key, settings.read(moduleValues, { production })] as const)),
    corsOrigins: e.CORS_ORIGINS === '*' ? '*' : (e.CORS_ORIGINS?.split(',').map((o) => o.trim()) ?? []),
    tls: e.TLS_CERT_FILE && e.TLS_KEY_FILE ? { cert: readFileSync(e.TLS_CERT_FILE, 'utf8'), key: readFileSync(e.TLS_KEY_FILE, 'utf8') } : undefined,
  };
}

/** Development only: a random secret kept under the data directory so tokens survive restarts. */
function developmentSecret(dataDir: string, ephemeral: boolean): string {
  if (ephemeral) return randomBytes(32).toString('base64url');
  const file = resolve(dataDir, 'jwt-secret');
  if (existsSync(file)) {
    const kept = readFileSync(file, 'utf8').trim();
    // A hand-edited or truncated file must not quietly weaken every token's signature.
    if (Buffer.byteLength(kept, 'utf8') < MIN_SECRET_BYTES) {
      throw new ConfigError([
        `${file}: the development JWT secret must be at least ${MIN_SECRET_BYTES} bytes; delete the file to have a new one generated, or set JWT_SECRET`,
      ]);
    }
    return kept;
  }
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}
