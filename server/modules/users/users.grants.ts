/**
 * What a user has granted OAuth clients: refresh tokens and authorization codes not yet redeemed.
 * Deleting the user removes them (foreign keys cascade); a new password ends them here, in the
 * transaction that changes it, so whoever signed in with the old password loses access at their
 * next refresh (access tokens are stateless and expire on their own).
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { UnitOfWork } from '../../db/unit-of-work.ts';
import { notifyRevocation } from '../../events/revocations.ts';
import { oauthAuthorizationCodes, oauthRefreshTokens } from '../../db/schema.ts';

export async function revokeUserGrants(tx: UnitOfWork, userId: number): Promise<void> {
  await tx
    .update(oauthRefreshTokens)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(oauthRefreshTokens.userId, userId), isNull(oauthRefreshTokens.revokedAt)));
  await tx.delete(oauthAuthorizationCodes).where(and(eq(oauthAuthorizationCodes.userId, userId), isNull(oauthAuthorizationCodes.usedAt)));
  // Every family of the user is revoked: the live streams held with their tokens end (docs/api.md#live-updates).
  await notifyRevocation(tx, { kind: 'grants', userId });
}
