/**
 * OAuth request parameters (RFC 6749 sections 3.1 and 3.2). Each endpoint names the parameters it
 * defines; those are checked (each at most once, a string, not over-long, no NUL) and every other
 * is ignored, as section 3.1 requires ("parameters sent without a value MUST be treated as if they
 * were omitted ... and unrecognized request parameters MUST be ignored"), so extensions such as
 * RFC 8707's repeatable `resource` pass unharmed. Problems name only the defined parameter, never
 * what the request sent (no unknown name, no value is echoed). Form bodies (`parseForm`, the
 * /oauth plugin's parser) and queries arrive as records where a repeated name maps to an array,
 * JSON bodies as objects whose values must be strings. The token and revocation endpoints then
 * read what their request schemas require (request-schemas.ts, `readRequest`).
 */
import { z } from 'zod';
import { invalidRequest } from './errors.ts';

/** Longer values are refused: no OAuth parameter of this server needs more. */
export const MAX_PARAMETER_LENGTH = 4096;

/**
 * Every defined parameter sent once: a string, not over-long, without NUL (no OAuth value holds
 * one, and PostgreSQL text cannot: refused here, never a failed query).
 */
// eslint-disable-next-line no-control-regex -- matching NUL is the point
export const OAuthParameter = z.string().max(MAX_PARAMETER_LENGTH).regex(/^[^\u0000]*$/);

/** What is wrong with a value `OAuthParameter` refuses, by its first issue (the order of its checks). */
const WRONG: Partial<Record<z.core.$ZodIssue['code'], string>> = {
  invalid_type: 'must be a string',
  too_big: `is longer than ${MAX_PARAMETER_LENGTH} characters`,
  invalid_format: 'contains a NUL character',
};

export type Params = ReadonlyMap<string, string>;

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
    const checked = OAuthParameter.safeParse(values[0]);
    if (!checked.success) {
      const [issue] = checked.error.issues;
      problems.push(`parameter ${name} ${(issue && WRONG[issue.code]) ?? 'is malformed'}`);
      continue;
    }
    if (checked.data !== '') params.set(name, checked.data);
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

/**
 * The parameters `schema` defines, as it reads them; `invalid_request` naming the first it refuses,
 * in the schema's order (a missing one: "The code parameter is required."; else the schema's own
 * words). `readElsewhere` are passed through unchecked, for a check that must come later or
 * knows more (`scope`: grantScope names what may be granted).
 */
export function readRequest<Schema extends z.ZodObject>(schema: Schema, params: Params, readElsewhere: readonly string[] = []): z.output<Schema> {
  const sent = [...params].filter(([name]) => !readElsewhere.includes(name));
  const result = schema.safeParse(Object.fromEntries(sent));
  if (!result.success) {
    const [issue] = result.error.issues;
    const name = String(issue?.path[0]);
    throw invalidRequest(params.has(name) ? (issue?.message ?? `Invalid request: parameter ${name} is malformed.`) : `The ${name} parameter is required.`);
  }
  return { ...result.data, ...Object.fromEntries([...params].filter(([name]) => readElsewhere.includes(name))) };
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
