import { z } from 'zod';
import { PAYMENT_METHODS } from './payments.table.ts';
import { Currency, Id, Link, listOf, MAX_ORDER_TOTAL, Metadata, MetadataMergePatch, PageQuery, pageExample, patchInput, requestExample, responseExample, Timestamp } from '../common.schemas.ts';

export const PaymentMethod = z.enum(PAYMENT_METHODS).meta({ id: 'PaymentMethod', description: 'card, bank_transfer or wallet.' });

export const PaymentInput = z
  .strictObject({
    order_id: Id.meta({ description: 'The order to pay; it must be confirmed.' }),
    // An order's total at most (totals stay below 2^53); the column is bigint. 0 pays a free order
    // (docs/api.md#payments): any amount but the total is refused by the service, 0 included.
    amount: z.int().min(0).max(MAX_ORDER_TOTAL).meta({ description: "Minor units; must equal the order's total (0 for a free order).", example: 4548 }),
    method: PaymentMethod,
    metadata: Metadata.optional(),
  })
  .meta({ id: 'PaymentInput' });
export type PaymentInput = z.infer<typeof PaymentInput>;

/** Each link is offered exactly when its step is allowed (docs/api.md#refunds). */
const PaymentLinks = z
  .object({
    self: Link,
    order: Link.meta({ description: 'The order paid.' }),
    refunds: Link.meta({ description: "The payment's refunds (GET)." }),
    refund: Link.optional().meta({ description: 'POST a refund: while something remains of the payment and its order is paid, shipped, delivered or completed (admins and service clients).' }),
  })
  .meta({ id: 'PaymentLinks' });

export const Payment = z
  .object({
    id: Id,
    order_id: Id,
    amount: z.int().min(0).max(MAX_ORDER_TOTAL).meta({ description: 'Minor units (0 for a free order).' }),
    amount_refunded: z.int().min(0).max(MAX_ORDER_TOTAL).meta({ description: 'The sum of its refunds, minor units: 0 to `amount`.' }),
    currency: Currency,
    method: PaymentMethod,
    status: z.literal('captured').meta({ description: 'Payments are captured at once; refunds leave it captured and raise `amount_refunded`.' }),
    metadata: Metadata,
    created_at: Timestamp,
    updated_at: Timestamp.meta({ description: 'Its last change (a refund, or its metadata); its creation until then.' }),
    _links: PaymentLinks,
  })
  .meta({ id: 'Payment' });
export type Payment = z.infer<typeof Payment>;

/**
 * PATCH (docs/api.md#payments): a payment's metadata is all that changes; the merge patch names
 * only `metadata`, and a JSON Patch may touch nothing else (422 naming the member otherwise).
 */
export const PaymentMergePatch = z.strictObject({ metadata: MetadataMergePatch }).meta({ id: 'PaymentMergePatch' });
export type PaymentMergePatch = z.input<typeof PaymentMergePatch>;

export const PaymentPatch = patchInput<PaymentMergePatch>();
export type PaymentPatch = z.infer<typeof PaymentPatch>;

/** What a patch of a payment must leave: valid metadata (left out or removed, it is empty). */
export const PatchedPaymentMetadata = z.object({ metadata: Metadata.optional() });

export const PaymentListQuery = z
  .strictObject({
    // No example (Id's would be filled in by the docs page): docs/api.md#the-openapi-document.
    order_id: Id.optional().meta({ description: 'Only the payments of this order.', example: undefined }),
    ...PageQuery,
  })
  // No input at all is the first page of everything: `list()` needs no `{}`.
  .prefault({});
export type PaymentListQuery = z.infer<typeof PaymentListQuery>;

export const PaymentList = listOf(Payment).meta({ id: 'PaymentList' });

// Examples for the OpenAPI document (validated against the schemas by test/api/openapi.test.ts).
const payment: Payment = {
  id: 5,
  order_id: 17,
  amount: 4548,
  amount_refunded: 0,
  currency: 'USD',
  method: 'card',
  status: 'captured',
  metadata: {},
  created_at: '2026-01-31T12:10:00.000Z',
  updated_at: '2026-01-31T12:10:00.000Z',
  _links: {
    self: { href: '/api/v1/payments/5', method: 'GET' },
    order: { href: '/api/v1/orders/17', method: 'GET' },
    refunds: { href: '/api/v1/payments/5/refunds', method: 'GET' },
    refund: { href: '/api/v1/payments/5/refunds', method: 'POST' },
  },
};
requestExample(PaymentInput, { order_id: 17, amount: 4548, method: 'card' });
responseExample(Payment, payment);
responseExample(PaymentList, pageExample([payment]));
