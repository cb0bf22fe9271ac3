/**
 * The Idempotency-Key's unit of work is passed on explicitly (server/db/unit-of-work.ts,
 * server/trpc/idempotency.ts): the procedure gets it as `ctx.work`, its service continues it with
 * `transaction(work ?? db, ...)`, and what it writes commits with the key's row. A keyed procedure
 * that answers without having continued it is refused, and its key stays free. A ledger write
 * refuses a pool's handle as the outbox does. On both databases.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../server/db/client.ts';
import { idempotencyKeys } from '../../server/db/schema.ts';
import { transaction, type UnitOfWork } from '../../server/db/unit-of-work.ts';
import { testCallerIdentity } from '../../server/testing.ts';
import { createContextInner } from '../../server/trpc/context.ts';
import { idempotent } from '../../server/trpc/idempotency.ts';
import type { Meta } from '../../server/trpc/meta.ts';
import { recordRefund, type RefundablePayment } from '../../server/modules/refunds/refunds.ledger.ts';
import { createTestDatabase } from '../helpers/db.ts';

let database: Database;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});

const admin = testCallerIdentity({ role: 'admin', userId: 1, name: 'Admin' });
const creating = { openapi: { method: 'POST', path: '/things' }, rest: { status: 201 }, policy: { roles: ['admin'] } } as unknown as Meta;

type Result = { ok: true; data: unknown };

/** Runs a keyed creating "procedure" whose body is `body`, through the idempotency layer. */
function keyed(key: string, body: (work: UnitOfWork | undefined, db: Database['db']) => Promise<unknown>) {
  const ctx = createContextInner({ db: database.db, caller: admin, idempotencyKey: key });
  return idempotent<Result>({
    ctx,
    meta: creating,
    path: 'things.create',
    getRawInput: async () => ({ name: key }),
    run: async (work) => ({ ok: true, data: await body(work, ctx.db) }),
    outputOf: (result) => result.data,
    replay: (output) => ({ ok: true, data: output }),
  });
}

async function keyRow(key: string) {
  const [row] = await database.db
    .select({ key: idempotencyKeys.key })
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.scope, 'user:1'), eq(idempotencyKeys.key, key)));
  return row;
}

describe("the Idempotency-Key's unit of work", () => {
  it('reaches the procedure as ctx.work, beside the pool as ctx.db, and what it writes commits with the key', async () => {
    let seen: { work: UnitOfWork | undefined; db: Database['db'] } | undefined;
    const result = await keyed('uow-continued', async (work, db) => {
      seen = { work, db };
      if (work === undefined) throw new Error('no unit of work was passed on');
      return transaction(work ?? db, async () => 'written');
    });
    expect(result).toEqual({ ok: true, data: 'written' });
    expect(seen?.work).toBeDefined();
    expect(seen?.db).toBe(database.db);
    expect(await keyRow('uow-continued')).toEqual({ key: 'uow-continued' });
  });

  it('a keyed procedure that answers without continuing it is refused, and its key stays free', async () => {
    await expect(keyed('uow-ignored', async () => 'written elsewhere')).rejects.toThrow(/wrote outside the key's unit of work/);
    expect(await keyRow('uow-ignored')).toBeUndefined();
  });
});

describe('the refund ledger', () => {
  it("refuses a pool's handle: a type error, and at run time when cast around, before writing anything", async () => {
    const payment = { id: 1, amount: 100, amountRefunded: 0, currency: 'USD' } as RefundablePayment;
    // @ts-expect-error -- recordRefund takes a unit of work, never a pool's handle
    await expect(recordRefund(database.db, payment, 1, null)).rejects.toThrow(/handle of none/);
    await expect(recordRefund(database.db as UnitOfWork, payment, 1, null)).rejects.toThrow(/handle of none/);
  });
});
