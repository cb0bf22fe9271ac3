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

/**
 * Locks every admin row and answers their ids. Taken in id order and before the target row, so
 * concurrent demotions and deletions queue instead of deadlocking; under READ COMMITTED a waiting
 * transaction re-reads the rows it waited for, so the second of two concurrent demotions sees
 * the first one's result.
 */
async function lockAdmins(tx: Db): Promise<number[]> {
  const admins = await tx.select({ id: users.id }).from(users).where(eq(users.role, 'admin')).orderBy(asc(users.id)).for('update');
  return admins.map((admin) => admin.id);
}

/** 409 when removing `id` from the (locked) admins would leave none: the service keeps one. */
function assertNotLastAdmin(admins: number[], id: number, action: 'deleted' | 'demoted'): void {
  if (!admins.some((admin) => admin !== id)) {
    throw new DomainError('conflict', `User ${id} is the last admin and cannot be ${action}: make another user an admin first.`);
  }
}

/** Whether `id` is an admin now (unlocked read: it only decides whether to take the admin lock first). */
async function isAdminRow(tx: Db, id: number): Promise<boolean> {
  const [row] = await tx.select({ role: users.role }).from(users).where(eq(users.id, id));
  return row?.role === 'admin';
}

const currentPasswordError = (message: string) =>
  new DomainError('validation-error', `current_password ${message}.`, { errors: [{ field: 'current_password', message }] });

/**
 * Changing one's own email or password takes the current password, so a stolen access token
 * alone cannot take the account over. An admin changing someone else's account needs none.
 */
function needsCurrentPassword(caller: Caller, current: UserRow, input: UserReplace): boolean {
  return caller.userId === current.id && (input.email !== current.email || input.password !== undefined);
}

export async function replaceUser(db: Db, caller: Caller, input: UserReplace, preconditions: Preconditions): Promise<User> {
  const { id } = input;
  assertMayWrite(caller, id);
  // The slow parts (hashing, checking the current password) run before the transaction so they
  // never hold a row lock; the transaction re-checks that what they relied on still holds.
  const passwordHash = input.password === undefined ? undefined : await hashPassword(input.password);
  const [before] = await db.select().from(users).where(eq(users.id, id));
  if (!before) throw notFound(id);
  const checkedHash = await checkCurrentPassword(caller, before, input);
  try {
    return await db.transaction(async (tx) => {
      const demoting = input.role !== undefined && input.role !== 'admin';
      let admins = demoting && (await isAdminRow(tx, id)) ? await lockAdmins(tx) : undefined;
      const [current] = await tx.select().from(users).where(eq(users.id, id)).for('update');
      if (!current) throw notFound(id);
      assertIfMatch(preconditions, toUser(current));
      if (needsCurrentPassword(caller, current, input) && current.passwordHash !== checkedHash) {
        // The row changed since the check (its password, or the email now differs): check again.
        await checkCurrentPassword(caller, current, input);
      }
      const role = input.role ?? current.role;
      if (role !== current.role && !isAdmin(caller)) {
        throw new DomainError('forbidden', 'Only an admin may change a role.');
      }
      if (current.role === 'admin' && role !== 'admin') {
        // (Locked here only if it became an admin after the unlocked read above.)
        admins ??= await lockAdmins(tx);
        assertNotLastAdmin(admins, id, 'demoted');
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

/** 422 naming current_password when it is needed and absent or wrong; answers the hash it matched. */
async function checkCurrentPassword(caller: Caller, current: UserRow, input: UserReplace): Promise<string | undefined> {
  if (!needsCurrentPassword(caller, current, input)) return undefined;
  if (input.current_password === undefined) throw currentPasswordError('is required to change your own email or password');
  if (!(await verifyPassword(input.current_password, current.passwordHash))) throw currentPasswordError('is incorrect');
  return current.passwordHash;
}

export async function deleteUser(db: Db, caller: Caller, id: number, preconditions: Preconditions): Promise<void> {
  assertMayWrite(caller, id);
  await db.transaction(async (tx) => {
    let admins = (await isAdminRow(tx, id)) ? await lockAdmins(tx) : undefined;
    const [current] = await tx.select().from(users).where(eq(users.id, id)).for('update');
    if (!current) throw notFound(id);
    assertIfMatch(preconditions, toUser(current));
    if (current.role === 'admin') {
      // (Locked here only if it became an admin after the unlocked read above.)
      admins ??= await lockAdmins(tx);
      assertNotLastAdmin(admins, id, 'deleted');
    }
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
