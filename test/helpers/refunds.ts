/**
 * Refunds for tests, typed from the module's schemas: what a client sends (`z.input` of
 * RefundInput, less the path's payment id) and what the service answers (`z.infer` of Refund),
 * with the HTTP calls the refund tests share.
 */
import { count, eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { z } from 'zod';
import { payments } from '../../server/modules/payments/payments.table.ts';
import { refunds } from '../../server/modules/refunds/refunds.table.ts';
import type { Refund, RefundInput, RefundList } from '../../server/modules/refunds/refunds.schemas.ts';
import type { TestApp } from './app.ts';
import { PAYMENTS, type PaymentBody } from './payments.ts';

export type RefundInputBody = Omit<z.input<typeof RefundInput>, 'id'>;
export type RefundBody = z.infer<typeof Refund>;
export type RefundListBody = z.infer<typeof RefundList>;

export const refundsOf = (paymentId: number): string => `${PAYMENTS}/${paymentId}/refunds`;

/** POST /payments/{id}/refunds with any body (tests send invalid ones on purpose). */
export function postRefund(t: TestApp, paymentId: number, body: unknown, token: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.request({ method: 'POST', url: refundsOf(paymentId), payload: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers }, token });
}

/** Refunds as `token`'s caller and returns the refund (expects 201). */
export async function refund(t: TestApp, paymentId: number, body: RefundInputBody, token: string): Promise<RefundBody> {
  const res = await postRefund(t, paymentId, body, token);
  expect(res.statusCode, res.body).toBe(201);
  return res.json<RefundBody>();
}

/** GET /payments/{id} as `token`'s caller (expects 200). */
export async function readPayment(t: TestApp, paymentId: number, token: string): Promise<PaymentBody> {
  const res = await t.request({ method: 'GET', url: `${PAYMENTS}/${paymentId}`, token });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<PaymentBody>();
}

/** What the database holds of a payment's refunds: how many, and `amount_refunded`. */
export async function refundLedger(t: TestApp, paymentId: number): Promise<{ rows: number; amountRefunded: number | undefined }> {
  const [rows] = await t.db.select({ n: count() }).from(refunds).where(eq(refunds.paymentId, paymentId));
  const [payment] = await t.db.select({ amountRefunded: payments.amountRefunded }).from(payments).where(eq(payments.id, paymentId));
  return { rows: rows?.n ?? 0, amountRefunded: payment?.amountRefunded };
}
