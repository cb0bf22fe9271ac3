/**
 * Refresh tokens (RFC 6749 sections 1.5 and 6, RFC 9700 section 4.14): opaque, random, stored
 * as a hash, rotated on every use. All tokens descending from one grant (a code exchange or a
 * password sign-in) form a family; a token presented after it was used means two parties hold
 * it (the client and a thief), so the whole family is revoked.
 */
import { randomUUID } from 'node:crypto';
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { transaction, type UnitOfWork } from '../db/unit-of-work.ts';
import { oauthRefreshTokens } from '../db/schema.ts';
import { hashSecret, newSecret } from '../auth/secrets.ts';
import { notifyRevocation } from '../events/revocations.ts';

export const newFamilyId = (): string => randomUUID();

const DAY_MS = 24 * 3600 * 1000;

/** Issues a refresh token of `familyId`; answers the token (only its hash is kept). */
export async function issueRefreshToken(
  tx: Db,
  grant: { familyId: string; clientId: string; userId: number; scope: string; ttlDays: number },
): Promise<string> {
  const token = newSecret();
  await tx.insert(oauthRefreshTokens).values({
    tokenHash: hashSecret(token),
    familyId: grant.familyId,
    clientId: grant.clientId,
    userId: grant.userId,
    scope: grant.scope,
    expiresAt: new Date(Date.now() + grant.ttlDays * DAY_MS),
  });
  return token;
}

/**
 * Revokes every live token of a family (those already revoked keep their time), and ends the live
 * streams held with its access tokens once `tx` commits (docs/api.md#live-updates).
 */
export async function revokeFamily(tx: UnitOfWork, familyId: string): Promise<void> {
  await tx
    .update(oauthRefreshTokens)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(oauthRefreshTokens.familyId, familyId), isNull(oauthRefreshTokens.revokedAt)));
  await notifyRevocation(tx, { kind: 'family', family: familyId });
}

export interface RefreshTokenRow {
  familyId: string;
  clientId: string;
  userId: number;
  scope: string;
  expired: boolean;
  used: boolean;
  revoked: boolean;
}

/**
 * The token's row, locked until the transaction ends (`FOR UPDATE`): of two requests presenting
 * one token, the second waits for the first and then sees it used.
 */
export async function lockRefreshToken(tx: UnitOfWork, token: string): Promise<RefreshTokenRow | undefined> {
  const [row] = await tx
    .select({
      familyId: oauthRefreshTokens.familyId,
      clientId: oauthRefreshTokens.clientId,
      userId: oauthRefreshTokens.userId,
      scope: oauthRefreshTokens.scope,
      expired: sql<boolean>`${oauthRefreshTokens.expiresAt} <= now()`,
      used: sql<boolean>`${oauthRefreshTokens.usedAt} is not null`,
      revoked: sql<boolean>`${oauthRefreshTokens.revokedAt} is not null`,
    })
    .from(oauthRefreshTokens)
    .where(eq(oauthRefreshTokens.tokenHash, hashSecret(token)))
    .for('update');
  return row;
}

export async function markUsed(tx: UnitOfWork, token: string): Promise<void> {
  await tx.update(oauthRefreshTokens).set({ usedAt: sql`now()` }).where(eq(oauthRefreshTokens.tokenHash, hashSecret(token)));
}

/**
 * RFC 7009: revokes the token's family if the token was issued to `clientId`. Answers what it
 * found: the token is unknown (or not a refresh token), revoked, or another client's.
 */
export async function revokeRefreshToken(db: Db, token: string, clientId: string): Promise<'revoked' | 'unknown' | 'other-client'> {
  return transaction(db, async (tx) => {
    const row = await lockRefreshToken(tx, token);
    if (!row) return 'unknown';
    if (row.clientId !== clientId) return 'other-client';
    await revokeFamily(tx, row.familyId);
    return 'revoked';
  });
}
