import { asc, eq, sql } from 'drizzle-orm';
import { hashPassword, verifyPassword } from '../../auth/password.ts';
import { insufficientScope, isAdmin, isSelf, mayChangeRole, mayCreateRole, mayReadUser, mayWriteUser } from '../../auth/policy.ts';
import type { Caller } from '../../auth/tokens.ts';
import type { Db } from '../../db/client.ts';
import { transaction, type UnitOfWork } from '../../db/unit-of-work.ts';
import { users } from '../../db/schema.ts';
import { orders } from '../orders/orders.table.ts';
import { DomainError } from '../../errors/problems.ts';
import { isUniqueViolation } from '../../errors/db-errors.ts';
import { parsePatched, patcherFor, type PatchLimits } from '../../lib/patch-documents.ts';
import { assertIfMatch } from '../../lib/preconditions.ts';
import type { Preconditions } from '../../trpc/context.ts';
import { iso, sameMetadata, type Page } from '../common.schemas.ts';
import { listPage, type CursorCodec, type SortTerm } from '../paging.ts';
import { PatchedUserDocument, User, type UserInput, type UserListQuery, type UserPatch, type UserReplace } from './users.schemas.ts';
import { userEvents } from './users.events.ts';
import { notifyRevocation } from '../../events/revocations.ts';
import { revokeUserGrants } from './users.grants.ts';

/**
 * The columns a user is answered with. `password_hash` is not among them: only the queries that
 * verify a password read it (`passwordHashOf`, `findSignInAccount`, `lockSignedInUser`, `ensureAdmin`), so no other path can leak it.
 */
export const userColumns = {
  id: users.id,
  email: users.email,
  name: users.name,
  role: users.role,
  metadata: users.metadata,
  createdAt: users.createdAt,
  updatedAt: users.updatedAt,
};
export type UserRecord = Pick<typeof users.$inferSelect, keyof typeof userColumns>;

export function toUser(row: UserRecord): User {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    metadata: row.metadata,
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

/** Someone else's user looks like a missing one to a customer. */
function assertMayRead(caller: Caller, id: number): void {
  if (!mayReadUser(caller, id)) throw notFound(id);
}

/** The procedure's policy keeps service clients out; a customer's someone else is a missing user. */
function assertMayWrite(caller: Caller, id: number): void {
  if (!mayWriteUser(caller, id)) throw notFound(id);
}

/** Anonymous callers (and customers) register customers; only an admin chooses another role. */
export async function createUser({ db, work, caller, input }: { db: Db; work?: UnitOfWork; caller: Caller | null; input: UserInput }): Promise<User> {
  const role = input.role ?? 'customer';
  if (!mayCreateRole(caller, role)) {
    // An admin whose token is limited by its `scope` claim: the scope is what is missing.
    if (isAdmin(caller)) throw insufficientScope('users:write');
    throw new DomainError('forbidden', `Only an admin may create a user with role "${role}".`);
  }
  const passwordHash = await hashPassword(input.password);
  try {
    return await transaction(work ?? db, async (tx) => {
      const [row] = await tx.insert(users).values({ email: input.email, name: input.name, role, passwordHash, metadata: input.metadata ?? {} }).returning(userColumns);
      if (!row) throw new Error('insert returned no row');
      const user = toUser(row);
      await userEvents.record(tx, { type: 'user.created', object: user });
      return user;
    });
  } catch (error) {
    if (isUniqueViolation(error, 'users_email_lower_key')) throw duplicateEmail();
    throw error;
  }
}

export async function getUser({ db, caller, id }: { db: Db; caller: Caller; id: number }): Promise<User> {
  assertMayRead(caller, id);
  const [row] = await db.select(userColumns).from(users).where(eq(users.id, id));
  if (!row) throw notFound(id);
  return toUser(row);
}

/** Oldest first: by id. */
const userOrder: SortTerm<{ id: number }>[] = [{ column: users.id, kind: 'integer', descending: false, read: (row) => row.id }];

export async function listUsers({ db, query, cursors }: { db: Db; query: UserListQuery; cursors: CursorCodec }): Promise<Page<User>> {
  return listPage({ cursors, binding: 'users', terms: userOrder, query }, (page) => page.rowsOf(db.select(userColumns).from(users).$dynamic()), toUser);
}

/**
 * Locks every admin row and answers their ids. Taken in id order and before the target row, so
 * concurrent demotions and deletions queue instead of deadlocking; under READ COMMITTED a waiting
 * transaction re-reads the rows it waited for, so the second of two concurrent demotions sees
 * the first one's result.
 */
async function lockAdmins(tx: UnitOfWork): Promise<number[]> {
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
async function isAdminRow(tx: UnitOfWork, id: number): Promise<boolean> {
  const [row] = await tx.select({ role: users.role }).from(users).where(eq(users.id, id));
  return row?.role === 'admin';
}

const currentPasswordError = (message: string) =>
  new DomainError('validation-error', `current_password ${message}.`, { errors: [{ field: 'current_password', message }] });

/**
 * Changing one's own email or password takes the current password, so a stolen access token
 * alone cannot take the account over. An admin changing someone else's account needs none.
 */
function needsCurrentPassword(caller: Caller, current: UserRecord, input: UserDocument): boolean {
  return isSelf(caller, current.id) && (input.email !== current.email || input.password !== undefined);
}

/**
 * PUT and PATCH: `documentOf` gives the full writable document from the user as they are (a PUT
 * ignores it, a patch applies to it). It runs twice: on a first read, so that the slow parts
 * (hashing, checking the current password) run before the transaction and never hold a row lock,
 * and again on the locked row, which decides. Nothing changes when the document says what is
 * stored: no event, the same ETag.
 */
async function writeUser(
  { db, caller, id, preconditions }: { db: Db; caller: Caller; id: number; preconditions: Preconditions },
  documentOf: (current: User) => UserDocument,
): Promise<User> {
  assertMayWrite(caller, id);
  const [before] = await db.select(userColumns).from(users).where(eq(users.id, id));
  if (!before) throw notFound(id);
  // A stale tag is 412 before a patch is tried on what the client has not seen (as for orders);
  // the locked row is checked again below.
  assertIfMatch(preconditions, User, toUser(before));
  const first = documentOf(toUser(before));
  const passwordHash = first.password === undefined ? undefined : await hashPassword(first.password);
  const checkedHash = await checkCurrentPassword(db, caller, before, first);
  try {
    return await transaction(db, async (tx) => {
      const demoting = first.role !== undefined && first.role !== 'admin';
      let admins = demoting && (await isAdminRow(tx, id)) ? await lockAdmins(tx) : undefined;
      const [current] = await tx.select(userColumns).from(users).where(eq(users.id, id)).for('update');
      if (!current) throw notFound(id);
      assertIfMatch(preconditions, User, toUser(current));
      const input = documentOf(toUser(current));
      // A patch that reads the password differently from the row as it now is was hashed for
      // another password: the client retries rather than the lock being held while hashing.
      if (input.password !== first.password) throw new DomainError('conflict', `User ${id} changed while being written; send the request again.`);
      // The row may have changed since the check (its password, or the email now differs): the
      // locked row decides, and a hash already verified before the transaction is not verified twice.
      await checkCurrentPassword(tx, caller, current, input, checkedHash);
      const role = input.role ?? current.role;
      if (role !== current.role && !mayChangeRole(caller)) {
        throw new DomainError('forbidden', 'Only an admin may change a role.');
      }
      if (current.role === 'admin' && role !== 'admin') {
        // (Locked here only if it became an admin after the unlocked read above.)
        admins ??= await lockAdmins(tx);
        assertNotLastAdmin(admins, id, 'demoted');
      }
      // PUT replaces the metadata: omitted, it becomes empty.
      const metadata = input.metadata ?? {};
      const unchanged = current.email === input.email && current.name === input.name && current.role === role && sameMetadata(current.metadata, metadata);
      if (unchanged && passwordHash === undefined) return toUser(current);
      const [row] = await tx
        .update(users)
        .set({ email: input.email, name: input.name, role, metadata, ...(passwordHash ? { passwordHash } : {}), updatedAt: new Date() })
        .where(eq(users.id, id))
        .returning(userColumns);
      if (!row) throw notFound(id);
      // A new password signs the user out of every OAuth client at its next refresh.
      if (passwordHash !== undefined) await revokeUserGrants(tx, id);
      const user = toUser(row);
      await userEvents.record(tx, { type: 'user.updated', object: user, previous: toUser(current) });
      return user;
    });
  } catch (error) {
    if (isUniqueViolation(error, 'users_email_lower_key')) throw duplicateEmail();
    throw error;
  }
}

/** The writable document of a user: a PUT body without its `id` (the path names the user). */
type UserDocument = Omit<UserReplace, 'id'>;

export function replaceUser({ db, caller, input, preconditions }: { db: Db; caller: Caller; input: UserReplace; preconditions: Preconditions }): Promise<User> {
  return writeUser({ db, caller, id: input.id, preconditions }, () => input);
}

/** A user has a handful of members and at most 50 metadata pairs: far below these bounds (lib/patch-documents.ts). */
const USER_PATCH_LIMITS: PatchLimits = { operations: 200, nodes: 500, textChars: 64 * 1024, noun: 'user' };

/** PATCH: the patch applies to the user's representation; the result must be a valid PUT body. */
export function patchUser({ db, caller, input, preconditions }: { db: Db; caller: Caller; input: UserPatch; preconditions: Preconditions }): Promise<User> {
  const patch = patcherFor(input, USER_PATCH_LIMITS);
  return writeUser({ db, caller, id: input.id, preconditions }, (current) => parsePatched(PatchedUserDocument, patch(current)));
}

/** The stored password hash of user `id`: read only to verify a password. */
async function passwordHashOf(db: Db, id: number): Promise<string | undefined> {
  const [row] = await db.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, id));
  return row?.passwordHash;
}

/**
 * 422 naming current_password when it is needed and absent or wrong; answers the hash it matched.
 * `verified` is a hash this request has already matched: the same hash is not checked again.
 */
async function checkCurrentPassword(
  db: Db,
  caller: Caller,
  current: UserRecord,
  input: UserDocument,
  verified?: string,
): Promise<string | undefined> {
  if (!needsCurrentPassword(caller, current, input)) return undefined;
  if (input.current_password === undefined) throw currentPasswordError('is required to change your own email or password');
  const hash = await passwordHashOf(db, current.id);
  if (hash === undefined) throw notFound(current.id);
  if (hash !== verified && !(await verifyPassword(input.current_password, hash))) throw currentPasswordError('is incorrect');
  return hash;
}

export async function deleteUser({ db, caller, id, preconditions }: { db: Db; caller: Caller; id: number; preconditions: Preconditions }): Promise<void> {
  assertMayWrite(caller, id);
  await transaction(db, async (tx) => {
    let admins = (await isAdminRow(tx, id)) ? await lockAdmins(tx) : undefined;
    const [current] = await tx.select(userColumns).from(users).where(eq(users.id, id)).for('update');
    if (!current) throw notFound(id);
    assertIfMatch(preconditions, User, toUser(current));
    if (current.role === 'admin') {
      // (Locked here only if it became an admin after the unlocked read above.)
      admins ??= await lockAdmins(tx);
      assertNotLastAdmin(admins, id, 'deleted');
    }
    const [owned] = await tx.select({ id: orders.id }).from(orders).where(eq(orders.customerId, id)).limit(1);
    if (owned) throw new DomainError('conflict', `User ${id} has orders and cannot be deleted.`);
    await tx.delete(users).where(eq(users.id, id));
    await userEvents.record(tx, { type: 'user.deleted', object: toUser(current) });
    // The user's live streams end once this commits, on every instance (docs/api.md#live-updates).
    await notifyRevocation(tx, { kind: 'user', userId: id });
  });
}

const byEmail = (email: string) => sql`lower(${users.email}) = lower(${email})`;

export async function findUserByEmail({ db, email }: { db: Db; email: string }): Promise<UserRecord | undefined> {
  const [row] = await db.select(userColumns).from(users).where(byEmail(email));
  return row;
}

// Verified against when no user has the email, so that answer costs the same scrypt work as a wrong
// password. Made at start (off the event loop), so not even the first such answer takes longer.
const absentUserHash = hashPassword('no user has this email');

/** A sign-in's account: the user and the password hash its password is checked against. */
export interface SignInAccount {
  user: UserRecord;
  passwordHash: string;
}

/**
 * The user with this email, compared as the database folds case (`lower()` on both sides, the
 * same comparison as the unique index), with the hash to check a sign-in against; else undefined.
 */
export async function findSignInAccount({ db, email }: { db: Db; email: string }): Promise<SignInAccount | undefined> {
  const [row] = await db.select({ ...userColumns, passwordHash: users.passwordHash }).from(users).where(byEmail(email));
  if (!row) return undefined;
  const { passwordHash, ...user } = row;
  return { user, passwordHash };
}

/**
 * Whether `password` is the account's. No account costs the same scrypt work as a wrong
 * password, so whether the email exists shows neither in the answer nor in its timing.
 */
export async function passwordMatches(account: SignInAccount | undefined, password: string): Promise<boolean> {
  if (!account) {
    await verifyPassword(password, await absentUserHash);
    return false;
  }
  return verifyPassword(password, account.passwordHash);
}

/**
 * In the transaction that issues a signed-in user's grant: the user, if they still exist and
 * their password hash is still the one the sign-in was checked against, else undefined. The row
 * stays share-locked until the transaction ends, so a password change (which locks it FOR
 * UPDATE) or a deletion waits for the grant and then revokes or removes it, or has already
 * happened and is seen here.
 */
export async function lockSignedInUser(tx: UnitOfWork, { id, passwordHash }: { id: number; passwordHash: string }): Promise<UserRecord | undefined> {
  const [row] = await tx
    .select({ user: userColumns, passwordHash: users.passwordHash })
    .from(users)
    .where(eq(users.id, id))
    .for('share');
  return row && row.passwordHash === passwordHash ? row.user : undefined;
}

/** Makes sure an admin with this email exists and has this password (start-up bootstrap). */
export async function ensureAdmin({ db, email, password }: { db: Db; email: string; password: string }): Promise<{ user: User; created: boolean }> {
  // The one read of a user by email that needs the hash: it verifies the configured password.
  const withHash = () => db.select({ ...userColumns, passwordHash: users.passwordHash }).from(users).where(byEmail(email));
  const [existing] = await withHash();
  if (!existing) {
    const passwordHash = await hashPassword(password);
    const created = await transaction(db, async (tx) => {
      const [row] = await tx.insert(users).values({ email, name: 'Administrator', role: 'admin', passwordHash }).onConflictDoNothing().returning(userColumns);
      if (!row) return undefined;
      const user = toUser(row);
      await userEvents.record(tx, { type: 'user.created', object: user });
      return user;
    });
    if (created) return { user: created, created: true };
    const raced = await findUserByEmail({ db, email });
    if (!raced) throw new Error('admin bootstrap failed');
    return { user: toUser(raced), created: false };
  }
  const passwordMatches = await verifyPassword(password, existing.passwordHash);
  if (existing.role === 'admin' && passwordMatches) return { user: toUser(existing), created: false };
  const passwordHash = passwordMatches ? undefined : await hashPassword(password);
  const row = await transaction(db, async (tx) => {
    const [updated] = await tx
      .update(users)
      .set({ role: 'admin', ...(passwordHash === undefined ? {} : { passwordHash }), updatedAt: new Date() })
      .where(eq(users.id, existing.id))
      .returning(userColumns);
    // A new ADMIN_PASSWORD is a password change like any other: whoever signed in with the old one
    // loses their grants.
    if (updated && passwordHash !== undefined) await revokeUserGrants(tx, updated.id);
    if (updated) await userEvents.record(tx, { type: 'user.updated', object: toUser(updated), previous: toUser(existing) });
    return updated;
  });
  if (!row) throw new Error('admin bootstrap failed');
  return { user: toUser(row), created: false };
}
