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
 * An attempt is reserved (counted as a failure, and as being checked) before its password is
 * checked, in one transaction holding both buckets' rows, so parallel guesses cannot all pass a
 * check that has not counted the others yet. Its outcome is recorded after the check, and a wait
 * runs from that record, not from the reservation: the check is slow scrypt work (seconds on a
 * loaded host) and must not use up the wait. Past the free failures, a bucket that has an attempt
 * still being checked refuses every other (its wait has not even started), so however the checks
 * and requests are timed, at most the free failures' attempts are checked at once and then one
 * at a time, each followed by its whole wait. A success takes its attempt back: the address's
 * bucket starts afresh and the account's count goes down by the one attempt (failures from
 * elsewhere stay counted). Failures older than `forgetAfterMs` (15 minutes) are forgotten, and
 * with them the attempts still counted as being checked (a process that died during a check
 * holds the others off no longer than that).
 *
 * An account is the user the email names as the database compares emails (`lower()` on both
 * sides), keyed by the user's id, so every spelling that signs in as a user counts in that user's
 * buckets; an email without a user is keyed by the email itself (lower-cased). Usernames outside
 * printable ASCII are refused unchecked: no email the service accepts holds one. Keys are HMACs,
 * so the table holds no email, user id or address; the answers are the same whether or not the
 * email exists.
 */
import { createHmac } from 'node:crypto';
import { eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { transaction } from '../db/unit-of-work.ts';
import { signInFailures } from '../db/schema.ts';
import { addressKey } from '../lib/client-address.ts';
import { findSignInAccount, passwordMatches, type SignInAccount, type UserRecord } from '../modules/users/users.service.ts';
import type { SignInBackoffSettings } from './settings.ts';

export type SignInResult =
  /** `passwordHash`: the hash the password was checked against, for the grant's re-check. */
  | { ok: true; user: UserRecord; passwordHash: string }
  /** `retryAfterSeconds`: refused unchecked, the account is waiting out its backoff. */
  | { ok: false; retryAfterSeconds?: number };

/** The neutral words of a failed sign-in: they never tell whether the email exists. */
export const WRONG_CREDENTIALS = 'The email or password is incorrect.';
/** The refusal of a sign-in whose scope names nothing the person's role can use. */
export const NOTHING_USABLE = 'The scope asks for nothing your role can use.';
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
  /** Failures in a row, counting the attempts still being checked; 0 when the last one is forgotten. */
  failures: number;
  /** Attempts counted whose outcome is not recorded yet; 0 when forgotten. */
  checking: number;
  /** How long attempts still wait after the last recorded failure, 0 when they need not. */
  waitMs: number;
}

/**
 * How long an attempt must wait before this bucket lets its password be checked, 0 if it need not.
 * Past the free failures, an attempt still being checked holds every other off: the wait after
 * it starts only when its failure is recorded, and is at least the delay its count earns.
 */
function waitOf(bucket: Bucket, backoff: SignInBackoffSettings): number {
  if (bucket.checking === 0 || bucket.failures < backoff.freeFailures) return bucket.waitMs;
  return Math.max(bucket.waitMs, delayAfter(bucket.failures, backoff) ?? 0, 1);
}

type Reservation = { ok: true } | { ok: false; waitMs: number };

export class SignIn {
  constructor(
    private readonly db: Db,
    private readonly keyMaterial: Buffer,
    private readonly backoff: SignInBackoffSettings,
    private readonly accountBackoff: SignInBackoffSettings,
    /** Whether the password is the account's (tests pass a check that takes its time). */
    private readonly checkPassword: (account: SignInAccount | undefined, password: string) => Promise<boolean> = passwordMatches,
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
    let matches = false;
    try {
      // An unknown email costs the same scrypt work as a wrong password (a dummy hash is checked).
      matches = await this.checkPassword(account, password);
    } finally {
      // Recorded even when the check throws, so no attempt stays "being checked".
      await this.settle(keys, matches && account !== undefined);
    }
    if (!matches || !account) return { ok: false };
    return { ok: true, user: account.user, passwordHash: account.passwordHash };
  }

  /**
   * Counts the attempt in both buckets, as a failure being checked, unless it must wait, in one
   * transaction: the account's row is locked first, then the pair's (every transaction here takes
   * them in that order).
   */
  private reserve(keys: { account: string; pair: string }): Promise<Reservation> {
    return transaction(this.db, async (tx): Promise<Reservation> => {
      const account = await lockBucket(tx, keys.account, this.accountBackoff);
      const pair = await lockBucket(tx, keys.pair, this.backoff);
      const pairWait = waitOf(pair, this.backoff);
      if (pairWait > 0) return { ok: false, waitMs: pairWait };
      // The account waits, but an address that has not failed on it lately is still heard.
      const accountWait = waitOf(account, this.accountBackoff);
      if (accountWait > 0 && pair.failures > 0) return { ok: false, waitMs: accountWait };
      await countAttempt(tx, pair);
      await countAttempt(tx, account);
      return { ok: true };
    });
  }

  /**
   * Records the outcome of a reserved attempt once its password is checked. A failure (already
   * counted) starts the wait its count earns from now. A sign-in takes its attempt back: the
   * address starts afresh, the account loses the one failure.
   */
  private settle(keys: { account: string; pair: string }, signedIn: boolean): Promise<void> {
    return transaction(this.db, async (tx) => {
      const account = await lockCounted(tx, keys.account, this.accountBackoff);
      const pair = await lockCounted(tx, keys.pair, this.backoff);
      if (signedIn) {
        if (account) {
          const failures = account.failures - 1;
          const keepWait = failures >= this.accountBackoff.freeFailures;
          await settleBucket(tx, account, { failures, blockedUntil: keepWait ? sql`${signInFailures.blockedUntil}` : null });
        }
        if (pair) await settleBucket(tx, pair, { failures: 0, blockedUntil: null });
        return;
      }
      if (account) await settleBucket(tx, account, { failures: account.failures, blockedUntil: waitFromNow(account, this.accountBackoff), failedNow: true });
      if (pair) await settleBucket(tx, pair, { failures: pair.failures, blockedUntil: waitFromNow(pair, this.backoff), failedNow: true });
    });
  }
}

const bucketColumns = (backoff: SignInBackoffSettings) => {
  const t = signInFailures;
  return {
    failures: t.failures,
    checking: t.checking,
    forgotten: sql<boolean>`${t.lastFailureAt} < now() - make_interval(secs => ${backoff.forgetAfterMs / 1000})`,
    waitMs: sql<string | number>`greatest(0, coalesce(extract(epoch from (${t.blockedUntil} - now())) * 1000, 0))`,
  };
};

function toBucket(key: string, row: { failures: number; checking: number; forgotten: boolean; waitMs: string | number }): Bucket {
  return { key, failures: row.forgotten ? 0 : row.failures, checking: row.forgotten ? 0 : row.checking, waitMs: Number(row.waitMs) || 0 };
}

/** The bucket's row, created if absent and locked until the transaction ends (the upsert locks it). */
async function lockBucket(tx: Db, key: string, backoff: SignInBackoffSettings): Promise<Bucket> {
  const t = signInFailures;
  const [row] = await tx
    .insert(t)
    .values({ accountKey: key, failures: 0, lastFailureAt: sql`now()`, blockedUntil: null })
    .onConflictDoUpdate({ target: t.accountKey, set: { failures: sql`${t.failures}` } })
    .returning(bucketColumns(backoff));
  if (!row) throw new Error('the sign-in failure row was neither inserted nor updated');
  return toBucket(key, row);
}

/** The bucket's row if it exists (a sign-in may have cleared it meanwhile), locked until the transaction ends. */
async function lockCounted(tx: Db, key: string, backoff: SignInBackoffSettings): Promise<Bucket | undefined> {
  const t = signInFailures;
  const [row] = await tx.select(bucketColumns(backoff)).from(t).where(eq(t.accountKey, key)).for('update');
  return row && toBucket(key, row);
}

/** One more failure in a row, being checked; a wait already running is kept, a past one cleared. */
async function countAttempt(tx: Db, bucket: Bucket): Promise<void> {
  const t = signInFailures;
  await tx
    .update(t)
    .set({
      failures: bucket.failures + 1,
      checking: bucket.checking + 1,
      lastFailureAt: sql`now()`,
      blockedUntil: sql`case when ${t.blockedUntil} > now() then ${t.blockedUntil} else null end`,
    })
    .where(eq(t.accountKey, bucket.key));
}

/** From the `freeFailures`th failure on, the wait it earns from now (never less than the one running). */
function waitFromNow(bucket: Bucket, backoff: SignInBackoffSettings): SQL {
  const t = signInFailures;
  const delayMs = delayAfter(bucket.failures, backoff);
  if (delayMs === undefined) return sql`case when ${t.blockedUntil} > now() then ${t.blockedUntil} else null end`;
  return sql`greatest(${t.blockedUntil}, now() + make_interval(secs => ${delayMs / 1000}))`;
}

/** The attempt is no longer being checked; a bucket with nothing left to count is removed. */
async function settleBucket(tx: Db, bucket: Bucket, next: { failures: number; blockedUntil: SQL | null; failedNow?: boolean }): Promise<void> {
  const t = signInFailures;
  const checking = Math.max(bucket.checking - 1, 0);
  if (next.failures <= 0 && checking === 0) {
    await tx.delete(t).where(eq(t.accountKey, bucket.key));
    return;
  }
  await tx
    .update(t)
    .set({ failures: Math.max(next.failures, 0), checking, blockedUntil: next.blockedUntil, ...(next.failedNow ? { lastFailureAt: sql`now()` } : {}) })
    .where(eq(t.accountKey, bucket.key));
}
