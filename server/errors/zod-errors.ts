import type { z } from 'zod';
import { clip, DomainError, MAX_LISTED_ERRORS, type FieldError } from './problems.ts';

/** How many field names the `detail` sentence spells out before "and N more". */
const FIELDS_IN_DETAIL = 3;

/**
 * The bad fields of a failed parse, one per field (the first, most basic, complaint about it):
 * only the first MAX_LISTED_ERRORS become entries, the rest are only counted, so the work and
 * the answer stay small however many there are (70,000 unknown fields once made a 3.7 MB 422).
 */
class FieldErrorList {
  readonly listed = new Map<string, FieldError>();
  /** Fields with a complaint other than "unknown" (several checks can complain about one). */
  private readonly complained = new Set<string>();
  /** Unknown keys: distinct by construction (one object's keys), so counted, never kept. */
  private unknownKeys = 0;

  get total(): number {
    return this.complained.size + this.unknownKeys;
  }

  private list(field: string, message: string): void {
    if (this.listed.size < MAX_LISTED_ERRORS && !this.listed.has(field)) this.listed.set(field, { field, message });
  }

  add(field: string, message: string): void {
    if (this.complained.has(field)) return;
    this.complained.add(field);
    this.list(field, message);
  }

  addUnknown(base: string, keys: readonly string[]): void {
    this.unknownKeys += keys.length;
    for (const key of keys) {
      if (this.listed.size >= MAX_LISTED_ERRORS) break;
      this.list(base ? `${base}.${key}` : key, 'Unknown field');
    }
  }
}

/** Collects `issues` found under `prefix`; `field` is a dotted path such as `items.0.quantity`. */
function collect(issues: readonly z.core.$ZodIssue[], prefix: string, into: FieldErrorList): void {
  for (const issue of issues) {
    const base = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
    if (issue.code === 'unrecognized_keys') {
      into.addUnknown(base, issue.keys);
    } else if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      // Report the branch that got furthest instead of a vague "invalid input".
      const deepest = issue.errors.reduce((best, branch) => (branch.length < best.length ? branch : best));
      collect(deepest, base, into);
    } else {
      into.add(base || '(body)', issue.message);
    }
  }
}

export function validationError(issues: readonly z.core.$ZodIssue[]): DomainError {
  const found = new FieldErrorList();
  collect(issues, '', found);
  const errors = [...found.listed.values()];
  const named = errors.slice(0, FIELDS_IN_DETAIL).map((e) => clip(e.field, 64));
  const more = found.total - named.length;
  const detail = `Invalid value for ${named.join(', ')}${more > 0 ? ` and ${more} more field${more === 1 ? '' : 's'}` : ''}.`;
  return new DomainError('validation-error', detail, { errors, errorsTotal: found.total });
}
