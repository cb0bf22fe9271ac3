import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type Config } from '../../server/config.ts';
import { eventSettings } from '../../server/modules/events/events.module.ts';
import { webhookSettings } from '../../server/modules/webhooks/webhooks.settings.ts';

const SECRET = 'a-jwt-secret-that-is-at-least-32-bytes';
let scratch: string;
let dirs = 0;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'order-service-config-'));
});
afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** A data directory of its own, so no test writes into the repository or sees another's files. */
function freshDataDir(): string {
  dirs += 1;
  return join(scratch, `data-${dirs}`);
}

function load(env: Record<string, string>): Config {
  return loadConfig({ DATA_DIR: freshDataDir(), ...env });
}

/** The problems of the ConfigError that `env` causes (fails the test when it loads). */
function problemsOf(env: Record<string, string>): string[] {
  try {
    load(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const configError = error as ConfigError;
    expect(configError.message).toContain('Invalid configuration');
    return configError.problems;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

const naming = (problems: string[], variable: string) => problems.some((p) => p.includes(variable));

describe('defaults: 127.0.0.1:3000, issuer order-service, audience order-service-api, 15-minute tokens', () => {
  it('an empty environment (but DATA_DIR) gives the documented defaults', () => {
    const config = load({});
    expect(config.host).toBe('127.0.0.1');
    expect(config.port).toBe(3000);
    expect(config.env).toBe('development');
    expect(config.databaseUrl).toBeUndefined();
    expect(config.jwt).toMatchObject({ issuer: 'order-service', audience: 'order-service-api', accessTokenTtlSeconds: 900 });
    expect(config.bodyLimit).toBe(1024 * 1024);
    expect(config.rateLimit).toEqual({ max: 600, window: '1 minute' });
    expect(config.trustProxy).toBe(false);
    expect(config.admin).toBeUndefined();
    expect(config.tls).toBeUndefined();
  });

  it('HOST and PORT are read from the environment', () => {
    const config = load({ HOST: '0.0.0.0', PORT: '8080', JWT_SECRET: SECRET });
    expect(config.host).toBe('0.0.0.0');
    expect(config.port).toBe(8080);
  });

  it('an empty variable counts as unset', () => {
    expect(load({ PORT: '', HOST: '', JWT_SECRET: SECRET }).port).toBe(3000);
  });

  it('JWT_SECRET, issuer and audience are taken as given', () => {
    const config = load({ JWT_SECRET: SECRET, JWT_ISSUER: 'me', JWT_AUDIENCE: 'you', ACCESS_TOKEN_TTL_SECONDS: '60' });
    expect(config.jwt).toEqual({ secret: SECRET, issuer: 'me', audience: 'you', accessTokenTtlSeconds: 60 });
  });

  it('ADMIN_EMAIL with ADMIN_PASSWORD gives the bootstrap admin', () => {
    const config = load({ ADMIN_EMAIL: 'root@example.com', ADMIN_PASSWORD: 'root-password', JWT_SECRET: SECRET });
    expect(config.admin).toEqual({ email: 'root@example.com', password: 'root-password' });
  });
});

describe('PORT must be a port number (ConfigError naming PORT)', () => {
  it.each(['abc', '70000', '-1', '3000.5'])('PORT=%s is refused', (value) => {
    const problems = problemsOf({ PORT: value, JWT_SECRET: SECRET });
    expect(naming(problems, 'PORT')).toBe(true);
  });
});

describe('JWT_SECRET must be at least 32 bytes', () => {
  it('a 31-character secret is refused naming JWT_SECRET', () => {
    const problems = problemsOf({ JWT_SECRET: 's'.repeat(31) });
    expect(naming(problems, 'JWT_SECRET')).toBe(true);
  });

  it('a 32-character secret is accepted', () => {
    expect(load({ JWT_SECRET: 's'.repeat(32) }).jwt.secret).toBe('s'.repeat(32));
  });

  it('bytes count, not characters: 31 ASCII bytes plus one 2-byte character is 33 bytes and accepted', () => {
    const secret = `${'s'.repeat(31)}é`;
    expect(load({ JWT_SECRET: secret }).jwt.secret).toBe(secret);
  });
});

describe('ACCESS_TOKEN_TTL_SECONDS is at most 24 hours (the longest lifetime a token may have)', () => {
  it('86400 is accepted', () => {
    expect(load({ JWT_SECRET: SECRET, ACCESS_TOKEN_TTL_SECONDS: '86400' }).jwt.accessTokenTtlSeconds).toBe(86400);
  });

  it('86401 is refused naming ACCESS_TOKEN_TTL_SECONDS', () => {
    expect(naming(problemsOf({ JWT_SECRET: SECRET, ACCESS_TOKEN_TTL_SECONDS: '86401' }), 'ACCESS_TOKEN_TTL_SECONDS')).toBe(true);
  });
});

describe('DATABASE_URL: postgres://, postgresql:// or memory:// (absent: embedded PGlite under DATA_DIR)', () => {
  it('mysql://x is refused naming DATABASE_URL', () => {
    const problems = problemsOf({ DATABASE_URL: 'mysql://x', JWT_SECRET: SECRET });
    expect(naming(problems, 'DATABASE_URL')).toBe(true);
  });

  it.each(['postgres://u:p@localhost:5432/db', 'postgresql://localhost/db', 'memory://'])('%s is accepted', (url) => {
    expect(load({ DATABASE_URL: url, JWT_SECRET: SECRET }).databaseUrl).toBe(url);
  });

  it('DATA_DIR is resolved to an absolute path', () => {
    const dataDir = freshDataDir();
    expect(loadConfig({ DATA_DIR: dataDir, JWT_SECRET: SECRET }).dataDir).toBe(dataDir);
  });
});

describe('ADMIN_EMAIL and ADMIN_PASSWORD: both or neither', () => {
  it('ADMIN_EMAIL without ADMIN_PASSWORD is refused', () => {
    const problems = problemsOf({ ADMIN_EMAIL: 'root@example.com', JWT_SECRET: SECRET });
    expect(naming(problems, 'ADMIN_PASSWORD')).toBe(true);
  });

  it('ADMIN_PASSWORD without ADMIN_EMAIL is refused', () => {
    const problems = problemsOf({ ADMIN_PASSWORD: 'root-password', JWT_SECRET: SECRET });
    expect(naming(problems, 'ADMIN_EMAIL')).toBe(true);
  });

  it('an ADMIN_EMAIL that is not an email is refused naming ADMIN_EMAIL', () => {
    const problems = problemsOf({ ADMIN_EMAIL: 'root', ADMIN_PASSWORD: 'root-password', JWT_SECRET: SECRET });
    expect(naming(problems, 'ADMIN_EMAIL')).toBe(true);
  });

  it('ADMIN_EMAIL is held to the users API\'s rule (an admin it refused could not PUT itself back): a host without a domain is refused, the development admin\'s address accepted', () => {
    expect(naming(problemsOf({ ADMIN_EMAIL: 'admin@localhost', ADMIN_PASSWORD: 'root-password', JWT_SECRET: SECRET }), 'ADMIN_EMAIL')).toBe(true);
    expect(load({ ADMIN_EMAIL: 'admin@example.com', ADMIN_PASSWORD: 'root-password', JWT_SECRET: SECRET }).admin?.email).toBe('admin@example.com');
  });

  it('an ADMIN_PASSWORD shorter than a user password may be (8) is refused', () => {
    const problems = problemsOf({ ADMIN_EMAIL: 'root@example.com', ADMIN_PASSWORD: 'short77', JWT_SECRET: SECRET });
    expect(naming(problems, 'ADMIN_PASSWORD')).toBe(true);
  });
});

describe('production refuses a missing JWT_SECRET, plain HTTP without TRUST_PROXY, and a missing PUBLIC_URL', () => {
  it('NODE_ENV=production without JWT_SECRET is refused naming JWT_SECRET', () => {
    const problems = problemsOf({ NODE_ENV: 'production', TRUST_PROXY: 'true' });
    expect(naming(problems, 'JWT_SECRET')).toBe(true);
  });

  it('NODE_ENV=production with a short JWT_SECRET is refused', () => {
    const problems = problemsOf({ NODE_ENV: 'production', TRUST_PROXY: 'true', JWT_SECRET: 'short' });
    expect(naming(problems, 'JWT_SECRET')).toBe(true);
  });

  it('NODE_ENV=production on plain HTTP without TRUST_PROXY is refused', () => {
    const problems = problemsOf({ NODE_ENV: 'production', JWT_SECRET: SECRET });
    expect(naming(problems, 'TRUST_PROXY')).toBe(true);
  });

  it('NODE_ENV=production behind a TLS proxy with a secret starts, and writes no secret file', () => {
    const dataDir = freshDataDir();
    const config = loadConfig({ NODE_ENV: 'production', TRUST_PROXY: 'true', JWT_SECRET: SECRET, PUBLIC_URL: 'https://orders.example.com', DATA_DIR: dataDir });
    expect(config).toMatchObject({ env: 'production', trustProxy: 1, jwt: { secret: SECRET }, publicUrl: 'https://orders.example.com' });
    expect(existsSync(join(dataDir, 'jwt-secret'))).toBe(false);
  });

  it('NODE_ENV=production without PUBLIC_URL is refused naming PUBLIC_URL (the OAuth issuer is never the listening address there)', () => {
    const problems = problemsOf({ NODE_ENV: 'production', TRUST_PROXY: 'true', JWT_SECRET: SECRET });
    expect(problems.filter((p) => p.includes('PUBLIC_URL'))).toHaveLength(1);
    expect(naming(problems, 'JWT_SECRET')).toBe(false);
    // Development and test derive it from the listening address.
    expect(load({ NODE_ENV: 'test', JWT_SECRET: SECRET }).publicUrl).toBeUndefined();
  });

  it('TRUST_PROXY=false, no or 0 is no proxy: production still refuses plain HTTP', () => {
    for (const value of ['false', '0', 'no']) {
      expect(naming(problemsOf({ NODE_ENV: 'production', TRUST_PROXY: value, JWT_SECRET: SECRET, PUBLIC_URL: 'https://o.example.com' }), 'TRUST_PROXY')).toBe(true);
    }
  });
});

describe('TRUST_PROXY: true (the nearest proxy only), a hop count, or the proxies\' addresses and ranges', () => {
  it.each([
    ['true', 1],
    ['yes', 1],
    ['1', 1],
    ['2', 2],
    ['false', false],
    ['no', false],
    ['0', false],
  ])('TRUST_PROXY=%s trusts %s', (value, expected) => {
    expect(load({ TRUST_PROXY: value, JWT_SECRET: SECRET }).trustProxy).toBe(expected);
  });

  it('a comma list of addresses, CIDR ranges and proxy-addr names is kept as a list', () => {
    expect(load({ TRUST_PROXY: '10.0.0.1, 10.1.0.0/16,2001:db8::/32 ,loopback', JWT_SECRET: SECRET }).trustProxy).toEqual([
      '10.0.0.1',
      '10.1.0.0/16',
      '2001:db8::/32',
      'loopback',
    ]);
  });

  it.each(['maybe', '10.0.0.0/33', 'proxy.example.com', '10.0.0.1,', '99', '-1'])('TRUST_PROXY=%s is refused naming it', (value) => {
    expect(naming(problemsOf({ TRUST_PROXY: value, JWT_SECRET: SECRET }), 'TRUST_PROXY')).toBe(true);
  });
});

describe('TLS_CERT_FILE and TLS_KEY_FILE: both or neither, and the files must exist', () => {
  it('TLS_CERT_FILE without TLS_KEY_FILE is refused', () => {
    const cert = join(scratch, 'cert.pem');
    writeFileSync(cert, 'not really a certificate');
    const problems = problemsOf({ TLS_CERT_FILE: cert, JWT_SECRET: SECRET });
    expect(naming(problems, 'TLS_KEY_FILE')).toBe(true);
  });

  it('a TLS file that does not exist is refused naming it', () => {
    const problems = problemsOf({ TLS_CERT_FILE: join(scratch, 'missing-cert.pem'), TLS_KEY_FILE: join(scratch, 'missing-key.pem'), JWT_SECRET: SECRET });
    expect(naming(problems, 'TLS_CERT_FILE')).toBe(true);
    expect(naming(problems, 'TLS_KEY_FILE')).toBe(true);
  });

  it('both files present are read into the config', () => {
    const cert = join(scratch, 'both-cert.pem');
    const key = join(scratch, 'both-key.pem');
    writeFileSync(cert, 'CERT');
    writeFileSync(key, 'KEY');
    expect(load({ TLS_CERT_FILE: cert, TLS_KEY_FILE: key, JWT_SECRET: SECRET }).tls).toEqual({ cert: 'CERT', key: 'KEY' });
  });
});

describe('several bad variables are all listed at once', () => {
  it('PORT, JWT_SECRET and DATABASE_URL wrong together: each is named', () => {
    const problems = problemsOf({ PORT: 'abc', JWT_SECRET: 'short', DATABASE_URL: 'mysql://x' });
    expect(naming(problems, 'PORT')).toBe(true);
    expect(naming(problems, 'JWT_SECRET')).toBe(true);
    expect(naming(problems, 'DATABASE_URL')).toBe(true);
    expect(problems.length).toBeGreaterThanOrEqual(3);
  });

  it('a bad value and a missing partner variable together: both are named', () => {
    const problems = problemsOf({ PORT: '70000', ADMIN_EMAIL: 'root@example.com', JWT_SECRET: SECRET });
    expect(naming(problems, 'PORT')).toBe(true);
    expect(naming(problems, 'ADMIN_PASSWORD')).toBe(true);
  });

  it('the error message lists every problem', () => {
    try {
      load({ PORT: 'abc', DATABASE_URL: 'mysql://x' });
      expect.unreachable('loadConfig should have thrown');
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toContain('PORT');
      expect(message).toContain('DATABASE_URL');
    }
  });
});

describe('in development without JWT_SECRET a secret is created under DATA_DIR and kept', () => {
  it('the generated secret is at least 32 bytes, stored under DATA_DIR, and the same on the next start', () => {
    const dataDir = freshDataDir();
    const first = loadConfig({ NODE_ENV: 'development', DATA_DIR: dataDir });
    expect(first.jwt.secret.length).toBeGreaterThanOrEqual(32);
    const file = join(dataDir, 'jwt-secret');
    expect(readFileSync(file, 'utf8').trim()).toBe(first.jwt.secret);
    const second = loadConfig({ NODE_ENV: 'development', DATA_DIR: dataDir });
    expect(second.jwt.secret).toBe(first.jwt.secret);
  });

  it('a kept secret shorter than 32 bytes stops the start with a ConfigError naming the file (regression: a 1-character secret was accepted)', () => {
    const dataDir = freshDataDir();
    loadConfig({ NODE_ENV: 'development', DATA_DIR: dataDir });
    const file = join(dataDir, 'jwt-secret');
    writeFileSync(file, 'x\n');
    const problems = (() => {
      try {
        loadConfig({ NODE_ENV: 'development', DATA_DIR: dataDir });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).problems;
      }
      throw new Error('expected a ConfigError for a 1-byte development secret');
    })();
    expect(problems.join('\n')).toContain(file);
    expect(problems.join('\n')).toContain('32 bytes');
  });

  it('with DATABASE_URL=memory:// the secret is ephemeral and nothing is written', () => {
    const dataDir = freshDataDir();
    const a = loadConfig({ DATABASE_URL: 'memory://', DATA_DIR: dataDir });
    const b = loadConfig({ DATABASE_URL: 'memory://', DATA_DIR: dataDir });
    expect(a.jwt.secret.length).toBeGreaterThanOrEqual(32);
    expect(a.jwt.secret).not.toBe(b.jwt.secret);
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe('METRICS_PORT, METRICS_HOST, METRICS_TOKEN: /metrics is not served unless one is set (docs/api.md#metrics)', () => {
  const TOKEN = 'a-metrics-token-0123456789';

  it('unset: no port, no token, the host 127.0.0.1', () => {
    expect(load({ JWT_SECRET: SECRET }).metrics).toEqual({ port: undefined, host: '127.0.0.1', token: undefined });
  });

  it('METRICS_PORT and METRICS_HOST give the metrics server\'s address; METRICS_TOKEN is taken as given', () => {
    expect(load({ JWT_SECRET: SECRET, METRICS_PORT: '9464', METRICS_HOST: '10.0.0.5', METRICS_TOKEN: TOKEN }).metrics).toEqual({ port: 9464, host: '10.0.0.5', token: TOKEN });
  });

  it.each(['abc', '70000', '-1'])('METRICS_PORT=%s is refused naming METRICS_PORT', (value) => {
    expect(naming(problemsOf({ JWT_SECRET: SECRET, METRICS_PORT: value }), 'METRICS_PORT')).toBe(true);
  });

  it('METRICS_PORT equal to PORT is refused (the main port serves /metrics only with METRICS_TOKEN)', () => {
    expect(naming(problemsOf({ JWT_SECRET: SECRET, PORT: '8080', METRICS_PORT: '8080' }), 'METRICS_PORT')).toBe(true);
    expect(naming(problemsOf({ JWT_SECRET: SECRET, METRICS_PORT: '3000' }), 'METRICS_PORT')).toBe(true);
  });

  it('METRICS_HOST without METRICS_PORT is refused: it would serve nothing', () => {
    expect(naming(problemsOf({ JWT_SECRET: SECRET, METRICS_HOST: '0.0.0.0' }), 'METRICS_HOST')).toBe(true);
  });

  it.each([
    ['15 characters', 't'.repeat(15)],
    ['a space', 'a metrics token with spaces'],
    ['257 characters', 't'.repeat(257)],
  ])('a METRICS_TOKEN of %s is refused naming METRICS_TOKEN', (_name, token) => {
    expect(naming(problemsOf({ JWT_SECRET: SECRET, METRICS_TOKEN: token }), 'METRICS_TOKEN')).toBe(true);
  });
});

describe('HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS, HTTP_KEEP_ALIVE_TIMEOUT_MS bound slow clients (issue 21)', () => {
  it('unset: headers 10 s, whole request 30 s, idle keep-alive 72 s', () => {
    expect(load({}).httpTimeouts).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 72_000 });
  });

  it('set: taken as given', () => {
    const config = load({ HTTP_HEADERS_TIMEOUT_MS: '2000', HTTP_REQUEST_TIMEOUT_MS: '5000', HTTP_KEEP_ALIVE_TIMEOUT_MS: '65000' });
    expect(config.httpTimeouts).toEqual({ headersTimeoutMs: 2000, requestTimeoutMs: 5000, keepAliveTimeoutMs: 65_000 });
  });

  it.each(['HTTP_HEADERS_TIMEOUT_MS', 'HTTP_REQUEST_TIMEOUT_MS', 'HTTP_KEEP_ALIVE_TIMEOUT_MS'])('%s of 0, -1 or a word is refused naming it', (variable) => {
    for (const value of ['0', '-1', 'soon']) expect(naming(problemsOf({ [variable]: value }), variable)).toBe(true);
  });

  it('a headers timeout longer than the request timeout is refused naming both', () => {
    const problems = problemsOf({ HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '10000' });
    expect(problems.join('\n')).toMatch(/HTTP_HEADERS_TIMEOUT_MS.*HTTP_REQUEST_TIMEOUT_MS/);
  });
});

describe('SHUTDOWN_DELAY_MS and SHUTDOWN_TIMEOUT_MS: readiness 503 before the drain, and the drain\'s bound', () => {
  it('unset: 5 s of readiness 503 before the drain, 15 s for the drain', () => {
    expect(load({}).shutdown).toEqual({ delayMs: 5000, timeoutMs: 15_000 });
  });

  it('SHUTDOWN_DELAY_MS=0 drains at once (tests, or no load balancer in front)', () => {
    expect(load({ SHUTDOWN_DELAY_MS: '0', SHUTDOWN_TIMEOUT_MS: '30000' }).shutdown).toEqual({ delayMs: 0, timeoutMs: 30_000 });
  });

  it('a negative delay, or a drain bound of 0, is refused naming it', () => {
    expect(naming(problemsOf({ SHUTDOWN_DELAY_MS: '-1' }), 'SHUTDOWN_DELAY_MS')).toBe(true);
    expect(naming(problemsOf({ SHUTDOWN_TIMEOUT_MS: '0' }), 'SHUTDOWN_TIMEOUT_MS')).toBe(true);
  });
});

describe('SIGN_UP_ENABLED: the sign-in form offers "Create an account" unless it is false (docs/signing-in.md#the-sign-up-form)', () => {
  it('unset: on', () => {
    expect(load({}).oauth.signUpEnabled).toBe(true);
  });

  it('false: off; true: on', () => {
    expect(load({ SIGN_UP_ENABLED: 'false' }).oauth.signUpEnabled).toBe(false);
    expect(load({ SIGN_UP_ENABLED: 'true' }).oauth.signUpEnabled).toBe(true);
  });

  it.each(['no', '0', 'off', 'FALSE'])('%s is refused naming SIGN_UP_ENABLED (never read as on by mistake)', (value) => {
    expect(naming(problemsOf({ SIGN_UP_ENABLED: value }), 'SIGN_UP_ENABLED')).toBe(true);
  });
});

describe('webhooks (docs/webhooks.md): documented defaults, and bad values refused naming the variable', () => {
  it('defaults: 16 endpoints, the 27-hour schedule, the worker on, 8 per endpoint, 500 ms polls, 60 s leases', () => {
    expect(load({}).settings.get(webhookSettings)).toEqual({
      production: false,
      maxEndpoints: 16,
      allowedHosts: [],
      worker: { retryScheduleSeconds: [5, 300, 1800, 7200, 18000, 36000, 36000], concurrencyPerEndpoint: 16, pollIntervalMs: 500, leaseSeconds: 60 },
    });
  });

  it('WEBHOOK_ALLOWED_HOSTS and WEBHOOK_RETRY_SCHEDULE are comma lists', () => {
    const config = load({ WEBHOOK_ALLOWED_HOSTS: 'Hooks.Internal, [::1]', WEBHOOK_RETRY_SCHEDULE: '1, 2,3', WEBHOOK_WORKER: 'false' });
    expect(config.settings.get(webhookSettings)).toMatchObject({ allowedHosts: ['hooks.internal', '::1'], worker: false });
    expect(load({ WEBHOOK_RETRY_SCHEDULE: '1, 2,3' }).settings.get(webhookSettings).worker).toMatchObject({ retryScheduleSeconds: [1, 2, 3] });
  });

  it.each([
    ['WEBHOOK_RETRY_SCHEDULE', '5,x'],
    ['WEBHOOK_RETRY_SCHEDULE', '-5'],
    ['WEBHOOK_ALLOWED_HOSTS', 'https://hooks.example.com/'],
    ['WEBHOOK_LEASE_SECONDS', '10'],
    ['WEBHOOK_MAX_ENDPOINTS', '0'],
    ['WEBHOOK_WORKER', 'off'],
  ])('%s=%s is refused naming it', (variable, value) => {
    expect(naming(problemsOf({ [variable]: value }), variable)).toBe(true);
  });
});

describe('EVENT_RETENTION_DAYS outlasts the webhook retry schedule: the purge never takes a delivery still to be retried', () => {
  it('1 day with the default schedule (about 27 hours) is refused naming both', () => {
    const problems = problemsOf({ EVENT_RETENTION_DAYS: '1' });
    expect(naming(problems, 'EVENT_RETENTION_DAYS')).toBe(true);
    expect(problems.join('\n')).toMatch(/WEBHOOK_RETRY_SCHEDULE/);
  });

  it('1 day with a schedule (and its leases) well within it is accepted', () => {
    expect(load({ EVENT_RETENTION_DAYS: '1', WEBHOOK_RETRY_SCHEDULE: '5,300,3600' }).settings.get(eventSettings).retentionDays).toBe(1);
  });

  it('the span counts each attempt\'s lease: a second short of the retention is accepted, a second past it refused', () => {
    // One retry: its delay, and two attempts each held up to WEBHOOK_LEASE_SECONDS (60 s), against 86400 s.
    expect(load({ EVENT_RETENTION_DAYS: '1', WEBHOOK_RETRY_SCHEDULE: '86279' }).settings.get(eventSettings).retentionDays).toBe(1);
    expect(naming(problemsOf({ EVENT_RETENTION_DAYS: '1', WEBHOOK_RETRY_SCHEDULE: '86281' }), 'EVENT_RETENTION_DAYS')).toBe(true);
  });
});
