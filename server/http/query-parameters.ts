/**
 * The query parameters a REST operation takes are those its input schema declares outside its
 * path (the route table, rest-routes.ts); the health checks take none. Any other is refused with
 * 400 `unknown-parameter` (docs/api.md#unknown-parameters) before anything else is read, on
 * every method: a write with a query string is refused too, and changes nothing.
 */
import type { FastifyRequest } from 'fastify';
import { unknownParameterError } from '../errors/unknown-parameters.ts';

/** Throws `unknown-parameter` when the query names a parameter `accepted` does not hold. */
export function refuseUnknownQueryParameters(request: FastifyRequest, accepted: ReadonlyMap<string, unknown> | ReadonlySet<string>): void {
  const query = request.query;
  if (typeof query !== 'object' || query === null) return;
  const unknown = Object.keys(query).filter((name) => !accepted.has(name));
  if (unknown.length > 0) throw unknownParameterError(unknown, [...accepted.keys()]);
}
