/**
 * Authorization codes (RFC 6749 section 4.1.2, RFC 7636): random, single-use, short-lived, kept
 * as a hash and bound to the client, the redirect URI, the user, the PKCE challenge and the
 * scope. A redeemed code remembers the refresh-token family it started, so that presenting it
 * again can revoke what it issued (RFC 6749 section 4.1.2).
 */
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import type { UnitOfWork } from '../db/unit-of-work.ts';
import { oauthAuthorizationCodes } from '../db/schema.ts';
import { hashSecret, newSecret } from '../auth/secrets.ts';

export interface CodeGrant {
  clientId: string;
  userId: number;
  redirectUri: string;
  codeChallenge: string;
  scope: string;
}

export async function createCode(db: Db, grant: CodeGrant, ttlSeconds: number): Promise<string> {
  const code = newSecret();
  await db.insert(oauthAuthorizationCodes).values({
    codeHash: hashSecret(code),
    ...grant,
    expiresAt: sql`now() + make_interval(secs => ${ttlSeconds})`,
  });
  return code;
}

export interface CodeRow extends CodeGrant {
  expired: boolean;
  used: boolean;
  familyId: string | null;
}

/** The code's row, locked until the transaction ends: one code is redeemed at most once. */
export async function lockCode(tx: UnitOfWork, code: string): Promise<CodeRow | undefined> {
  const [row] = await tx
    .select({
      clientId: oauthAuthorizationCodes.clientId,
      userId: oauthAuthorizationCodes.userId,
      redirectUri: oauthAuthorizationCodes.redirectUri,
      codeChallenge: oauthAuthorizationCodes.codeChallenge,
      scope: oauthAuthorizationCodes.scope,
      expired: sql<boolean>`${oauthAuthorizationCodes.expiresAt} <= now()`,
      used: sql<boolean>`${oauthAuthorizationCodes.usedAt} is not null`,
      familyId: oauthAuthorizationCodes.familyId,
    })
    .from(oauthAuthorizationCodes)
    .where(eq(oauthAuthorizationCodes.codeHash, hashSecret(code)))
    .for('update');
  return row;
}

export async function markCodeUsed(tx: UnitOfWork, code: string, familyId: string): Promise<void> {
  await tx.update(oauthAuthorizationCodes).set({ usedAt: sql`now()`, familyId }).where(eq(oauthAuthorizationCodes.codeHash, hashSecret(code)));
}
