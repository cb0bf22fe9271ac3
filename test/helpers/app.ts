import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { randomBytes } from 'node:crypto';
import { hashPassword } from '../../server/auth/password.ts';
import { TokenService, type Role } from '../../server/auth/tokens.ts';
import { buildApp } from '../../server/app.ts';
import type { Database, Db } from '../../server/db/client.ts';
import { users } from '../../server/db/schema.ts';
import { createTestDatabase } from './db.ts';

export const TEST_JWT = {
  secret: 'test-secret-that-is-at-least-32-bytes-long!',
  issuer: 'order-service',
  audience: 'order-service-api',
  accessTokenTtlSeconds: 900,
};

export const TEST_PASSWORD = 'correct-horse-battery';
let passwordHash: Promise<string> | undefined;

export interface TestUser {
  id: number;
  email: string;
  name: string;
  role: 'customer' | 'admin';
  token: string;
}

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

export async function createUserRow(db: Db, tokens: TokenService, role: 'customer' | 'admin' = 'customer', email?: string): Promise<TestUser> {
  passwordHash ??= hashPassword(TEST_PASSWORD);
  const [row] = await db
    .insert(users)
    .values({
      email: email ?? `${role}-${randomBytes(5).toString('hex')}@example.com`,
      name: `Test ${role}`,
      role,
      passwordHash: await passwordHash,
    })
    .returning();
  if (!row) throw new Error('user insert failed');
  const token = await tokens.mint({ sub: String(row.id), role, name: row.name });
  return { id: row.id, email: row.email, name: row.name, role, token };
}

/** One migrated database and one app per test file: PGlite takes seconds to start. */
export async function createTestApp(): Promise<TestApp> {
  const database = await createTestDatabase();
  const tokens = new TokenService(TEST_JWT);
  // A limit no suite reaches; test/api/rate-limit.test.ts builds its own app with a small one.
  const app = await buildApp({ database, tokens, rateLimit: { max: 1_000_000, timeWindow: '1 minute' } });
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
