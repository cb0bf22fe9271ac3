/**
 * PATCH documents, applied with well-kept libraries: RFC 7396 merge patch (json-merge-patch) and
 * RFC 6902 JSON Patch (fast-json-patch). The result is validated by the same schema as PUT.
 */
import jsonPatch from 'fast-json-patch';
import mergePatch from 'json-merge-patch';
import { DomainError } from '../../errors/problems.ts';
import { validationError } from '../../errors/zod-errors.ts';
import { OrderDocument, type OrderPatch } from './orders.schemas.ts';

/** A path that does not exist or a failed `test` conflicts with the current state (409). */
const CONFLICTS = new Set([
  'OPERATION_PATH_UNRESOLVABLE',
  'OPERATION_FROM_UNRESOLVABLE',
  'TEST_OPERATION_FAILED',
  'OPERATION_PATH_CANNOT_ADD',
  'OPERATION_VALUE_OUT_OF_BOUNDS',
]);

function applyJsonPatch(target: unknown, document: unknown): unknown {
  if (!Array.isArray(document)) {
    throw new DomainError('malformed-request', 'A JSON Patch document must be an array of operations.');
  }
  try {
    return jsonPatch.applyPatch(target, document as jsonPatch.Operation[], true, false).newDocument;
  } catch (error) {
    if (error instanceof jsonPatch.JsonPatchError) {
      const index = typeof error.index === 'number' ? error.index : undefined;
      const where = index === undefined ? '' : ` (operation ${index})`;
      const field = index === undefined ? '(body)' : String(index);
      if (CONFLICTS.has(error.name)) {
        const detail = error.name === 'TEST_OPERATION_FAILED' ? `A test operation failed${where}.` : `The patch names a path that does not exist${where}.`;
        return conflict(detail, field);
      }
      throw new DomainError('malformed-request', `The JSON Patch document is malformed${where}: ${error.name.toLowerCase().replace(/_/g, ' ')}.`, {
        errors: [{ field, message: error.name.toLowerCase().replace(/_/g, ' ') }],
      });
    }
    throw error;
  }
}

function conflict(detail: string, field: string): never {
  throw new DomainError('conflict', detail, { errors: [{ field, message: detail }] });
}

export function patcherFor(patch: Pick<OrderPatch, 'format' | 'document'>): (representation: unknown) => unknown {
  if (patch.format === 'json-patch') return (representation) => applyJsonPatch(representation, patch.document);
  return (representation) => mergePatch.apply(structuredClone(representation), patch.document);
}

export function parseOrderDocument(document: unknown): OrderDocument {
  const parsed = OrderDocument.safeParse(document);
  if (!parsed.success) throw validationError(parsed.error.issues);
  return parsed.data;
}
