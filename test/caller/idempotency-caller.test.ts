/**
 * The idempotency layer (server/trpc/idempotency.ts) as a caller meets it, no HTTP: what it marks
 * on the answer (`ctx.response`, which both doors copy), and when.
 */
import { TRPCError } from '@trpc/server';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../server/db/client.ts';
import { idempotencyKeys } from '../../server/db/schema.ts';
import { createCaller } from '../../server/router.ts';
import { testCallerIdentity, createTestHarness, type TestHarness } from '../../server/testing.ts';
import { createContextInner } from '../../server/trpc/context.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { productInput } from '../helpers/products.ts';

let harness: TestHarness;
beforeAll(async () => {
  harness = await createTestHarness({ database: await createTestDatabase() });
});
afterAll(async () => {
  await harness?.close();
});

const admin = testCallerIdentity({ role: 'admin', userId: 1, name: 'Admin' });

/** The database, except that every transaction fails once its work is done (a lost commit). */
function failingCommits(db: Db): Db {
  return new Proxy(db, {
    get(target, property, receiver) {
      if (property !== 'transaction') return Reflect.get(target, property, receiver) as unknown;
      return async (work: Parameters<Db['transaction']>[0]) => {
        await target.transaction(work);
        throw Object.assign(new Error('connection lost during COMMIT'), { code: '08006' });
      };
    },
  });
}

describe('a repeated Idempotency-Key', () => {
  it('marks the answer as a replay once its transaction has committed', async () => {
    const body = productInput();
    const first = createContextInner({ db: harness.db, caller: admin, idempotencyKey: 'caller-idem-1' });
    const created = await createCaller(first).products.create(body);
    expect(first.response.replayed).toBeUndefined();
    expect(first.response.headers['idempotent-replayed']).toBeUndefined();

    const again = createContextInner({ db: harness.db, caller: admin, idempotencyKey: 'caller-idem-1' });
    expect(await createCaller(again).products.create(body)).toEqual(created);
    expect(again.response.replayed).toBe(true);
    expect(again.response.headers['idempotent-replayed']).toBe('true');
  });

  it('is no replay when the transaction that read the key fails to commit', async () => {
    const body = productInput();
    await createCaller(createContextInner({ db: harness.db, caller: admin, idempotencyKey: 'caller-idem-2' })).products.create(body);

    const lost = createContextInner({ db: failingCommits(harness.db), caller: admin, idempotencyKey: 'caller-idem-2' });
    await expect(createCaller(lost).products.create(body)).rejects.toThrow();
    // Both doors copy these onto the error answer too: it must not say `Idempotent-Replayed: true`.
    expect(lost.response.replayed).toBeUndefined();
    expect(lost.response.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('rotate-secret with a key through createCaller (docs/webhooks.md#endpoints)', () => {
  const endpoint = () =>
    createCaller(createContextInner({ db: harness.db, caller: admin })).webhooks.create({ url: 'http://127.0.0.1:9/hooks', enabled_events: ['product.created'] });

  it('a lost rotate-secret answer is recovered: the same caller and key replay the same new secret (regression)', async () => {
    const { id, secret: original } = await endpoint();
    const first = createContextInner({ db: harness.db, caller: admin, idempotencyKey: 'caller-rotate-1' });
    const rotated = await createCaller(first).webhooks.rotateSecret({ id });
    expect(rotated.secret).not.toBe(original);
    expect(first.response.replayed).toBeUndefined();

    const again = createContextInner({ db: harness.db, caller: admin, idempotencyKey: 'caller-rotate-1' });
    expect(await createCaller(again).webhooks.rotateSecret({ id })).toEqual(rotated);
    expect(again.response.replayed).toBe(true);
  });

  it("a sealed secret opens only for its own key: copied into another caller's key, the replay fails and shows nothing", async () => {
    const { id } = await endpoint();
    const first = createContextInner({ db: harness.db, caller: admin, idempotencyKey: 'caller-rotate-2' });
    const rotated = await createCaller(first).webhooks.rotateSecret({ id });
    const [row] = await harness.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, 'caller-rotate-2'));
    if (!row) throw new Error('the key was not stored');
    expect(row.responseBody).not.toContain(rotated.secret);
    const other = testCallerIdentity({ role: 'admin', userId: 2, name: 'Other admin' });
    await harness.db.insert(idempotencyKeys).values({ ...row, scope: `user:${other.sub}` });

    const stolen = createContextInner({ db: harness.db, caller: other, idempotencyKey: 'caller-rotate-2' });
    const failure = await createCaller(stolen).webhooks.rotateSecret({ id }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(TRPCError);
    expect((failure as TRPCError).code).toBe('INTERNAL_SERVER_ERROR');
    expect(String((failure as TRPCError).message)).not.toContain(rotated.secret);
  });
});
