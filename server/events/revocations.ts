/**
 * What ends a live stream before its token expires (docs/api.md#live-updates): its user deleted,
 * or the refresh-token family of the sign-in that earned its token revoked (the token names it in
 * `sid`). Access tokens themselves stay stateless (docs/api.md#access-tokens); only a stream,
 * which outlives the request that checked its token, is held to them.
 *
 * Each is NOTIFYed on REVOCATIONS_CHANNEL in the transaction that makes it, so every instance
 * hears of it once it commits, and never of one rolled back; the hub (live.ts) ends the streams
 * it names. A stream also checks when it starts (`revokedHolder`), after it is subscribed: a
 * revocation committed in between is in the table or heard, and a stream that reconnects after
 * a lost LISTEN (which ends them all) is checked again.
 */
import { and, eq, isNotNull, sql } from 'drizzle-orm';
import type { Caller } from '../auth/tokens.ts';
import type { Db } from '../db/client.ts';
import type { UnitOfWork } from '../db/unit-of-work.ts';
import { oauthRefreshTokens, users } from '../db/schema.ts';

export const REVOCATIONS_CHANNEL = 'order_service_revocations';

/** A user deleted, a user's every grant revoked (a new password), or one family revoked. */
export type Revocation = { kind: 'user'; userId: number } | { kind: 'grants'; userId: number } | { kind: 'family'; family: string };

const textOf = (revocation: Revocation): string => (revocation.kind === 'family' ? `family:${revocation.family}` : `${revocation.kind}:${revocation.userId}`);

/** A notification's payload as a revocation; undefined for anything else. */
export function parseRevocation(payload: string): Revocation | undefined {
  const colon = payload.indexOf(':');
  const kind = payload.slice(0, colon);
  const rest = payload.slice(colon + 1);
  if (colon < 0 || rest === '') return undefined;
  if (kind === 'family') return { kind, family: rest };
  const userId = Number(rest);
  if ((kind === 'user' || kind === 'grants') && Number.isSafeInteger(userId)) return { kind, userId };
  return undefined;
}

/** Tells every instance of `revocation` once `tx` commits (nothing if it rolls back). */
export async function notifyRevocation(tx: UnitOfWork, revocation: Revocation): Promise<void> {
  await tx.execute(sql`select pg_notify(${REVOCATIONS_CHANNEL}, ${textOf(revocation)})`);
}

/**
 * Why `caller`'s token may no longer hold a stream: its user is gone (`deleted`), or its family
 * has a revoked token (`revoked`: revocation revokes a family's every live token). Undefined when
 * neither, and for a service client, whose tokens come from no sign-in.
 */
export async function revokedHolder(db: Db, caller: Caller): Promise<'deleted' | 'revoked' | undefined> {
  if (caller.role === 'service') return undefined;
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.id, caller.userId));
  if (!user) return 'deleted';
  if (caller.family === undefined) return undefined;
  const [revoked] = await db
    .select({ family: oauthRefreshTokens.familyId })
    .from(oauthRefreshTokens)
    .where(and(eq(oauthRefreshTokens.familyId, caller.family), eq(oauthRefreshTokens.userId, caller.userId), isNotNull(oauthRefreshTokens.revokedAt)))
    .limit(1);
  return revoked ? 'revoked' : undefined;
}
