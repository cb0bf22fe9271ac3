/**
 * Idempotency keys (docs/api.md#idempotency), once, in the procedure layer: REST (`Idempotency-Key`
 * header), `/trpc` (the same header) and `createCaller` (`createContextInner({ idempotencyKey })`)
 * share it, and every creating operation gets it without declaring anything.
 *
 * A creating operation is a procedure whose `meta.openapi.method` is POST and whose
 * `meta.rest.status` is 201 or 202; a POST answering 200 takes the key too when it declares
 * `meta.rest.honoursIdempotencyKey` (rotate-secret: its answer cannot be had again otherwise).
 * Other procedures ignore the header, as the IETF draft allows.
 *
 * Exactly once, on any number of instances: the key's row is inserted in the same transaction as
 * the operation's writes. The layer begins that unit of work and hands it to the procedure as
 * `ctx.work`; the service continues it with `transaction(work ?? db, ...)` (a savepoint in it,
 * server/db/unit-of-work.ts), and a keyed procedure that answers without having continued it is
 * refused (its writes would have committed without the key). A second request with the key waits on the row's
 * lock until the first commits (then replays its stored output) or rolls back (then runs itself),
 * in slices: between them it holds no transaction slot and no connection.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { transaction, wasContinued, type UnitOfWork } from '../db/unit-of-work.ts';
import { statement } from '../db/statements.ts';
import { idempotencyKeys } from '../db/schema.ts';
import { DomainError } from '../errors/problems.ts';
import { canonicalJson } from '../lib/etag.ts';
import { deleteInBatches } from '../db/purge.ts';
import type { Context, IdempotencySettings } from './context.ts';
import type { Meta } from './meta.ts';

/**
 * The fingerprint kept with a key: an HMAC of the input in one canonical text (sorted keys), so
 * any change of the input shows, and a password in it cannot be recovered by guessing. No input
 * at all (a /trpc call without a body) is `null`.
 */
export function fingerprintOf(settings: Pick<IdempotencySettings, 'fingerprintKey'>, input: unknown): string {
  return createHmac('sha256', settings.fingerprintKey)
    .update(canonicalJson(input ?? null))
    .digest('base64url');
}

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** 1-255 visible ASCII characters (docs/api.md#idempotency). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** Whether a procedure creates something, and so honours `Idempotency-Key`. */
export function isCreatingOperation(meta: { openapi?: { method?: string }; rest?: { status?: number } } | undefined): boolean {
  return meta?.openapi?.method === 'POST' && (meta.rest?.status === 201 || meta.rest?.status === 202);
}

/**
 * Whether a procedure honours `Idempotency-Key`: every creating operation, and a POST that
 * declares `meta.rest.honoursIdempotencyKey` (docs/api.md#idempotency).
 */
export function honoursIdempotencyKey(
  meta: { openapi?: { method?: string }; rest?: { status?: number; honoursIdempotencyKey?: true } } | undefined,
): boolean {
  return isCreatingOperation(meta) || (meta?.openapi?.method === 'POST' && meta.rest?.honoursIdempotencyKey === true);
}

/**
 * Whose key it is. Users and service clients by their token's `sub` (kept apart: a client id
 * could equal a user id); anonymous callers (registration) by their address, so two strangers
 * behind different addresses cannot replay each other's result.
 */
function scopeOf(ctx: Context): string {
  if (ctx.caller) return `${ctx.caller.role === 'service' ? 'client' : 'user'}:${ctx.caller.sub}`;
  return `anonymous:${ctx.clientAddress ?? 'local'}`;
}

function malformedKey(message: string): DomainError {
  return new DomainError('malformed-request', `The ${IDEMPOTENCY_HEADER} header ${message}.`, {
    errors: [{ field: IDEMPOTENCY_HEADER, message }],
  });
}

/** The SQLSTATE anywhere in the error's cause chain (drizzle wraps the driver's error). */
function sqlState(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The procedure's result as tRPC's middlewares pass it on. */
interface Outcome {
  ok: boolean;
}

export interface IdempotentCall<R extends Outcome> {
  ctx: Context;
  meta: Meta | undefined;
  /** The procedure's dotted path: the operation a key is bound to. */
  path: string;
  getRawInput: () => Promise<unknown>;
  /** Runs the procedure, with `ctx.work` = `work`, the key's unit of work (none without a key). */
  run: (work?: UnitOfWork) => Promise<R>;
  /** The output of an ok result. */
  outputOf: (result: R) => unknown;
  /** An ok result carrying a stored output, without running the procedure. */
  replay: (output: unknown) => R;
}

/** Carries a failed result out of the transaction, so it rolls back and the key stays free. */
class Failed<R> {
  constructor(readonly result: R) {}
}

interface StoredKey {
  operation: string;
  fingerprint: string;
  responseBody: string;
  expired: boolean;
}

export async function idempotent<R extends Outcome>(call: IdempotentCall<R>): Promise<R> {
  const { ctx } = call;
  const key = ctx.idempotencyKey;
  if (key === undefined || !honoursIdempotencyKey(call.meta)) return call.run();
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw malformedKey(key.length === 0 || key.length > 255 ? 'must be 1 to 255 characters long' : 'may hold only visible ASCII characters (no spaces)');
  }
  const scope = scopeOf(ctx);
  const operation = call.path;
  // The input as sent (REST: body and path parameters), in one canonical text whatever its key order.
  // No input at all (a /trpc call without a body) is `null`: JSON.stringify(undefined) is no text.
  const fingerprint = fingerprintOf(ctx.idempotency, await call.getRawInput());
  const { ttlHours, waitTimeoutMs } = ctx.idempotency;
  // What a sealed field is bound to: it opens for this caller's key of this operation only.
  const sealing = { key: sealingKeyOf(ctx.idempotency), binding: Buffer.from(JSON.stringify([scope, key, operation]), 'utf8') };
  const deadline = performance.now() + Math.max(1, Math.trunc(waitTimeoutMs));

  /**
   * One try, waiting at most `waitMs` for the key's row. Busy: 409 idempotency-key-in-use, after
   * a rollback that leaves nothing behind.
   */
  const attempt = async (waitMs: number): Promise<R> => {
    // Marked on the answer only once the transaction has committed: an answer that fails after
    // the key was read (the commit itself) must not claim to be a replay.
    let replayed = false;
    try {
      const outcome = await transaction(ctx.db, async (tx) => {
        // Only the wait for the key gets the longer bounds; the operation keeps the usual ones.
        // The statement bound stays above the lock bound, so a long wait ends as 409, not 503.
        await tx.execute(sql.raw(`set local lock_timeout = ${waitMs}`));
        await tx.execute(sql.raw(`set local statement_timeout = ${waitMs + 5_000}`));
        let stored: StoredKey | undefined;
        try {
          stored = await claimKey(tx, { scope, key, operation, fingerprint, ttlHours });
        } catch (error) {
          // 55P03: the lock wait ran out. 57014: one statement waited on several holders in turn
          // (lock_timeout restarts per wait) until the statement bound: the key is still busy too.
          if (sqlState(error) === '55P03' || sqlState(error) === '57014') throw keyInUse(error);
          throw error;
        }
        await tx.execute(sql`set local lock_timeout to default`);
        await tx.execute(sql`set local statement_timeout to default`);

        if (stored) {
          if (stored.operation !== operation || stored.fingerprint !== fingerprint) {
            throw new DomainError(
              'idempotency-key-mismatch',
              `This ${IDEMPOTENCY_HEADER} was used with a different request; use a new key for a new operation.`,
            );
          }
          replayed = true;
          return call.replay(openSealedFields(JSON.parse(stored.responseBody) as unknown, call.meta, sealing));
        }

        const result = await call.run(tx);
        // A failed attempt is not stored: rolling back frees the key for a corrected retry.
        if (!result.ok) throw new Failed(result);
        if (!wasContinued(tx)) {
          throw new Error(`${operation} honours ${IDEMPOTENCY_HEADER} but wrote outside the key's unit of work: its service must write in transaction(work ?? db, ...) with ctx.work.`);
        }
        await completeKey(tx, {
          scope,
          key,
          responseStatus: call.meta?.rest?.status ?? 200,
          responseBody: JSON.stringify(storedOutput(call.outputOf(result), call.meta, sealing)),
        });
        return result;
      });
      if (replayed) {
        ctx.response.replayed = true;
        ctx.response.headers['idempotent-replayed'] = 'true';
        ctx.idempotency.onReplay?.(operation);
      }
      return outcome;
    } catch (error) {
      if (error instanceof Failed) return (error as Failed<R>).result;
      throw error;
    }
  };

  // A request that finds its key held waits for the first in slices, giving its transaction slot
  // (and connection) back between them: retries of one slow request cannot keep every other
  // write out for the length of the wait (10 s), only for a slice at a time.
  for (;;) {
    const left = deadline - performance.now();
    try {
      return await attempt(Math.max(1, Math.min(WAIT_SLICE_MS, Math.ceil(left))));
    } catch (error) {
      if (!(error instanceof DomainError && error.slug === 'idempotency-key-in-use')) throw error;
      if (deadline - performance.now() <= 0) throw error;
    }
    await sleep(Math.min(WAIT_PAUSE_MS, Math.max(0, deadline - performance.now())));
  }
}

/** A key's wait, sliced: each try waits at most this long for the row, holding a connection... */
const WAIT_SLICE_MS = 250;
/** ...then gives it back for this long before the next try. */
const WAIT_PAUSE_MS = 50;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function keyInUse(cause: unknown): DomainError {
  return new DomainError('idempotency-key-in-use', 'A request with this idempotency key is still being processed. Retry shortly.', {
    headers: { 'retry-after': '1' },
    cause,
  });
}

/** Stores the operation's answer with its key, in the operation's transaction. */
const completeKey = statement('idempotency_key_complete', (db) =>
  db
    .update(idempotencyKeys)
    .set({ responseStatus: sql`${sql.placeholder('responseStatus')}`, responseBody: sql`${sql.placeholder('responseBody')}` })
    .where(and(eq(idempotencyKeys.scope, sql.placeholder('scope')), eq(idempotencyKeys.key, sql.placeholder('key')))),
);

/** Takes a free key: a placeholder row, or nothing when the key exists. */
const insertKey = statement('idempotency_key_insert', (db) =>
  db
    .insert(idempotencyKeys)
    .values({
      scope: sql.placeholder('scope'),
      key: sql.placeholder('key'),
      operation: sql.placeholder('operation'),
      fingerprint: sql.placeholder('fingerprint'),
      responseStatus: 0,
      responseBody: '',
      expiresAt: sql`now() + make_interval(hours => ${sql.placeholder('ttlHours')})`,
    })
    .onConflictDoNothing()
    .returning({ key: idempotencyKeys.key }),
);

/**
 * What a replay may answer: the output without the fields shown only once (`meta.rest.notReplayed`,
 * a client secret), which are therefore never written to the key's row either, and with the
 * fields it answers again although they are secrets (`meta.rest.sealed`, a rotated webhook
 * secret) encrypted.
 */
function storedOutput(output: unknown, meta: Meta | undefined, sealing: Sealing): unknown {
  const omitted = meta?.rest?.notReplayed ?? [];
  const sealed = meta?.rest?.sealed ?? [];
  if ((omitted.length === 0 && sealed.length === 0) || typeof output !== 'object' || output === null || Array.isArray(output)) return output;
  return Object.fromEntries(
    Object.entries(output)
      .filter(([field]) => !omitted.includes(field))
      .map(([field, value]) => [field, sealed.includes(field) ? { sealed: seal(value, sealing) } : value]),
  );
}

/** The stored output with its sealed fields decrypted: what the first request answered. */
function openSealedFields(stored: unknown, meta: Meta | undefined, sealing: Sealing): unknown {
  const sealed = meta?.rest?.sealed ?? [];
  if (sealed.length === 0 || typeof stored !== 'object' || stored === null || Array.isArray(stored)) return stored;
  return Object.fromEntries(
    Object.entries(stored).map(([field, value]) => {
      if (!sealed.includes(field)) return [field, value];
      const text = (value as { sealed?: unknown } | null)?.sealed;
      // A row written before the field was sealed, or altered: a 500, never a plain value passed on.
      if (typeof text !== 'string') throw new Error(`idempotency key's stored ${field} is not sealed`);
      return [field, unseal(text, sealing)];
    }),
  );
}

/**
 * How sealed fields are encrypted: AES-256-GCM under a key derived from the fingerprint key (so
 * from JWT_SECRET, the same on every instance), with the key's scope, key and operation as its
 * associated data, so a sealed value opens only for the key it was stored with: copied into
 * another caller's row, it fails its check.
 */
interface Sealing {
  key: Buffer;
  binding: Buffer;
}

const SEAL_VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

function sealingKeyOf(settings: Pick<IdempotencySettings, 'fingerprintKey'>): Buffer {
  return createHmac('sha256', settings.fingerprintKey).update('idempotency-sealed-fields').digest();
}

function seal(value: unknown, { key, binding }: Sealing): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(binding);
  const body = Buffer.concat([cipher.update(JSON.stringify(value ?? null), 'utf8'), cipher.final()]);
  return `${SEAL_VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
}

function unseal(text: string, { key, binding }: Sealing): unknown {
  const [version, packed] = text.split('.');
  if (version !== SEAL_VERSION || packed === undefined) throw new Error('idempotency key\'s sealed field has an unknown form');
  const bytes = Buffer.from(packed, 'base64url');
  // A shorter tag would be accepted by GCM, and checked less.
  if (bytes.length < IV_BYTES + TAG_BYTES) throw new Error("idempotency key's sealed field is truncated");
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES)).setAAD(binding);
  decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  // final() throws when the tag does not match: another key, another binding, altered bytes.
  const plain = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  return JSON.parse(plain.toString('utf8')) as unknown;
}

/**
 * Takes the key for this transaction: undefined when it was free (a placeholder row now holds
 * it, committed only with the operation's result), else the completed row, locked. An in-flight
 * first request makes both statements wait on its row lock until it commits or rolls back.
 */
async function claimKey(
  tx: UnitOfWork,
  row: { scope: string; key: string; operation: string; fingerprint: string; ttlHours: number },
): Promise<StoredKey | undefined> {
  const where = and(eq(idempotencyKeys.scope, row.scope), eq(idempotencyKeys.key, row.key));
  // Bounded: each round either inserts or finds a row; a row purged in between costs one more.
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await insertKey(tx, row);
    if (inserted.length > 0) return undefined;

    const [existing] = await tx
      .select({
        operation: idempotencyKeys.operation,
        fingerprint: idempotencyKeys.fingerprint,
        responseBody: idempotencyKeys.responseBody,
        expired: sql<boolean>`${idempotencyKeys.expiresAt} <= now()`,
      })
      .from(idempotencyKeys)
      .where(where)
      .for('update');
    if (!existing) continue;
    if (!existing.expired) return existing;
    // Past its lifetime the key is free, purged or not: the request is a new operation.
    await tx.delete(idempotencyKeys).where(where);
  }
  throw new Error('idempotency key could not be claimed');
}

/**
 * Deletes expired keys in batches. Rows a request holds (an expired key being taken over) are
 * skipped, never waited for, so the purge never blocks a request. Returns how many it deleted.
 */
export const purgeExpiredKeys = (db: Db): Promise<number> => deleteInBatches(db, idempotencyKeys, sql`${idempotencyKeys.expiresAt} < now()`);
