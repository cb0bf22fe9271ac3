/**
 * The problem catalogue (docs/api.md#errors): the core problems every operation can meet, and the
 * ones each module declares beside its procedures (`<name>.problems.ts`), gathered into one.
 */
import { describe, expect, it } from 'vitest';
import { declareProblems, DomainError, isProblemSlug, problemBody, problemCatalogue, problemType } from '../../server/errors/problems.ts';
// Loading the router loads every module, and with it every module's declaration.
import '../../server/router.ts';

describe('modules declare their own problem types, gathered into the one catalogue', () => {
  it('holds the core problems and every module declaration, each once', () => {
    const slugs = [...problemCatalogue().keys()];
    expect(slugs).toEqual(expect.arrayContaining(['validation-error', 'not-found', 'invalid-state-transition', 'order-has-payment', 'insufficient-stock', 'refund-exceeds-payment']));
    expect(new Set(slugs).size).toBe(slugs.length);
    for (const slug of slugs) expect(slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
  });

  it("a module's problem answers with its declared status, title and tRPC code", () => {
    const error = new DomainError('refund-exceeds-payment', 'Too much.', { extensions: { amount_refundable: 5 } });
    expect(error.status).toBe(422);
    expect(problemType('invalid-state-transition')).toMatchObject({ status: 409, code: 'CONFLICT' });
    expect(problemBody(error)).toMatchObject({ type: '/problems/refund-exceeds-payment', title: 'Refund exceeds payment', status: 422, amount_refundable: 5 });
    expect(isProblemSlug('insufficient-stock')).toBe(true);
    expect(isProblemSlug('no-such-problem')).toBe(false);
  });

  it('refuses a slug declared twice (a core one or another module’s) and one that is no slug', () => {
    const type = { status: 409, title: 'Twice', code: 'CONFLICT', description: 'Twice.' } as const;
    expect(() => declareProblems({ conflict: type })).toThrow('problem type conflict is declared twice');
    expect(() => declareProblems({ 'order-has-payment': type })).toThrow('declared twice');
    expect(() => declareProblems({ 'Not A Slug': type })).toThrow('is not a lower-case slug');
  });

  it('a problem no module declared is a loud programming error, not a 500 without a type', () => {
    expect(() => problemType('undeclared-problem' as never)).toThrow("problem type undeclared-problem is not declared: import its module's <name>.problems.ts");
  });
});
