/**
 * Issue 21, item 2: a failed parse becomes a problem whose size does not grow with the input:
 * the first MAX_LISTED_ERRORS fields are listed, all of them counted.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DomainError, MAX_LISTED_ERRORS, problemBody } from '../../server/errors/problems.ts';
import { validationError } from '../../server/errors/zod-errors.ts';

function issuesOf(schema: z.ZodType, value: unknown): z.core.$ZodIssue[] {
  const result = schema.safeParse(value);
  if (result.success) throw new Error('expected the parse to fail');
  return result.error.issues;
}

const Line = z.strictObject({ product_id: z.int().min(1), quantity: z.int().min(1).max(10) });
const Order = z.strictObject({ name: z.string().min(1).regex(/^[a-z]+$/), items: z.array(Line) });

describe('a validation error lists the first fields and counts them all', () => {
  it('one entry per field, the first complaint about it; errors_total counts fields, not issues', () => {
    const domain = validationError(issuesOf(Order, { name: '', items: [] }));
    // `name` fails both min(1) and the regex: one field.
    expect(domain.errors).toEqual([{ field: 'name', message: expect.stringMatching(/>=1/) }]);
    expect(domain.errorsTotal).toBe(1);
    expect(domain.message).toBe('Invalid value for name.');
  });

  it(`${MAX_LISTED_ERRORS} entries at most, in the order found; the rest only counted`, () => {
    const items = Array.from({ length: 50 }, () => ({ product_id: 0, quantity: 11 }));
    const domain = validationError(issuesOf(Order, { name: 'ok', items }));
    expect(domain.errors).toHaveLength(MAX_LISTED_ERRORS);
    expect(domain.errors?.slice(0, 3).map((e) => e.field)).toEqual(['items.0.product_id', 'items.0.quantity', 'items.1.product_id']);
    expect(domain.errorsTotal).toBe(100);
    expect(domain.message).toBe('Invalid value for items.0.product_id, items.0.quantity, items.1.product_id and 97 more fields.');
  });

  it('unknown fields: one entry per key until the cap, every key counted', () => {
    const body = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`extra${i}`, 1]));
    const domain = validationError(issuesOf(Order, { name: 'ok', items: [{ product_id: 1, quantity: 1, colour: 'red' }], ...body }));
    expect(domain.errors).toHaveLength(MAX_LISTED_ERRORS);
    expect(domain.errors?.[0]).toEqual({ field: 'items.0.colour', message: 'Unknown field' });
    expect(domain.errors?.[1]).toEqual({ field: 'extra0', message: 'Unknown field' });
    expect(domain.errorsTotal).toBe(5001);
  });

  it('a field named by a long key is clipped to 64 characters', () => {
    const domain = validationError(issuesOf(Order, { name: 'ok', items: [], ['k'.repeat(10_000)]: 1 }));
    expect(domain.errors?.[0]?.field).toBe(`${'k'.repeat(63)}\u2026`);
    expect(domain.message.length).toBeLessThan(100);
  });
});

describe('a problem body lists at most what it is given to list, and always the total', () => {
  const domain = new DomainError('validation-error', 'Invalid.', {
    errors: Array.from({ length: 30 }, (_, i) => ({ field: `f${i}`, message: 'bad' })),
  });

  it(`a DomainError keeps the first ${MAX_LISTED_ERRORS} entries and counts all it was given`, () => {
    expect(domain.errors).toHaveLength(MAX_LISTED_ERRORS);
    expect(domain.errorsTotal).toBe(30);
    expect(problemBody(domain)).toMatchObject({ errors_total: 30 });
    expect(problemBody(domain).errors).toHaveLength(MAX_LISTED_ERRORS);
  });

  it('a smaller listing (a /trpc batch call) keeps errors_total', () => {
    const body = problemBody(domain, undefined, undefined, 1);
    expect(body.errors).toEqual([{ field: 'f0', message: 'bad' }]);
    expect(body.errors_total).toBe(30);
  });

  it('a problem without errors has neither member', () => {
    const body = problemBody(new DomainError('conflict', 'Busy.'));
    expect(body).not.toHaveProperty('errors');
    expect(body).not.toHaveProperty('errors_total');
  });
});
