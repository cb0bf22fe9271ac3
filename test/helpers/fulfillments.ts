/**
 * Fulfillments for tests, typed from the module's schemas: what a client sends (`z.input` of
 * ShipmentInput, without the order id the path carries) and what the service answers (`z.infer`
 * of Fulfillment), with the HTTP calls the fulfillment tests share.
 */
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { z } from 'zod';
import type { Fulfillment, FulfillmentList, ShipmentInput } from '../../server/modules/fulfillments/fulfillments.schemas.ts';
import type { TestApp } from './app.ts';
import { ORDERS } from './orders.ts';

/** A POST /orders/{id}/fulfillments body as a client writes it (the order id is in the path). */
export type ShipmentBody = Omit<z.input<typeof ShipmentInput>, 'id'>;
export type FulfillmentBody = z.infer<typeof Fulfillment>;
export type FulfillmentListBody = z.infer<typeof FulfillmentList>;

export const fulfillmentsOf = (orderId: number): string => `${ORDERS}/${orderId}/fulfillments`;

/** A shipment body with a carrier and a tracking number, unless `overrides` say otherwise. */
export function shipmentInput(overrides: Partial<ShipmentBody> = {}): ShipmentBody {
  return { carrier: 'UPS', tracking_number: '1Z999AA10123456784', ...overrides };
}

/** POST /orders/{id}/send-to-fulfillment (no body). */
export function sendToFulfillment(t: TestApp, orderId: number, token: string): Promise<LightMyRequestResponse> {
  return t.request({ method: 'POST', url: `${ORDERS}/${orderId}/send-to-fulfillment`, token });
}

/** POST /orders/{id}/fulfillments with any body (tests send invalid ones on purpose). */
export function postShipment(t: TestApp, orderId: number, body: unknown, token: string): Promise<LightMyRequestResponse> {
  return t.request({ method: 'POST', url: fulfillmentsOf(orderId), payload: JSON.stringify(body), headers: { 'content-type': 'application/json' }, token });
}

/** Ships `orderId` as `token`'s caller (an admin or a service with fulfillments:write) and returns the fulfillment (expects 201). */
export async function shipOrder(t: TestApp, orderId: number, token: string, overrides: Partial<ShipmentBody> = {}): Promise<FulfillmentBody> {
  const res = await postShipment(t, orderId, shipmentInput(overrides), token);
  expect(res.statusCode, res.body).toBe(201);
  return res.json<FulfillmentBody>();
}
