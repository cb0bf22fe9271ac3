/**
 * The query parameters a REST operation takes are those its input schema declares outside its
 * path (the route table, rest-routes.ts); the health checks take none. Any other is refused with
 * 400 `unknown-parameter` (docs/api.md#unknown-parameters) before anything else is read, on
 * every method: a write with a query string is refused too, and changes nothing.
 *
 * A deepObject parameter (OpenAPI `style: deepObject`, a record in the input: `metadata`) is
 * spelled `name[key]=value`, one member each: any key of it is taken, and no other bracketed name.
 */
import type { FastifyRequest } from 'fastify';
import { unknownParameterError } from '../errors/unknown-parameters.ts';
import type { ParamKind } from './rest-routes.ts';

const MEMBER = /^([A-Za-z_][A-Za-z0-9_]*)\[([^[\]]*)\]$/;

/** `metadata[erp_id]` -> `{ name: 'metadata', key: 'erp_id' }`; undefined for any other name. */
export function deepObjectMember(parameter: string): { name: string; key: string } | undefined {
  const match = MEMBER.exec(parameter);
  return match ? { name: match[1] as string, key: match[2] as string } : undefined;
}

/** Whether `parameter` is a member of one of the deepObject parameters `accepted` holds. */
function isDeepObjectMember(parameter: string, accepted: ReadonlyMap<string, unknown> | ReadonlySet<string>): boolean {
  const member = deepObjectMember(parameter);
  return member !== undefined && accepted instanceof Map && accepted.get(member.name) === ('deepObject' satisfies ParamKind);
}

/** Throws `unknown-parameter` when the query names a parameter `accepted` does not hold. */
export function refuseUnknownQueryParameters(request: FastifyRequest, accepted: ReadonlyMap<string, unknown> | ReadonlySet<string>): void {
  const query = request.query;
  if (typeof query !== 'object' || query === null) return;
  const unknown = Object.keys(query).filter((name) => !accepted.has(name) && !isDeepObjectMember(name, accepted));
  if (unknown.length > 0) throw unknownParameterError(unknown, [...accepted].map((entry) => describe(entry)));
}

/** A parameter's name as the detail lists it: a deepObject one as `name[key]`. */
const describe = (entry: string | [string, unknown]): string =>
  typeof entry === 'string' ? entry : entry[1] === ('deepObject' satisfies ParamKind) ? `${entry[0]}[key]` : entry[0];
