/**
 * Expired authorization codes, refresh tokens and forgotten sign-in failures are deleted in the
 * background, as every purge deletes (server/db/purge.ts): in batches, skipping rows a request
 * holds (`FOR UPDATE SKIP LOCKED`), so the purge never waits on or blocks a request.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { oauthAuthorizationCodes, oauthRefreshTokens, signInFailures } from '../db/schema.ts';
import { deleteInBatches } from '../db/purge.ts';
import type { OAuthSettings } from './settings.ts';

/**
 * Deletes what can no longer serve: unused codes past their expiry; used codes once the refresh
 * tokens they issued have expired too (until then a replayed code still revokes its family);
 * refresh tokens past their expiry; sign-in failures old enough to be forgotten and no longer
 * blocking. Returns how many rows it deleted.
 */
export async function purgeExpiredGrants(db: Db, settings: Pick<OAuthSettings, 'refreshTokenTtlDays' | 'backoff' | 'accountBackoff'>): Promise<number> {
  const forgetAfterMs = Math.max(settings.backoff.forgetAfterMs, settings.accountBackoff.forgetAfterMs);
  const codes = oauthAuthorizationCodes;
  const refresh = oauthRefreshTokens;
  const failures = signInFailures;
  const counts = [
    await deleteInBatches(
      db,
      codes,
      sql`(${codes.usedAt} is null and ${codes.expiresAt} < now()) or ${codes.expiresAt} < now() - make_interval(days => ${settings.refreshTokenTtlDays})`,
    ),
    await deleteInBatches(db, refresh, sql`${refresh.expiresAt} < now()`),
    await deleteInBatches(
      db,
      failures,
      sql`${failures.lastFailureAt} < now() - make_interval(secs => ${forgetAfterMs / 1000}) and (${failures.blockedUntil} is null or ${failures.blockedUntil} < now())`,
    ),
  ];
  return counts.reduce((a, b) => a + b, 0);
}
