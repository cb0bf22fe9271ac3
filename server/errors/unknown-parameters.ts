/**
 * Strict parameters (docs/api.md#unknown-parameters): a parameter an operation does not take is
 * refused, never ignored, so a mistyped filter cannot answer 200 with the unfiltered list. The
 * REST facade refuses an unknown query parameter (server/http/query-parameters.ts); /trpc refuses
 * a query whose input has a member its (strict) input schema does not take, the same problem.
 */
import type { z } from 'zod';
import { clip, DomainError } from './problems.ts';

/** How many names the `detail` sentence spells out before "and N more". */
const NAMES_IN_DETAIL = 3;

const quoted = (names: readonly string[]) => names.map((name) => `"${clip(name, 64)}"`).join(', ');

/**
 * 400 `unknown-parameter` naming each of `names` in `errors`. `accepted`: what the operation takes
 * instead, for the detail (REST knows it from the route; /trpc does not say it).
 */
export function unknownParameterError(names: readonly string[], accepted?: readonly string[]): DomainError {
  const shown = names.slice(0, NAMES_IN_DETAIL);
  const more = names.length - shown.length;
  const unknown = `Unknown ${names.length === 1 ? 'parameter' : 'parameters'} ${quoted(shown)}${more > 0 ? ` and ${more} more` : ''}.`;
  const takes =
    accepted === undefined ? '' : accepted.length === 0 ? ' This operation takes no query parameters.' : ` This operation takes: ${accepted.join(', ')}.`;
  return new DomainError('unknown-parameter', unknown + takes, {
    errors: names.map((field) => ({ field, message: 'Unknown parameter' })),
  });
}

/** The members of an input that its strict object schema refused at the top level, in order. */
export function unknownInputMembers(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.flatMap((issue) => (issue.code === 'unrecognized_keys' && issue.path.length === 0 ? issue.keys : []));
}
