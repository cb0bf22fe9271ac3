/**
 * The problem type of refunds (docs/api.md#errors), declared here and collected into the one
 * catalogue (server/errors/problems.ts); `ProblemSlug` knows it through `DeclaredProblems`.
 * refunds.ledger.ts, which throws it, imports this file.
 */
import { declareProblems } from '../../errors/problems.ts';
import { MAX_ORDER_TOTAL } from '../common.schemas.ts';

export const refundProblems = declareProblems({
  'refund-exceeds-payment': {
    status: 422,
    title: 'Refund exceeds payment',
    code: 'UNPROCESSABLE_CONTENT',
    description:
      'The refund asks for more than remains of the payment (its `amount` less `amount_refunded`; nothing, once it is refunded in full). `amount_refundable` is what may still be refunded; nothing was written.',
    openapi: {
      properties: {
        amount_refundable: { type: 'integer', minimum: 0, maximum: MAX_ORDER_TOTAL, description: 'What may still be refunded of the payment (minor units; 0 once it is refunded in full).' },
      },
      required: ['amount_refundable'],
      fieldErrors: true,
      example: {
        detail: 'The refund of 5000 exceeds what remains of payment 5 (2548 USD).',
        amount_refundable: 2548,
        errors: [{ field: 'amount', message: 'must be at most 2548, what remains of the payment' }],
        errors_total: 1,
      },
    },
  },
});

declare module '../../errors/problems.ts' {
  interface DeclaredProblems {
    refunds: typeof refundProblems;
  }
}
