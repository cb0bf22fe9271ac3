/**
 * PATCH documents, applied with well-kept libraries: RFC 7396 merge patch (json-merge-patch) and
 * RFC 6902 JSON Patch (fast-json-patch). The result is validated by the same schema as PUT, with
 * the order's required fields still required (a patch may not null or remove them).
 */
import jsonPatch from 'fast-json-patch';
import mergePatch from 'json-merge-patch';
import { DomainError } from '../../errors/problems.ts';
import { validationError } from '../../errors/zod-errors.ts';
import { MAX_ITEMS, PatchedOrderDocument, type OrderDocument, type OrderPatch } from './orders.schemas.ts';

/** A path that does not exist or a failed `test` conflicts with the current state (409). */
const CONFLICTS = new Set([
  'OPERATION_PATH_UNRESOLVABLE',
  'OPERATION_FROM_UNRESOLVABLE',
  'TEST_OPERATION_FAILED',
  'OPERATION_PATH_CANNOT_ADD',
  'OPERATION_VALUE_OUT_OF_BOUNDS',
]);

/**
 * A deep copy whose objects have no prototype: `/constructor` or `/toString` must not resolve
 * to inherited members, they name paths that do not exist.
 */
function bare(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(bare);
  if (value && typeof value === 'object') {
    const copy: Record<string, unknown> = Object.create(null);
    for (const [key, member] of Object.entries(value)) copy[key] = bare(member);
    return copy;
  }
  return value;
}

function pointerExists(document: unknown, pointer: string): boolean {
  if (pointer === '') return true;
  if (!pointer.startsWith('/')) return false;
  let current = document;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current)) {
      if (!/^(0|[1-9]\d*)$/.test(token) || Number(token) >= current.length) return false;
      current = current[Number(token)];
    } else if (current && typeof current === 'object' && Object.hasOwn(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else {
      return false;
    }
  }
  return true;
}

const conflict = (detail: string, index: number) =>
  new DomainError('conflict', detail, { errors: [{ field: String(index), message: detail }] });

const malformed = (detail: string, index?: number) =>
  new DomainError('malformed-request', detail, index === undefined ? {} : { errors: [{ field: String(index), message: detail }] });

/**
 * Bounds on the work one JSON Patch may cause. `copy` doubles what it copies, so a short patch
 * could otherwise grow the document exponentially; the size is checked after every operation,
 * before the next one can double it again. An order has at most MAX_ITEMS items of five members.
 */
export const PATCH_LIMITS = { operations: 200, nodes: 2_000, textChars: 64 * 1024, items: MAX_ITEMS } as const;

/** Whether a document has more than `nodes` values or `textChars` characters of text (keys included). */
function exceedsSize(document: unknown, limits: { nodes: number; textChars: number }): boolean {
  let nodes = 0;
  let chars = 0;
  const pending: unknown[] = [document];
  for (let index = 0; index < pending.length; index++) {
    const value = pending[index];
    nodes += 1;
    if (typeof value === 'string') chars += value.length;
    else if (value !== null && typeof value === 'object') {
      for (const [key, member] of Object.entries(value)) {
        chars += key.length;
        pending.push(member);
      }
    }
    if (nodes > limits.nodes || chars > limits.textChars) return true;
  }
  return false;
}

const tooLarge = (detail: string, field: string, message: string) => new DomainError('validation-error', detail, { errors: [{ field, message }] });

function assertWithinLimits(document: unknown, index: number): void {
  const items = document !== null && typeof document === 'object' ? (document as { items?: unknown }).items : undefined;
  if (Array.isArray(items) && items.length > PATCH_LIMITS.items) {
    throw tooLarge(`Operation ${index} leaves more than ${PATCH_LIMITS.items} items.`, 'items', `must have at most ${PATCH_LIMITS.items} items`);
  }
  if (exceedsSize(document, PATCH_LIMITS)) {
    throw tooLarge(`Operation ${index} makes the order larger than an order can be.`, String(index), 'the result is too large');
  }
}

function applyJsonPatch(target: unknown, document: unknown): unknown {
  if (!Array.isArray(document)) throw malformed('A JSON Patch document must be an array of operations.');
  if (document.length > PATCH_LIMITS.operations) {
    throw tooLarge(`A JSON Patch may have at most ${PATCH_LIMITS.operations} operations.`, '(body)', `at most ${PATCH_LIMITS.operations} operations`);
  }
  let current = bare(target);
  for (const [index, operation] of (document as unknown[]).entries()) {
    const invalid = jsonPatch.validate([operation as jsonPatch.Operation]);
    if (invalid) throw malformed(`Operation ${index} is malformed: ${invalid.name.toLowerCase().replace(/_/g, ' ')}.`, index);
    const op = operation as jsonPatch.Operation;
    if ((op.op === 'copy' || op.op === 'move') && !pointerExists(current, op.from)) {
      throw conflict(`Operation ${index} copies or moves from a path that does not exist.`, index);
    }
    const parent = op.path.slice(0, Math.max(0, op.path.lastIndexOf('/')));
    if (op.path !== '' && (!pointerExists(current, parent) || current === null || typeof current !== 'object')) {
      throw conflict(`Operation ${index} names a path that does not exist.`, index);
    }
    try {
      current = jsonPatch.applyOperation(current, op, true, true, true, index).newDocument;
    } catch (error) {
      if (error instanceof jsonPatch.JsonPatchError && CONFLICTS.has(error.name)) {
        throw conflict(
          error.name === 'TEST_OPERATION_FAILED' ? `The test operation ${index} failed.` : `Operation ${index} names a path that does not exist.`,
          index,
        );
      }
      // Anything else the library refuses (prototype paths, moving into a child...) cannot apply.
      throw malformed(`Operation ${index} cannot be applied to the order.`, index);
    }
    assertWithinLimits(current, index);
  }
  return current;
}

export function patcherFor(patch: Pick<OrderPatch, 'format' | 'document'>): (representation: unknown) => unknown {
  if (patch.format === 'json-patch') return (representation) => applyJsonPatch(representation, patch.document);
  return (representation) => mergePatch.apply(structuredClone(representation), patch.document);
}

export function parseOrderDocument(document: unknown): OrderDocument {
  const parsed = PatchedOrderDocument.safeParse(document);
  if (!parsed.success) throw validationError(parsed.error.issues);
  return parsed.data;
}
