/**
 * Signing a person in with email and password (the login form and the password grant), with a
 * backoff per account: after `freeFailures` failures in a row, each further attempt is refused
 * without checking the password until a delay has passed, 1 s, 2 s, 4 s ... up to `maxDelayMs`.
 * The count is kept in the database under an HMAC of the lower-cased email, for every email tried,
 * whether or not such a user exists: neither the answers nor the table tell which accounts exist.
 * A success resets the count; an attacker can make the real user wait at most `maxDelayMs`.
 */
import { createHmac } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { signInFailures } from '../db/schema.ts';
import { verifyCredentials, type UserRecord } from '../modules/users/users.service.ts';
import type { SignInBackoffSettings } from './settings.ts';

export type SignInResult =
  | { ok: true; user: UserRecord }
  /** `retryAfterSeconds`: refused unchecked, the account is waiting out its backoff. */
  | { ok: false; retryAfterSeconds?: number };

/** The neutral words of a failed sign-in: they never tell whether the email exists. */
export const WRONG_CREDENTIALS = 'The email or password is incorrect.';
export const waitMessage = (seconds: number) =>
  `Too many failed sign-ins for this email: try again in ${seconds} second${seconds === 1 ? '' : 's'}.`;

/** The longest exponent of the doubling: 2^20 times the base is beyond any sensible cap. */
const MAX_DOUBLINGS = 20;

export class SignIn {
  constructor(
    private readonly db: Db,
    private readonly accountKeyMaterial: Buffer,
    private readonly backoff: SignInBackoffSettings,
  ) {}

  /** The row key of an email: an HMAC, so the table holds no email (not even a guessable hash of one). */
  accountKey(email: string): string {
    return createHmac('sha256', this.accountKeyMaterial).update(email.toLowerCase()).digest('base64url');
  }

  async signIn(email: string, password: string): Promise<SignInResult> {
    const key = this.accountKey(email);
    const wait = await this.remainingWaitMs(key);
    if (wait > 0) return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(wait / 1000)) };
    const user = await verifyCredentials({ db: this.db, email, password });
    if (user) {
      await this.db.delete(signInFailures).where(eq(signInFailures.accountKey, key));
      return { ok: true, user };
    }
    await this.recordFailure(key);
    return { ok: false };
  }

  private async remainingWaitMs(key: string): Promise<number> {
    const [row] = await this.db
      .select({ ms: sql<string | number>`greatest(0, extract(epoch from (${signInFailures.blockedUntil} - now())) * 1000)` })
      .from(signInFailures)
      .where(eq(signInFailures.accountKey, key));
    return row ? Number(row.ms) || 0 : 0;
  }

  /**
   * One statement, so concurrent failures each count. Failures older than `forgetAfterMs` start
   * the count again; from the `freeFailures`th failure on, the next attempt waits.
   */
  private async recordFailure(key: string): Promise<void> {
    const { freeFailures, baseDelayMs, maxDelayMs, forgetAfterMs } = this.backoff;
    const t = signInFailures;
    const count = sql`case when ${t.lastFailureAt} < now() - make_interval(secs => ${forgetAfterMs / 1000}) then 1 else ${t.failures} + 1 end`;
    const delayFor = (failures: ReturnType<typeof sql>) =>
      sql`case when ${failures} >= ${freeFailures}
        then now() + make_interval(secs => least(${baseDelayMs} * power(2, least(${failures} - ${freeFailures}, ${MAX_DOUBLINGS})), ${maxDelayMs}) / 1000.0)
        else null end`;
    await this.db
      .insert(t)
      .values({ accountKey: key, failures: 1, lastFailureAt: sql`now()`, blockedUntil: delayFor(sql`1`) })
      .onConflictDoUpdate({ target: t.accountKey, set: { failures: count, lastFailureAt: sql`now()`, blockedUntil: delayFor(count) } });
  }
}
