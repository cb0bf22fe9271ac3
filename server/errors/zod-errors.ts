import type { z } from 'zod';
import { DomainError, type FieldError } from './problems.ts';

/** One `{field, message}` per invalid field; `field` is a dotted path such as `items.0.quantity`. */
function fieldErrorsFromIssues(issues: readonly z.core.$ZodIssue[]): FieldError[] {
  const errors: FieldError[] = [];
  for (const issue of issues) {
    const base = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        errors.push({ field: base ? `${base}.${key}` : key, message: 'Unknown field' });
      }
      continue;
    }
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      // Report the branch that got furthest instead of a vague "invalid input".
      const deepest = issue.errors.reduce((best, branch) => (branch.length < best.length ? branch : best));
      const nested = fieldErrorsFromIssues(deepest).map((e) => ({
        field: [base, e.field].filter(Boolean).join('.'),
        message: e.message,
      }));
      errors.push(...nested);
      continue;
    }
    errors.push({ field: base || '(body)', message: issue.message });
  }
  return errors;
}

export function validationError(issues: readonly z.core.$ZodIssue[]): DomainError {
  // One entry per field: the first (most basic) complaint about it.
  const byField = new Map<string, FieldError>();
  for (const error of fieldErrorsFromIssues(issues)) if (!byField.has(error.field)) byField.set(error.field, error);
  const errors = [...byField.values()];
  const fields = [...byField.keys()];
  return new DomainError('validation-error', `Invalid value for ${fields.join(', ')}.`, { errors });
}
