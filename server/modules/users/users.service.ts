import { asc, eq, sql } from 'drizzle-orm';
import { hashPassword, verifyPassword } from '../../auth/password.ts';
import type { Caller } from '../../auth/tokens.ts';
import type { Db } from '../../db/client.ts';
import { orders, users, type UserRow } from '../../db/schema.ts';
import { DomainError } from '../../errors/problems.ts';
import { isUniqueViolation } from '../../lib/db-errors.ts';
import { assertIfMatch } from '../../lib/preconditions.ts';
import type { Preconditions } from '../../trpc/context.ts';
import { iso, toPage, type Page } from '../common.schemas.ts';
import type { User, UserInput, UserListQuery, UserReplace } from './users.schemas.ts';

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

const duplicateEmail = () =>
  new DomainError('duplicate-resource', 'A user with this email already exists.', {
    errors: [{ field: 'email', message: 'already exists' }],
  });

// Customers learn nothing about other users: someone else's id looks like a missing one.
const notFound = (id: number) => new DomainError('not-found', `User ${id} does not exist.`);

const isAdmin = (caller: Caller | null) => caller?.role === 'admin';

function assertMayRead(caller: Caller, id: number): void {
  if (isAdmin(caller) || caller.userId === id) return;
  if (caller.role === 'service' && caller.scopes.has('users:read')) return;
  throw notFound(id);
}

function assertMayWrite(caller: Caller, id: number): void {
  if (isAdmin(caller) || caller.userId === id) return;
  if (caller.role === 'service') throw new DomainError('forbidden', 'Service clients may not change users.');
  throw notFound(id);
}

/** Anonymous callers (and customers) register customers; only an admin chooses another role. */
export async function createUser(db: Db, caller: Caller | null, input: UserInput): Promise<User> {
  const role = input.role ?? 'customer';
  if (role !== 'customer' && !isAdmin(caller)) {
    throw new DomainError('forbidden', `Only an admin may create a user with role "${role}".`);
  }
  const passwordHash = await hashPassword(input.password);
  try {
    const [row] = await db.insert(users).values({ email: input.email, name: input.name, role, passwordHash }).returning();
    if (!row) throw new Error('insert returned no row');
    return toUser(row);
  } catch (error) {
    if (isUniqueViolation(error, 'users_email_lower_key')) throw duplicateEmail();
    throw error;
  }
}

export async function getUser(db: Db, caller: Caller, id: number): Promise<User> {
  assertMayRead(caller, id);
  const [row] = await db.select().from(users).where(eq(users.id, id));
  if (!row) throw notFound(id);
  return toUser(row);
}

export async function listUsers(db: Db, query: UserListQuery): Promise<Page<User>> {
  const rows = await db
    .select()
    .from(users)
    .orderBy(asc(users.id))
    .limit(query.limit + 1)
    .offset((query.page - 1) * query.limit);
  return toPage(rows, query.page, query.limit, toUser);
}

export async function replaceUser(db: Db, caller: Caller, input: UserReplace, preconditions: Preconditions): Promise<User> {
  const { id } = input;
  assertMayWrite(caller, id);
  // Hash before the transaction: the slow part must not hold the row lock.
  const passwordHash = input.password === undefined ? undefined : await hashPassword(input.password);
  try {
    return await db.transaction(async (tx) => {
      const [current] = await tx.select().from(users).where(eq(users.id, id)).for('update');
      if (!current) throw notFound(id);
      assertIfMatch(preconditions, toUser(current));
      const role = input.role ?? current.role;
      if (role !== current.role && !isAdmin(caller)) {
        throw new DomainError('forbidden', 'Only an admin may change a role.');
      }
      const unchanged = current.email === input.email && current.name === input.name && current.role === role;
      if (unchanged && passwordHash === undefined) return toUser(current);
      const [row] = await tx
        .update(users)
        .set({ email: input.email, name: input.name, role, ...(passwordHash ? { passwordHash } : {}), updatedAt: new Date() })
        .where(eq(users.id, id))
        .returning();
      if (!row) throw notFound(id);
      return toUser(row);
    });
  } catch (error) {
    if (isUniqueViolation(error, 'users_email_lower_key')) throw duplicateEmail();
    throw error;
  }
}

export async function deleteUser(db: Db, caller: Caller, id: number, preconditions: Preconditions): Promise<void> {
  assertMayWrite(caller, id);
  await db.transaction(async (tx) => {
    const [current] = await tx.select().from(users).where(eq(users.id, id)).for('update');
    if (!current) throw notFound(id);
    assertIfMatch(preconditions, toUser(current));
    const [owned] = await tx.select({ id: orders.id }).from(orders).where(eq(orders.customerId, id)).limit(1);
    if (owned) throw new DomainError('conflict', `User ${id} has orders and cannot be deleted.`);
    await tx.delete(users).where(eq(users.id, id));
  });
}

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  const [row] = await db
    .select()
    .from(users)
    .where(sql`lower(${users.email}) = lower(${email})`);
  return row;
}

/** Makes sure an admin with this email exists and has this password (start-up bootstrap). */
export async function ensureAdmin(db: Db, email: string, password: string): Promise<{ user: User; created: boolean }> {
  const existing = await findUserByEmail(db, email);
  if (!existing) {
    const [row] = await db
      .insert(users)
      .values({ email, name: 'Administrator', role: 'admin', passwordHash: await hashPassword(password) })
      .onConflictDoNothing()
      .returning();
    if (row) return { user: toUser(row), created: true };
    const raced = await findUserByEmail(db, email);
    if (!raced) throw new Error('admin bootstrap failed');
    return { user: toUser(raced), created: false };
  }
  const passwordMatches = await verifyPassword(password, existing.passwordHash);
  if (existing.role === 'admin' && passwordMatches) return { user: toUser(existing), created: false };
  const [row] = await db
    .update(users)
    .set({ role: 'admin', ...(passwordMatches ? {} : { passwordHash: await hashPassword(password) }), updatedAt: new Date() })
    .where(eq(users.id, existing.id))
    .returning();
  if (!row) throw new Error('admin bootstrap failed');
  return { user: toUser(row), created: false };
}
