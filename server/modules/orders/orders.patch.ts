/**
 * What is the order's own in a PATCH (docs/api.md#writes): its bounds and its schema. The patch
 * machinery is shared by every resource (lib/patch-documents.ts); the result is validated by
 * the same schema as PUT, with the order's required fields still required (a patch may not
 * null or remove them).
 */
import { parsePatched, patcherFor as patcherWithin, type PatchLimits, type PatchRequest } from '../../lib/patch-documents.ts';
import { MAX_ITEMS, PatchedOrderDocument, type OrderDocument } from './orders.schemas.ts';

/** An order has at most MAX_ITEMS items of five members. */
export const PATCH_LIMITS = { operations: 200, nodes: 2_000, textChars: 64 * 1024, items: MAX_ITEMS } as const;

const ORDER_LIMITS: PatchLimits = { ...PATCH_LIMITS, arrays: { items: PATCH_LIMITS.items }, noun: 'order' };

export function patcherFor(patch: PatchRequest): (representation: unknown) => unknown {
  return patcherWithin(patch, ORDER_LIMITS);
}

export function parseOrderDocument(document: unknown): OrderDocument {
  return parsePatched(PatchedOrderDocument, document);
}
