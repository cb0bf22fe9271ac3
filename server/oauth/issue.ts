/**
 * What a sign-in earns (the password grant's refresh token, the sign-in form's authorization
 * code) is issued in one transaction that first re-reads the user and the client:
 *
 * - the user `FOR SHARE`, with the password hash the sign-in was checked against: a password
 *   change (which locks the row `FOR UPDATE` and revokes the user's grants) either happened
 *   before, and the changed hash refuses the grant, or waits for it and then revokes what it
 *   issued; a deleted user refuses it likewise;
 * - the client `FOR KEY SHARE`: a client deleted meanwhile refuses the grant (never a foreign key
 *   violation on the insert), and a deletion under way waits and then removes what was issued.
 */
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { transaction, type UnitOfWork } from '../db/unit-of-work.ts';
import { oauthClients } from '../db/schema.ts';
import { lockSignedInUser, type UserRecord } from '../modules/users/users.service.ts';

/** Who signed in, and the password hash their password was checked against. */
export interface SignedIn {
  user: { id: number };
  passwordHash: string;
}

export type Issued<T> = { ok: true; user: UserRecord; issued: T } | { ok: false; refused: 'user' | 'client' };

export function issueForSignIn<T>(db: Db, signedIn: SignedIn, clientId: string, issue: (tx: UnitOfWork, user: UserRecord) => Promise<T>): Promise<Issued<T>> {
  return transaction(db, async (tx): Promise<Issued<T>> => {
    const user = await lockSignedInUser(tx, { id: signedIn.user.id, passwordHash: signedIn.passwordHash });
    if (!user) return { ok: false, refused: 'user' };
    if (!(await lockClient(tx, clientId))) return { ok: false, refused: 'client' };
    return { ok: true, user, issued: await issue(tx, user) };
  });
}

/**
 * The client's row `FOR KEY SHARE`, taken first by every transaction that issues to a client: a
 * deletion (which locks the row `FOR UPDATE`, then removes the client's codes and tokens) then
 * either waits for the grant and removes what it issued, or went first, and the grant finds no
 * client (false). Taken after a code's or token's row lock instead, the two would wait on each
 * other (a deadlock, which PostgreSQL ends by failing one of them).
 */
export async function lockClient(tx: UnitOfWork, clientId: string): Promise<boolean> {
  const [client] = await tx.select({ id: oauthClients.id }).from(oauthClients).where(eq(oauthClients.id, clientId)).for('key share');
  return client !== undefined;
}
