/**
 * Money is taken at most once per order (docs/api.md#payments, issue 9): many payments of one order at
 * once, each a different request, capture exactly one. On PostgreSQL the requests race on real
 * parallel connections (the order's row lock serializes them, the partial unique index backs it
 * up); on PGlite they serialize on its single connection, and the outcome must be the same.
 */
import { count, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { payments } from '../../server/modules/payments/payments.table.ts';
import { useTestApp } from '../helpers/app.ts';
import { testDbKind } from '../helpers/db.ts';
import { createOrderScene, draftOrder, orderAction, readOrder, type OrderScene } from '../helpers/orders.ts';
import { paymentInput, postPayment, type PaymentBody } from '../helpers/payments.ts';
import { expectProblem } from '../helpers/problems.ts';

let scene: OrderScene;

const t = useTestApp();
beforeAll(async () => {
  scene = await createOrderScene(t);
});

describe(`concurrent payments of one order (${testDbKind})`, () => {
  it('50 concurrent payments: exactly one 201, 49 are 409, one payment row, the order paid', async () => {
    const draft = await draftOrder(t, scene);
    expect((await orderAction(t, draft.id, 'confirm', scene.alice.token)).statusCode).toBe(200);
    const methods = ['card', 'bank_transfer', 'wallet'] as const;
    // Different requests: the owner and the admin, by every method.
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_v, i) =>
        postPayment(t, paymentInput(draft, { method: methods[i % methods.length] }), i % 2 === 0 ? scene.alice.token : t.admin.token),
      ),
    );

    const statuses = responses.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 201), String(statuses)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(49);
    for (const res of responses.filter((r) => r.statusCode === 409)) expectProblem(res, 409, 'invalid-state-transition');

    const [rows] = await t.db.select({ n: count() }).from(payments).where(eq(payments.orderId, draft.id));
    expect(rows?.n).toBe(1);
    const captured = responses.find((r) => r.statusCode === 201)?.json<PaymentBody>();
    const [stored] = await t.db.select({ id: payments.id }).from(payments).where(eq(payments.orderId, draft.id));
    expect(stored?.id).toBe(captured?.id);
    expect((await readOrder(t, draft.id)).order.status).toBe('paid');
  });
});
