/**
 * The problem types of orders (docs/api.md#errors), declared here and collected into the one
 * catalogue (server/errors/problems.ts); `ProblemSlug` knows them through `DeclaredProblems`.
 * The files that throw them import this one.
 */
import { declareProblems, type ProblemMembers } from '../../errors/problems.ts';

const orderStatus = { $ref: '#/components/schemas/OrderStatus' };

// Typed apart from the declaration, so the compiler need not read its status literals to know the
// declaration's type (it would meet them before the status enum's, and print the typed client's
// unions of statuses in that order: scripts/client-router-types.ts).
const transitionExample: ProblemMembers['example'] = {
  detail: 'Order 17 cannot move from draft to shipped.',
  current_status: 'draft',
  requested_status: 'shipped',
  allowed: ['confirmed', 'cancelled'],
};

export const orderProblems = declareProblems({
  'invalid-state-transition': {
    status: 409,
    title: 'Invalid state transition',
    code: 'CONFLICT',
    description:
      'The order cannot move from its current status to the requested one. `current_status` and `requested_status` name the move; `allowed` lists the statuses it can move to by the same means (it may be empty).',
    openapi: {
      properties: {
        current_status: { ...orderStatus, description: "The order's status now." },
        requested_status: { ...orderStatus, description: 'The status asked for.' },
        allowed: { type: 'array', items: orderStatus, uniqueItems: true, description: 'Where the order can go by the same means (may be empty).' },
      },
      required: ['current_status', 'requested_status', 'allowed'],
      example: transitionExample,
    },
  },
  'order-has-payment': {
    status: 409,
    title: 'Order has a payment',
    code: 'CONFLICT',
    description: 'An order that has a payment cannot be deleted.',
    openapi: { example: { detail: 'Order 17 has a payment and cannot be deleted.' } },
  },
});

declare module '../../errors/problems.ts' {
  interface DeclaredProblems {
    orders: typeof orderProblems;
  }
}
