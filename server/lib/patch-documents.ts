/**
 * PATCH documents of any resource (docs/api.md#patch): RFC 7396 merge patch (the RFC's own
 * algorithm, below) and RFC 6902 JSON Patch (fast-json-patch). A patch applies to
 * the resource's representation; the module validates the result with its PUT schema
 * (`parsePatched`), so a patch may do exactly what a PUT may. Orders, products, users and
 * payments patch through here; what is theirs (the bounds, the schema) they hand in.
 */
import jsonPatch from 'fast-json-patch';
import type { z } from 'zod';
import { DomainError } from '../errors/problems.ts';
import { validationError } from '../errors/zod-errors.ts';

export const PATCH_FORMATS = ['merge-patch', 'json-patch'] as const;
export type PatchFormat = (typeof PATCH_FORMATS)[number];

/** One operation of a JSON Patch (RFC 6902). */
export type JsonPatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

/** What a PATCH procedure hands the service: the format its Content-Type named, and the body. */
export interface PatchRequest {
  format: PatchFormat;
  document: unknown;
}

/**
 * Bounds on the work one JSON Patch may cause. `copy` doubles what it copies, so a short patch
 * could otherwise grow the document exponentially; the size is checked after every operation,
 * before the next one can double it again. `arrays` bounds named top-level arrays (an order's
 * `items`); `noun` names the resource in the problems.
 */
export interface PatchLimits {
  operations: number;
  nodes: number;
  textChars: number;
  arrays?: Readonly<Record<string, number>>;
  noun: string;
}

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

/** Whether a document has more than `nodes` values or `textChars` characters of text (keys included). */
function exceedsSize(document: unknown, limits: PatchLimits): boolean {
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

function assertWithinLimits(document: unknown, index: number, limits: PatchLimits): void {
  for (const [name, most] of Object.entries(limits.arrays ?? {})) {
    const array = document !== null && typeof document === 'object' ? (document as Record<string, unknown>)[name] : undefined;
    if (Array.isArray(array) && array.length > most) {
      throw tooLarge(`Operation ${index} leaves more than ${most} ${name}.`, name, `must have at most ${most} ${name}`);
    }
  }
  if (exceedsSize(document, limits)) {
    throw tooLarge(`Operation ${index} makes the ${limits.noun} too large.`, String(index), 'the result is too large');
  }
}

function applyJsonPatch(target: unknown, document: unknown, limits: PatchLimits): unknown {
  if (!Array.isArray(document)) throw malformed('A JSON Patch document must be an array of operations.');
  if (document.length > limits.operations) {
    throw tooLarge(`A JSON Patch may have at most ${limits.operations} operations.`, '(body)', `at most ${limits.operations} operations`);
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
      throw malformed(`Operation ${index} cannot be applied to the ${limits.noun}.`, index);
    }
    assertWithinLimits(current, index, limits);
  }
  return current;
}

/**
 * RFC 7396 section 2's MergePatch, on null-prototype copies (`bare`): every member name is data,
 * so `constructor`, `prototype` and `__proto__` merge like any other key. json-merge-patch
 * returned its target untouched at an object holding one of them, so a PATCH of
 * `{"metadata":{"constructor":"c","other":"o"}}` answered 200 and wrote nothing, though create and
 * PUT store both keys (issue 36 item 1, docs/api.md#metadata). The result is validated by the
 * resource's PUT schema, which copies it into ordinary objects (and drops `__proto__` as it does
 * on create; REST refuses that key in any body before).
 */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return bare(patch);
  const result = (target !== null && typeof target === 'object' && !Array.isArray(target) ? target : Object.create(null)) as Record<string, unknown>;
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/** The patch as a function of the representation it applies to (a module may apply it twice: before and under its lock). */
export function patcherFor(patch: PatchRequest, limits: PatchLimits): (representation: unknown) => unknown {
  if (patch.format === 'json-patch') return (representation) => applyJsonPatch(representation, patch.document, limits);
  return (representation) => mergePatch(bare(representation), patch.document);
}

/** Whether two JSON values are the same, whatever the order of their members and their prototypes. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((member, index) => sameJson(member, b[index]));
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

/**
 * For a resource a patch may change only in part (a payment: its metadata): 422 naming every
 * other member the patched document changed, added or removed.
 */
export function assertChangesOnly(before: Readonly<Record<string, unknown>>, after: unknown, writable: readonly string[], noun: string): void {
  if (after === null || typeof after !== 'object' || Array.isArray(after)) {
    throw new DomainError('validation-error', `The patched ${noun} must be a JSON object.`, { errors: [{ field: '(body)', message: 'must be a JSON object' }] });
  }
  const members = new Set([...Object.keys(before), ...Object.keys(after)]);
  const changed = [...members].filter((key) => !writable.includes(key) && !sameJson(before[key], (after as Record<string, unknown>)[key]));
  if (changed.length > 0) {
    throw new DomainError('validation-error', `Only ${writable.join(', ')} of a ${noun} may change; the patch changes ${changed.join(', ')}.`, {
      errors: changed.map((field) => ({ field, message: `is read-only: only ${writable.join(', ')} may change` })),
    });
  }
}

/** The patched document read by the resource's PUT schema: 422 naming each field it refuses. */
export function parsePatched<Schema extends z.ZodType>(schema: Schema, document: unknown): z.infer<Schema> {
  const parsed = schema.safeParse(document);
  if (!parsed.success) throw validationError(parsed.error.issues);
  return parsed.data;
}
