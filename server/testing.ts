/**
 * Calling the procedures without HTTP, for tests: a migrated in-memory database and callers of
 * any role on it, built on `createContextInner` and `createCaller`. Same procedures, same auth
 * middleware and rules as REST and `/trpc`; failures arrive as a `TRPCError` whose `cause` is
 * the `DomainError` (problem slug, `errors`).
 *
 * ```ts
 * const harness = await createTestHarness();            // fresh in-memory PGlite, migrated
 * const admin = harness.caller({ role: 'admin' });
 * const mug = await admin.products.create({ sku: 'MUG-1', name: 'Mug', category: 'kitchen', price: 900 });
 * const { user, caller: ada } = await harness.createUser(); // a real customer row, and a caller acting as it
 * await ada.orders.create({ items: [{ product_id: mug.id, quantity: 2 }] });
 * await harness.close();
 * ```
 */
import { randomBytes } from 'node:crypto';
import { hashPassword } from './auth/password.ts';
import type { Caller, Role } from './auth/tokens.ts';
import { openDatabase, type Database, type Db } from './db/client.ts';
import { users } from './db/schema.ts';
import type { User, UserInput } from './modules/users/users.schemas.ts';
import { createCaller } from './router.ts';
import { createContextInner, type Preconditions } from './trpc/context.ts';

/** What `createCaller` returns: every procedure of the router, called directly. */
export type TestCaller = ReturnType<typeof createCaller>;

/** Whom a test caller acts as; what an access token would say. */
export interface TestIdentity {
  role: Role;
  /** The user acted as (customers, admins); default 1. Services have none. */
  userId?: number;
  /**
   * The token's `scope` claim, such as `['products:write']`: a service holds only these (none when
   * absent); a person given them is limited to them, and acts by role alone without.
   */
  scopes?: Iterable<string>;
  name?: string;
}

/** Per-call context that HTTP would otherwise supply. */
export interface TestCallContext {
  /** As from `If-Match`: entity tags, or `['*']`. */
  preconditions?: Preconditions;
  requestId?: string;
}

export interface TestHarness {
  /** The database every caller of this harness shares. */
  readonly database: Database;
  /** Its drizzle handle, to arrange or inspect rows directly. */
  readonly db: Db;
  /** A caller acting as `identity`; `null` is anonymous. Make as many as you like. */
  caller(identity: TestIdentity | null, context?: TestCallContext): TestCaller;
  /**
   * Creates a user with `createTestUser` (a customer unless `role` says otherwise; password
   * TEST_PASSWORD unless given) and returns it with a caller acting as that user.
   */
  createUser(input?: Partial<UserInput>): Promise<{ user: User; caller: TestCaller }>;
  /** Closes the database. */
  close(): Promise<void>;
}

export interface TestHarnessOptions {
  /** A database to use instead of a fresh in-memory PGlite (a PostgreSQL one, say). `close()` closes it. */
  database?: Database;
}

/** The `Caller` a verified token for `identity` would give. */
export function testCallerIdentity(identity: TestIdentity): Caller {
  const scopes = new Set(identity.scopes ?? []);
  if (identity.role === 'service') {
    const clientId = identity.name ?? 'test-service';
    return { sub: clientId, clientId, role: 'service', name: identity.name, scopes };
  }
  const userId = identity.userId ?? 1;
  const granted = identity.scopes === undefined ? 'all' : scopes;
  return { sub: String(userId), userId, role: identity.role, name: identity.name ?? `Test ${identity.role}`, scopes: granted };
}

/** The password of every user `createTestUser` makes unless the input names another. */
export const TEST_PASSWORD = 'correct-horse-battery';
// scrypt costs ~100 ms a hash by design; one hash of TEST_PASSWORD serves every test user.
let testPasswordHash: Promise<string> | undefined;

/**
 * Inserts a user row (a customer unless `role` says otherwise) and returns it as `users.get`
 * answers it. The one user factory of this harness and of the HTTP tests: it arranges data, so
 * it writes the row directly instead of going through the rules `users.create` enforces.
 */
export async function createTestUser(db: Db, input: Partial<UserInput> = {}): Promise<User> {
  const role = input.role ?? 'customer';
  const passwordHash = input.password === undefined ? await (testPasswordHash ??= hashPassword(TEST_PASSWORD)) : await hashPassword(input.password);
  const [row] = await db
    .insert(users)
    .values({
      email: input.email ?? `${role}-${randomBytes(5).toString('hex')}@example.com`,
      name: input.name ?? `Test ${role}`,
      role,
      passwordHash,
    })
    .returning({ id: users.id });
  if (!row) throw new Error('user insert returned no row');
  return createCaller(createContextInner({ db, caller: testCallerIdentity({ role: 'admin' }) })).users.get({ id: row.id });
}

/** A harness on a fresh, migrated in-memory PGlite database (or on `options.database`). */
export async function createTestHarness(options: TestHarnessOptions = {}): Promise<TestHarness> {
  const database = options.database ?? (await openDatabase({ url: 'memory://', dataDir: '' }));
  const caller = (identity: TestIdentity | null, context: TestCallContext = {}): TestCaller =>
    createCaller(
      createContextInner({
        db: database.db,
        caller: identity ? testCallerIdentity(identity) : null,
        ...(context.preconditions ? { preconditions: context.preconditions } : {}),
        ...(context.requestId ? { requestId: context.requestId } : {}),
      }),
    );
  return {
    database,
    db: database.db,
    caller,
    async createUser(input = {}) {
      const user = await createTestUser(database.db, input);
      return { user, caller: caller({ role: user.role, userId: user.id, name: user.name }) };
    },
    close: () => database.close(),
  };
}

/**
 * One caller on a fresh in-memory database; `harness` makes more callers on the same database
 * and closes it: `const { caller, harness } = await createTestCaller({ role: 'admin' })`.
 */
export async function createTestCaller(
  identity: TestIdentity | null,
  options: TestHarnessOptions = {},
): Promise<{ caller: TestCaller; harness: TestHarness }> {
  const harness = await createTestHarness(options);
  return { caller: harness.caller(identity), harness };
}
