/**
 * Signing a person in with email and password (the login form and the password grant), with a
 * backoff in two buckets, both kept in the database (`sign_in_failures`, shared by every instance):
 *
 * - per account and client address (an IPv6 client by its /64): after `backoff.freeFailures`
 *   failures (5), each further attempt from that address waits 1 s, 2 s, 4 s ... up to
 *   `backoff.maxDelayMs` (60 s) after each further failure;
 * - per account, from every address together: the same doubling after `accountBackoff.freeFailures`
 *   (50), up to `accountBackoff.maxDelayMs` (5 minutes). While only this bucket is blocked, an
 *   address without recent failures on the account still has its password checked, so an
 *   attacker cannot keep the real user out by failing on purpose from elsewhere.
 *
 * An attempt is reserved (counted as a failure) before its password is checked, in one
 * transaction holding both buckets' rows, so parallel guesses cannot all pass a check that has not
 * counted the others yet. A success takes its attempt back: the address's bucket is cleared and the
 * account's count goes down by the one attempt (failures from elsewhere stay counted). Failures
 * older than `forgetAfterMs` (15 minutes) are forgotten.
 *
 * An account is the user the email names as the database compares emails (`lower()` on both
 * sides), keyed by the user's id, so every spelling that signs in as a user counts in that user's
 * buckets; an email without a user is keyed by the email itself (lower-cased). Usernames outside
 * printable ASCII are refused unchecked: no email the service accepts holds one. Keys are HMACs,
 * so the table holds no email, user id or address; the answers are the same whether or not the
 * email exists.
 */
import { createHmac } from 'node:crypto';
import { and, eq, lte, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { signInFailures } from '../db/schema.ts';
import { addressKey } from '../lib/client-address.ts';
import { findSignInAccount, passwordMatches, type UserRecord } from '../modules/users/users.service.ts';
import type { SignInBackoffSettings } from './settings.ts';

export type SignInResult =
  /** `passwordHash`: the hash the password was checked against, for the grant's re-check. */
  | { ok: true; user: UserRecord; passwordHash: string }
  /** `retryAfterSeconds`: refused unchecked, the account is waiting out its backoff. */
  | { ok: false; retryAfterSeconds?: number };

/** The neutral words of a failed sign-in: they never tell whether the email exists. */
export const WRONG_CREDENTIALS = 'The email or password is incorrect.';
export const waitMessage = (seconds: number) =>
  `Too many failed sign-ins for this email: try again in ${seconds} second${seconds === 1 ? '' : 's'}.`;

/** An email as the service accepts one: printable ASCII, no space (RFC 5321's 254 plus room). */
const USERNAME = /^[\x21-\x7e]{1,320}$/;

/** The longest exponent of the doubling: 2^20 times the base is beyond any sensible cap. */
const MAX_DOUBLINGS = 20;

/** The wait after the `failures`th failure in a row, if any. */
export function delayAfter(failures: number, backoff: SignInBackoffSettings): number | undefined {
  if (failures < backoff.freeFailures) return undefined;
  return Math.min(backoff.baseDelayMs * 2 ** Math.min(failures - backoff.freeFailures, MAX_DOUBLINGS), backoff.maxDelayMs);
}

interface Bucket {
  key: string;
  /** Failures in a row, 0 when the last one is forgotten. */
  failures: number;
  /** How long attempts still wait, 0 when they need not. */
  waitMs: number;
}

type Reservation = { ok: true } | { ok: false; waitMs: number };

export class SignIn {
  constructor(
    private readonly db: Db,
    private readonly keyMaterial: Buffer,
    private readonly backoff: SignInBackoffSettings,
    private readonly accountBackoff: SignInBackoffSettings,
  ) {}

  private hmac(text: string): string {
    return createHmac('sha256', this.keyMaterial).update(text).digest('base64url');
  }

  /** The row keys of an account (a user id, or an email no user has) and of it with a client address. */
  keys(account: { userId: number } | { email: string }, clientAddress: string): { account: string; pair: string } {
    const name = 'userId' in account ? `user:${account.userId}` : `email:${account.email.toLowerCase()}`;
    return { account: this.hmac(`account\n${name}`), pair: this.hmac(`account+address\n${name}\n${addressKey(clientAddress)}`) };
  }

  async signIn(email: string, password: string, clientAddress: string): Promise<SignInResult> {
    if (!USERNAME.test(email)) return { ok: false };
    const account = await findSignInAccount({ db: this.db, email });
    const keys = this.keys(account ? { userId: account.user.id } : { email }, clientAddress);
    const reservation = await this.reserve(keys);
    if (!reservation.ok) return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(reservation.waitMs / 1000)) };
    // An unknown email costs the same scrypt work as a wrong password (a dummy hash is checked).
    if (!(await passwordMatches(account, password)) || !account) return { ok: false };
    await this.succeeded(keys);
    return { ok: true, user: account.user, passwordHash: account.passwordHash };
  }

  /**
   * Counts the attempt in both buckets unless it must wait, in one transaction: the account's row
   * is locked first, then the pair's (every attempt takes them in that order).
   */
  private reserve(keys: { account: string; pair: string }): Promise<Reservation> {
    return this.db.transaction(async (tx): Promise<Reservation> => {
      const account = await lockBucket(tx, keys.account, this.accountBackoff);
      const pair = await lockBucket(tx, keys.pair, this.backoff);
      if (pair.waitMs > 0) return { ok: false, waitMs: pair.waitMs };
      // The account waits, but an address that has not failed on it lately is still heard.
      if (account.waitMs > 0 && pair.failures > 0) return { ok: false, waitMs: account.waitMs };
      await countFailure(tx, pair, this.backoff);
      await countFailure(tx, account, this.accountBackoff);
      return { ok: true };
    });
  }

  /** A sign-in takes its reserved attempt back: the address starts afresh, the account loses one failure. */
  private async succeeded(keys: { account: string; pair: string }): Promise<void> {
    const t = signInFailures;
    const { freeFailures } = this.accountBackoff;
    await this.db.transaction(async (tx) => {
      await tx.delete(t).where(eq(t.accountKey, keys.pair));
      await tx
        .update(t)
        .set({
          failures: sql`greatest(${t.failures} - 1, 0)`,
          blockedUntil: sql`case when ${t.failures} - 1 >= ${freeFailures} then ${t.blockedUntil} else null end`,
        })
        .where(eq(t.accountKey, keys.account));
      await tx.delete(t).where(and(eq(t.accountKey, keys.account), lte(t.failures, 0)));
    });
  }
}

/** The bucket's row, created if absent and locked until the transaction ends (the upsert locks it). */
async function lockBucket(tx: Db, key: string, backoff: SignInBackoffSettings): Promise<Bucket> {
  const t = signInFailures;
  const [row] = await tx
    .insert(t)
    .values({ accountKey: key, failures: 0, lastFailureAt: sql`now()`, blockedUntil: null })
    .onConflictDoUpdate({ target: t.accountKey, set: { failures: sql`${t.failures}` } })
    .returning({
      failures: t.failures,
      forgotten: sql<boolean>`${t.lastFailureAt} < now() - make_interval(secs => ${backoff.forgetAfterMs / 1000})`,
      waitMs: sql<string | number>`greatest(0, coalesce(extract(epoch from (${t.blockedUntil} - now())) * 1000, 0))`,
    });
  if (!row) throw new Error('the sign-in failure row was neither inserted nor updated');
  return { key, failures: row.forgotten ? 0 : row.failures, waitMs: Number(row.waitMs) || 0 };
}

/** One more failure in a row; from the `freeFailures`th on, the next attempt waits (never less than it already does). */
async function countFailure(tx: Db, bucket: Bucket, backoff: SignInBackoffSettings): Promise<void> {
  const t = signInFailures;
  const failures = bucket.failures + 1;
  const delayMs = delayAfter(failures, backoff);
  const until = delayMs === undefined ? null : sql`now() + make_interval(secs => ${delayMs / 1000})`;
  await tx
    .update(t)
    .set({
      failures,
      lastFailureAt: sql`now()`,
      blockedUntil: until === null ? sql`case when ${t.blockedUntil} > now() then ${t.blockedUntil} else null end` : sql`greatest(${t.blockedUntil}, ${until})`,
    })
    .where(eq(t.accountKey, bucket.key));
}
