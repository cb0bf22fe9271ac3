/**
 * OAuth request parameters (RFC 6749 sections 3.1 and 3.2). Each endpoint names the parameters it
 * defines; those are checked (each at most once, a string, not over-long, no NUL) and every other
 * is ignored, as section 3.1 requires ("parameters sent without a value MUST be treated as if they
 * were omitted ... and unrecognized request parameters MUST be ignored"), so extensions such as
 * RFC 8707's repeatable `resource` pass unharmed. Problems name only the defined parameter, never
 * what the request sent (no unknown name, no value is echoed). Form bodies (`parseForm`, the
 * /oauth plugin's parser) and queries arrive as records where a repeated name maps to an array,
 * JSON bodies as objects whose values must be strings.
 */
import { invalidRequest } from './errors.ts';

/** Longer values are refused: no OAuth parameter of this server needs more. */
export const MAX_PARAMETER_LENGTH = 4096;

export type Params = ReadonlyMap<string, string>;

/** What the token endpoint reads (RFC 6749 sections 2.3.1, 4.1.3, 4.3.2, 4.4.2, 6; RFC 7636 4.5). */
export const TOKEN_PARAMETERS = [
  'grant_type',
  'code',
  'redirect_uri',
  'code_verifier',
  'refresh_token',
  'scope',
  'username',
  'password',
  'client_id',
  'client_secret',
] as const;

/** What the revocation endpoint reads (RFC 7009 section 2.1, with client authentication). */
export const REVOKE_PARAMETERS = ['token', 'token_type_hint', 'client_id', 'client_secret'] as const;

/**
 * The defined parameters sent once with a value; `problem` says what else is wrong with a
 * defined one (sent more than once, over-long, not a string), and `repeated` names the repeated.
 */
export interface ParsedParams {
  params: Params;
  problem: string | undefined;
  repeated: ReadonlySet<string>;
}

export function parseParams(source: unknown, defined: readonly string[]): ParsedParams {
  const params = new Map<string, string>();
  const repeated = new Set<string>();
  const problems: string[] = [];
  const named = typeof source === 'object' && source !== null && !Array.isArray(source);
  if (!named && source !== undefined && source !== null && source !== '') {
    problems.push('the body must be a form (or a JSON object) of named parameters');
  }
  const entries: [string, unknown][] = named ? Object.entries(source) : [];
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    if (!defined.includes(name)) continue;
    // Forms and queries make an array only of a repeated name; a JSON array is no string.
    const values = Array.isArray(value) && value.length > 1 ? value : [value];
    if (seen.has(name) || values.length > 1) {
      repeated.add(name);
      continue;
    }
    seen.add(name);
    const single = values[0];
    if (typeof single !== 'string') {
      problems.push(`parameter ${name} must be a string`);
      continue;
    }
    if (single.length > MAX_PARAMETER_LENGTH) {
      problems.push(`parameter ${name} is longer than ${MAX_PARAMETER_LENGTH} characters`);
      continue;
    }
    // No OAuth value holds a NUL, and PostgreSQL text cannot: refused here, never a failed query.
    if (single.includes('\u0000')) {
      problems.push(`parameter ${name} contains a NUL character`);
      continue;
    }
    if (single !== '') params.set(name, single);
  }
  for (const name of repeated) params.delete(name);
  if (repeated.size > 0) problems.unshift(`parameter${repeated.size > 1 ? 's' : ''} ${[...repeated].join(', ')} may be sent only once`);
  return { params, problem: problems.length > 0 ? `Invalid request: ${problems.join('; ')}.` : undefined, repeated };
}

/** The defined parameters, or `invalid_request` naming what is wrong. */
export function requireParams(source: unknown, defined: readonly string[]): Params {
  const parsed = parseParams(source, defined);
  if (parsed.problem !== undefined) throw invalidRequest(parsed.problem);
  return parsed.params;
}

/** A required parameter, or `invalid_request` naming it. */
export function required(params: Params, name: string): string {
  const value = params.get(name);
  if (value === undefined) throw invalidRequest(`The ${name} parameter is required.`);
  return value;
}

/**
 * An application/x-www-form-urlencoded body (WHATWG decoding: `+` is a space) as a record without
 * a prototype; a name sent more than once maps to all its values.
 */
export function parseForm(body: string): Record<string, string | string[]> {
  const form: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of new URLSearchParams(body)) {
    const held = form[name];
    form[name] = held === undefined ? value : [...(Array.isArray(held) ? held : [held]), value];
  }
  return form;
}

/** Whether the request's body was sent as a form. */
export function isFormRequest(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]?.trim().toLowerCase() === 'application/x-www-form-urlencoded';
}
