/**
 * Payments for tests, typed from the module's schemas: what a client sends (`z.input` of
 * PaymentInput) and what the service answers (`z.infer` of Payment), with the HTTP calls the
 * payment tests share.
 */
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { z } from 'zod';
import type { Payment, PaymentInput, PaymentList } from '../../server/modules/payments/payments.schemas.ts';
import type { TestApp } from './app.ts';
import type { OrderBody } from './orders.ts';

export const PAYMENTS = '/api/v1/payments';

/** A POST /payments body (and `payments.create` input) as a client writes it. */
export type PaymentInputBody = z.input<typeof PaymentInput>;
export type PaymentBody = z.infer<typeof Payment>;
export type PaymentListBody = z.infer<typeof PaymentList>;

/** The body that pays `order` in full by card, unless `overrides` say otherwise. */
export function paymentInput(order: Pick<OrderBody, 'id' | 'total'>, overrides: Partial<PaymentInputBody> = {}): PaymentInputBody {
  return { order_id: order.id, amount: order.total, method: 'card', ...overrides };
}

/** POST /payments with any body (tests send invalid ones on purpose). */
export function postPayment(t: TestApp, body: unknown, token: string): Promise<LightMyRequestResponse> {
  return t.request({ method: 'POST', url: PAYMENTS, payload: JSON.stringify(body), headers: { 'content-type': 'application/json' }, token });
}

/** Pays `order` in full as `token`'s caller and returns the payment (expects 201). */
export async function payOrder(t: TestApp, order: Pick<OrderBody, 'id' | 'total'>, token: string, overrides: Partial<PaymentInputBody> = {}): Promise<PaymentBody> {
  const res = await postPayment(t, paymentInput(order, overrides), token);
  expect(res.statusCode, res.body).toBe(201);
  return res.json<PaymentBody>();
}
