import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { JwksSettings } from '../../server/auth/jwks.ts';
import { TokenService, type Role } from '../../server/auth/tokens.ts';
import { buildApp, type AppOptions } from '../../server/app.ts';
import type { Database, Db } from '../../server/db/client.ts';
import type { User } from '../../server/modules/users/users.schemas.ts';
import { createTestUser } from '../../server/testing.ts';
import { createTestDatabase } from './db.ts';
import { useFixture } from './fixture.ts';

export { TEST_PASSWORD } from '../../server/testing.ts';

export const TEST_JWT = {
  secret: 'test-secret-that-is-at-least-32-bytes-long!',
  issuer: 'order-service',
  audience: 'order-service-api',
  accessTokenTtlSeconds: 900,
};

/** A user as the API answers it, with an access token to act as it. */
export type TestUser = User & { token: string };

export interface TestApp {
  app: FastifyInstance;
  database: Database;
  db: Db;
  tokens: TokenService;
  admin: TestUser;
  /** Inserts a user straight into the database (password TEST_PASSWORD) and mints its token. */
  createUser(role?: 'customer' | 'admin', email?: string): Promise<TestUser>;
  /** A service (client credentials) token with the given scopes. */
  serviceToken(scopes: string[]): Promise<string>;
  /** `app.inject` with `Authorization: Bearer <token>` when a token is given. */
  request(options: InjectOptions & { token?: string }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** The shared user factory (server/testing.ts `createTestUser`), plus a token for HTTP calls. */
export async function createUserRow(db: Db, tokens: TokenService, role: User['role'] = 'customer', email?: string): Promise<TestUser> {
  const user = await createTestUser(db, { role, ...(email === undefined ? {} : { email }) });
  const token = await tokens.mint({ sub: String(user.id), role, name: user.name });
  return { ...user, token };
}

/**
 * One migrated database and one app per test file: PGlite takes seconds to start. `oauth` settings
 * replace the defaults below (test/oauth/ passes small limits); `corsOrigins` lets a browser app on
 * another origin call it (test/browser/storefront.test.ts); `webhooks` holds endpoints to its rules
 * (test/api/webhooks.test.ts).
 */
export async function createTestApp(
  options: { oauth?: AppOptions['oauth']; jwks?: JwksSettings; http?: AppOptions['http']; corsOrigins?: AppOptions['corsOrigins']; webhooks?: AppOptions['webhooks'] } = {},
): Promise<TestApp> {
  const database = await createTestDatabase();
  // `jwks`: also accept an external authorization server's tokens (test/api/jwks.test.ts).
  const tokens = new TokenService({ ...TEST_JWT, jwks: options.jwks });
  // A limit no suite reaches; test/api/rate-limit.test.ts builds its own app with a small one.
  // The same for /oauth's own limit (20 a minute per address), which every test shares here.
  const oauth = { rateLimit: { max: 1_000_000, timeWindow: '1 minute' }, ...options.oauth };
  // No delivery worker unless asked for: webhook tests drive one of their own (`deliverDue()`).
  const webhooks = { worker: false as const, ...options.webhooks };
  const app = await buildApp({ database, tokens, rateLimit: { max: 1_000_000, timeWindow: '1 minute' }, oauth, webhooks, ...(options.http ? { http: options.http } : {}), ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}) });
  await app.ready();
  const admin = await createUserRow(database.db, tokens, 'admin');
  return {
    app,
    database,
    db: database.db,
    tokens,
    admin,
    createUser: (role, email) => createUserRow(database.db, tokens, role, email),
    serviceToken: (scopes) => tokens.mint({ sub: 'client-test', role: 'service' as Role, scope: scopes.join(' ') }),
    request: ({ token, headers, ...options }) =>
      app.inject({ ...options, headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } }),
    close: () => app.close(),
  };
}

type TestAppOptions = NonNullable<Parameters<typeof createTestApp>[0]>;

/**
 * The test file's app (docs/testing.md#a-test-files-app): built by `createTestApp(options)` in a
 * `beforeAll` and closed in an `afterAll` that this registers; the handle answered stands for it
 * from the first hook on, so tests and helpers read `t.app`, `t.admin`, `t.request(...)` as
 * before. Call it at the top of the file, or of a `describe` for an app of its own there. Options
 * that need the file's own set-up first (a key server's address) are given as a function, called
 * when the app is built.
 */
export const useTestApp = (options: TestAppOptions | (() => TestAppOptions) = {}): TestApp =>
  useFixture('the test app (useTestApp)', () => createTestApp(typeof options === 'function' ? options() : options));
