/**
 * Expired authorization codes, refresh tokens and forgotten sign-in failures are deleted in the
 * background (the pattern of the idempotency key purge): in batches, skipping rows a request holds
 * (`FOR UPDATE SKIP LOCKED`), so the purge never waits on or blocks a request.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { oauthAuthorizationCodes, oauthRefreshTokens, signInFailures } from '../db/schema.ts';
import type { OAuthSettings } from './settings.ts';

const PURGE_BATCH = 1000;

/** Both drivers report a DELETE's row count, under different names. */
function rowCount(result: unknown): number {
  const r = result as { count?: unknown; affectedRows?: unknown };
  if (typeof r.count === 'number') return r.count;
  if (typeof r.affectedRows === 'number') return r.affectedRows;
  return 0;
}

async function purgeWhere(db: Db, table: typeof oauthAuthorizationCodes | typeof oauthRefreshTokens | typeof signInFailures, where: SQL): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await db.execute(sql`
      delete from ${table} where ctid in (
        select ctid from ${table} where ${where} limit ${PURGE_BATCH} for update skip locked)`);
    const count = rowCount(deleted);
    total += count;
    if (count < PURGE_BATCH) return total;
  }
}

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
    await purgeWhere(
      db,
      codes,
      sql`(${codes.usedAt} is null and ${codes.expiresAt} < now()) or ${codes.expiresAt} < now() - make_interval(days => ${settings.refreshTokenTtlDays})`,
    ),
    await purgeWhere(db, refresh, sql`${refresh.expiresAt} < now()`),
    await purgeWhere(
      db,
      failures,
      sql`${failures.lastFailureAt} < now() - make_interval(secs => ${forgetAfterMs / 1000}) and (${failures.blockedUntil} is null or ${failures.blockedUntil} < now())`,
    ),
  ];
  return counts.reduce((a, b) => a + b, 0);
}
