/**
 * `npm run admin -- create|reset-password|token` (issue 36 item 11: no way back to a lost admin
 * password, no written way to an admin token in production), on this project's database kind as
 * the service is configured for it: PGlite in a data directory, or a PostgreSQL database. Each
 * command runs in-process (`runAdminCommand`, the function the npm script calls) and its result
 * is checked through the service itself: the password grant, a refresh, an admin-only call. The
 * npm script itself runs once as a process.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { and, eq, isNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../server/admin-cli.ts';
import { buildApp } from '../../server/app.ts';
import { createTestUser } from '../../server/testing.ts';
import { TokenService } from '../../server/auth/tokens.ts';
import { loadConfig } from '../../server/config.ts';
import { openDatabase, type Database } from '../../server/db/client.ts';
import { oauthRefreshTokens, users } from '../../server/db/schema.ts';
import { issueRefreshToken, newFamilyId } from '../../server/oauth/refresh-tokens.ts';
import { onPostgres, copyTemplateDatabase } from '../helpers/db.ts';
import { TEST_JWT } from '../helpers/app.ts';
import { insertClient } from '../helpers/oauth.ts';
import { dropDatabase, withDatabase } from '../helpers/postgres-url.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** PGlite opens in seconds, PostgreSQL's template copy likewise; on a loaded machine much longer. */
const SLOW_MS = 180_000;

/** The service's configuration: its database, its signing secret. */
let env: NodeJS.ProcessEnv;
let cleanup: () => Promise<void> = async () => {};

beforeAll(async () => {
  if (onPostgres) {
    const copy = await copyTemplateDatabase();
    env = { NODE_ENV: 'test', DATABASE_URL: copy.url, JWT_SECRET: TEST_JWT.secret };
    cleanup = copy.drop;
  } else {
    const dataDir = mkdtempSync(join(tmpdir(), 'order-service-admin-'));
    // Migrated as `npm start` (or `npm run migrate`) leaves it.
    await (await openDatabase({ url: undefined, dataDir })).close();
    env = { NODE_ENV: 'test', DATA_DIR: dataDir, JWT_SECRET: TEST_JWT.secret };
    cleanup = async () => rmSync(dataDir, { recursive: true, force: true });
  }
}, SLOW_MS);
afterAll(() => cleanup());

interface Run {
  code: number;
  stdout: string[];
  stderr: string[];
}

async function admin(args: string[], options: { stdin?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await runAdminCommand(args, {
    env: options.env ?? env,
    readStdin: async () => options.stdin ?? '',
    stdout: (line) => stdout.push(line),
    stderr: (line) => stderr.push(line),
  });
  return { code, stdout, stderr };
}

/** The configured database, opened as the service opens it (after the command closed it: PGlite allows one opening). */
async function withDb<T>(work: (database: Database) => Promise<T>): Promise<T> {
  const database = await openDatabase({ url: env.DATABASE_URL, dataDir: env.DATA_DIR ?? '', migrate: false });
  try {
    return await work(database);
  } finally {
    await database.close();
  }
}

/** The service on the configured database and secret, for as long as `work` runs. */
async function withService<T>(work: (call: (path: string, init?: RequestInit) => Promise<Response>, database: Database) => Promise<T>): Promise<T> {
  return withDb(async (database) => {
    const app = await buildApp({ database, tokens: new TokenService(loadConfig(env).jwt), webhooks: { worker: false } });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      return await work((path, init) => fetch(`${base}${path}`, init), database);
    } finally {
      await app.close();
    }
  });
}

/** The password grant through the service's token endpoint, with a first-party client made for it. */
async function signIn(call: (path: string, init?: RequestInit) => Promise<Response>, database: Database, email: string, password: string): Promise<number> {
  const { client } = await insertClient(database.db);
  const response = await call('/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', client_id: client.client_id, username: email, password, scope: 'users:read' }),
  });
  return response.status;
}

const unique = (label: string) => `${label}-${Math.random().toString(36).slice(2, 10)}@example.com`;

async function userByEmail(email: string) {
  return withDb(async ({ db }) => (await db.select({ id: users.id, role: users.role, name: users.name }).from(users).where(eq(users.email, email)))[0]);
}

describe('admin create: an admin account on the configured database, through the users rules', () => {
  it('makes an admin and prints its generated password once, alone on stdout; the admin signs in with it', async () => {
    const email = unique('ops');
    const run = await admin(['create', '--email', email, '--name', 'Ops Person']);
    expect(run).toMatchObject({ code: 0, stdout: [expect.stringMatching(/^[A-Za-z0-9_-]{24}$/)] });
    expect(run.stderr.join('\n')).toContain(`Created admin ${email}`);
    expect(await userByEmail(email)).toMatchObject({ role: 'admin', name: 'Ops Person' });
    const password = run.stdout[0] ?? '';
    await withService(async (call, database) => {
      expect(await signIn(call, database, email, password)).toBe(200);
    });
  }, SLOW_MS);

  it('takes the password from stdin with --password-stdin and prints none', async () => {
    const email = unique('ops-stdin');
    const run = await admin(['create', '--email', email, '--name', 'Ops', '--password-stdin'], { stdin: 'a long enough passphrase\n' });
    expect(run).toMatchObject({ code: 0, stdout: [] });
    await withService(async (call, database) => {
      expect(await signIn(call, database, email, 'a long enough passphrase')).toBe(200);
    });
  }, SLOW_MS);
});

describe('admin reset-password: back to a lost password', () => {
  it('sets a new generated password (printed once), the old one stops working, and the user\'s refresh tokens are revoked', async () => {
    const email = unique('lost');
    const created = await admin(['create', '--email', email, '--name', 'Forgetful', '--password-stdin'], { stdin: 'the old passphrase' });
    expect(created.code).toBe(0);
    const user = await userByEmail(email);
    // A sign-in in progress somewhere: a refresh token of this user.
    await withDb(async ({ db }) => {
      const { client } = await insertClient(db);
      await issueRefreshToken(db, { familyId: newFamilyId(), clientId: client.client_id, userId: user?.id ?? 0, scope: 'users:read', ttlDays: 30 });
    });

    const run = await admin(['reset-password', '--email', email.toUpperCase()]);
    expect(run).toMatchObject({ code: 0, stdout: [expect.stringMatching(/^[A-Za-z0-9_-]{24}$/)] });
    expect(run.stderr.join('\n')).toContain('sign-ins are ended');

    const live = await withDb(async ({ db }) =>
      db.select({ tokenHash: oauthRefreshTokens.tokenHash }).from(oauthRefreshTokens).where(and(eq(oauthRefreshTokens.userId, user?.id ?? 0), isNull(oauthRefreshTokens.revokedAt))),
    );
    expect(live).toEqual([]);
    await withService(async (call, database) => {
      expect(await signIn(call, database, email, 'the old passphrase')).toBe(400);
      expect(await signIn(call, database, email, run.stdout[0] ?? '')).toBe(200);
    });
  }, SLOW_MS);
});

describe('admin token: an admin access token signed with the configured secret', () => {
  it('mints a token the service accepts for admin-only calls; --scopes limits it, --ttl sets its life', async () => {
    const email = unique('token');
    expect((await admin(['create', '--email', email, '--name', 'Tokens'])).code).toBe(0);
    const full = await admin(['token', '--email', email]);
    expect(full).toMatchObject({ code: 0, stdout: [expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/)] });
    const limited = await admin(['token', '--email', email, '--scopes', 'products:write,orders:read', '--ttl', '120']);
    expect(limited.code).toBe(0);
    const claims = JSON.parse(Buffer.from((limited.stdout[0] ?? '').split('.')[1] ?? '', 'base64url').toString()) as { exp: number; iat: number; scope: string; role: string };
    expect(claims).toMatchObject({ role: 'admin', scope: 'products:write orders:read' });
    expect(claims.exp - claims.iat).toBe(120);
    await withService(async (call) => {
      const bearer = (token: string | undefined) => ({ headers: { authorization: `Bearer ${token ?? ''}` } });
      expect((await call('/api/v1/users', bearer(full.stdout[0]))).status).toBe(200);
      // The same admin, limited to what --scopes named: users:read is not among them.
      expect((await call('/api/v1/users', bearer(limited.stdout[0]))).status).toBe(403);
    });
  }, SLOW_MS);

  it("a customer's token only when asked for with --allow-customer, with a customer's scopes", async () => {
    const email = unique('customer');
    await withDb(async ({ db }) => createTestUser(db, { email, name: 'Shopper' }));
    const refused = await admin(['token', '--email', email]);
    expect(refused).toMatchObject({ code: 2, stdout: [] });
    expect(refused.stderr).toEqual([`admin: ${email} is a customer, not an admin: add --allow-customer to mint a customer's token`]);
    const allowed = await admin(['token', '--email', email, '--allow-customer']);
    expect(allowed.code).toBe(0);
    expect((await admin(['token', '--email', email, '--allow-customer', '--scopes', 'products:write'])).stderr).toEqual([
      'admin: --scopes: a customer cannot use "products:write"',
    ]);
  }, SLOW_MS);
});

describe('admin refuses unsafe input: one line, exit 2, no stack, nothing changed', () => {
  const refusals: [string, string[], RegExp, string?][] = [
    ['an unknown option', ['create', '--email', 'a@example.com', '--name', 'A', '--emial', 'x'], /^admin: Unknown option '--emial'$/],
    ['an option of another command', ['create', '--email', 'a@example.com', '--name', 'A', '--ttl', '60'], /^admin: create takes no --ttl$/],
    ['an unknown command', ['promote', '--email', 'a@example.com'], /^admin: unknown command "promote"/],
    ['a malformed email', ['create', '--email', 'not-an-email', '--name', 'A'], /^admin: --email must be an email address/],
    ['no name', ['create', '--email', 'a@example.com'], /^admin: --name is required$/],
    ['a weak password from stdin', ['create', '--email', 'weak@example.com', '--name', 'A', '--password-stdin'], /^admin: .*password: .*8/, 'short\n'],
    ['several lines on stdin', ['reset-password', '--email', 'a@example.com', '--password-stdin'], /^admin: --password-stdin reads one line/, 'one passphrase\nanother one\n'],
    ['an unknown user', ['reset-password', '--email', 'nobody-here@example.com'], /^admin: no user has the email nobody-here@example.com$/],
    ['an unknown scope', ['token', '--email', 'a@example.com', '--scopes', 'orders:destroy'], /^admin: --scopes: unknown scope "orders:destroy"$/],
    ['a lifetime beyond what the service accepts', ['token', '--email', 'a@example.com', '--ttl', '86401'], /^admin: --ttl must be whole seconds from 1 to 86400$/],
    ['a lifetime that is no number', ['token', '--email', 'a@example.com', '--ttl', '1e3'], /^admin: --ttl must be whole seconds/],
  ];

  it.each(refusals)('%s', async (_, args, message, stdin) => {
    const before = await withDb(async ({ db }) => db.select({ id: users.id, updatedAt: users.updatedAt }).from(users));
    const run = await admin(args, stdin === undefined ? {} : { stdin });
    expect(run.code).toBe(2);
    expect(run.stdout).toEqual([]);
    expect(run.stderr).toHaveLength(1);
    expect(run.stderr[0]).toMatch(message);
    expect(await withDb(async ({ db }) => db.select({ id: users.id, updatedAt: users.updatedAt }).from(users))).toEqual(before);
  }, SLOW_MS);

  it('an email already taken (the users rule: unique whatever its case)', async () => {
    const email = unique('taken');
    expect((await admin(['create', '--email', email, '--name', 'First'])).code).toBe(0);
    const run = await admin(['create', '--email', email.toUpperCase(), '--name', 'Second']);
    expect(run).toMatchObject({ code: 2, stdout: [], stderr: ['admin: A user with this email already exists. (email: already exists)'] });
  }, SLOW_MS);

  it('a database without this version\'s migrations (nothing applied to it)', async () => {
    if (onPostgres) {
      const serverUrl = process.env.TEST_DATABASE_URL ?? '';
      const name = `admin_cli_empty_${Math.random().toString(36).slice(2, 10)}`;
      const setup = postgres(serverUrl, { max: 1, onnotice: () => {} });
      await setup.unsafe(`create database ${name}`);
      await setup.end();
      try {
        const url = withDatabase(serverUrl, name);
        const run = await admin(['create', '--email', 'a@example.com', '--name', 'A'], { env: { ...env, DATABASE_URL: url } });
        expect(run).toMatchObject({ code: 2, stdout: [] });
        expect(run.stderr).toEqual([expect.stringMatching(/^admin: the database lacks \d+ of this version's migrations: run npm run migrate first/)]);
        const check = postgres(url, { max: 1, onnotice: () => {} });
        const tables = await check`select count(*)::int as n from information_schema.tables where table_name = 'users'`;
        await check.end();
        expect(tables[0]?.n).toBe(0);
      } finally {
        await dropDatabase(serverUrl, name);
      }
    } else {
      const absent = join(tmpdir(), `order-service-admin-absent-${Math.random().toString(36).slice(2)}`);
      const run = await admin(['create', '--email', 'a@example.com', '--name', 'A'], { env: { ...env, DATA_DIR: absent } });
      expect(run).toMatchObject({ code: 2, stdout: [] });
      expect(run.stderr).toEqual([`admin: no database in ${absent} (DATA_DIR): start the service once, or run npm run migrate, first`]);
      expect(existsSync(absent)).toBe(false);
    }
  }, SLOW_MS);

  it('an in-memory database, which no other process shares', async () => {
    const run = await admin(['token', '--email', 'a@example.com'], { env: { ...env, DATABASE_URL: 'memory://' } });
    expect(run).toMatchObject({ code: 2, stdout: [] });
    expect(run.stderr[0]).toMatch(/^admin: DATABASE_URL=memory:\/\/ keeps nothing between processes/);
  });

  it('a configuration the service would refuse (a short JWT_SECRET): no token', async () => {
    const run = await admin(['token', '--email', 'a@example.com'], { env: { ...env, JWT_SECRET: 'short' } });
    expect(run).toMatchObject({ code: 2, stdout: [], stderr: [expect.stringMatching(/^admin: invalid configuration: JWT_SECRET: must be at least 32 bytes$/)] });
  });
});

describe('admin fails plainly when the database cannot be reached', () => {
  it('one line naming the cause, exit 1, no stack', async () => {
    const run = await admin(['reset-password', '--email', 'a@example.com'], { env: { ...env, DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/none', DATABASE_CONNECT_TIMEOUT_MS: '2000' } });
    expect(run).toMatchObject({ code: 1, stdout: [] });
    expect(run.stderr).toEqual([expect.stringMatching(/^admin: failed: .*ECONNREFUSED/)]);
  }, SLOW_MS);
});

describe('npm run admin, as an operator runs it', () => {
  it('prints the token alone on stdout and exits 0; a refusal is one line on stderr and exit 2', async () => {
    const email = unique('npm');
    expect((await admin(['create', '--email', email, '--name', 'Npm'])).code).toBe(0);
    const run = promisify(execFile);
    const processEnv = { PATH: process.env.PATH, ...env };
    const { stdout, stderr } = await run('npm', ['run', '--silent', 'admin', '--', 'token', '--email', email, '--ttl', '60'], { cwd: ROOT, env: processEnv });
    expect(stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    expect(stderr).toMatch(/^Access token for admin /);
    const refused = await run('npm', ['run', '--silent', 'admin', '--', 'token', '--email', 'x@example.com', '--bogus'], { cwd: ROOT, env: processEnv }).catch(
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(refused).toMatchObject({ code: 2, stdout: '', stderr: "admin: Unknown option '--bogus'\n" });
  }, SLOW_MS);
});
