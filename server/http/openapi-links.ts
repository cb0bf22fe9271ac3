/**
 * OpenAPI links: the next steps a client takes with an operation's answer, which schemathesis's
 * stateful phase follows to walk multi-step flows (create an order, confirm it, pay it, ship it).
 * Two sources, both declared beside the procedures:
 *
 * - the answer's `meta.rest.location`: every other operation on that path, e.g. POST /orders 201 ->
 *   GET/PUT/PATCH/DELETE /orders/{id}. The location's parameters are members of the answer (the
 *   facade fills `Location` from them), so they are the link's parameters;
 * - the operation's own `meta.rest.links`, for the actions that make sense next (confirm a new
 *   order, not ship it) and steps to other resources (pay a confirmed order).
 *
 * Every expression is `$response.body#/<pointer>`. A link's `requestBody` holds such expressions
 * among literal values: schemathesis evaluates each and merges them into the body it generates.
 */
import { z } from 'zod';
import type { oas31 } from 'zod-openapi';
import { API_PREFIX } from '../lib/api-paths.ts';
import type { RestLink } from '../trpc/meta.ts';
import type { RestRoute } from './rest-routes.ts';

export const operationIdOf = (route: RestRoute): string => route.procedurePath.replace(/\./g, '-');

const segmentsOf = (path: string): string[] => path.split('/').filter(Boolean);
const parameterOf = (segment: string | undefined): string | undefined => (segment === undefined ? undefined : /^\{(\w+)\}$/.exec(segment)?.[1]);
const answerMember = (pointer: string): string => `$response.body#/${pointer}`;

/** A declared body with every string (a pointer into the answer) as its expression, and every pointer in it. */
function bodyTemplate(value: unknown, pointers: string[]): unknown {
  if (typeof value === 'string') {
    pointers.push(value);
    return answerMember(value);
  }
  if (Array.isArray(value)) return value.map((item) => bodyTemplate(item, pointers));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, bodyTemplate(item, pointers)]));
  return value;
}

/**
 * The target's path parameters from the location's, matched by position, when the target's path is
 * the location's (parameters named alike or not); otherwise undefined.
 */
function parametersFromLocation(location: string, target: RestRoute): Record<string, string> | undefined {
  const located = segmentsOf(location);
  const path = segmentsOf(target.path);
  if (path.length !== located.length) return undefined;
  const parameters: Record<string, string> = {};
  for (const [index, segment] of path.entries()) {
    const own = parameterOf(segment);
    const theirs = parameterOf(located[index]);
    if (own === undefined || theirs === undefined) {
      if (own !== theirs || segment !== located[index]) return undefined;
      continue;
    }
    parameters[own] = answerMember(theirs);
  }
  return parameters;
}

const pathOf = (target: RestRoute): string => `\`${target.method} ${API_PREFIX}${target.path}\``;

/** A declared link, checked against both ends: a mistake fails at start, not in a client. */
function declaredLink(source: RestRoute, link: RestLink, routes: readonly RestRoute[]): [string, oas31.LinkObject] {
  const fail = (why: string): never => {
    throw new Error(`${source.procedurePath}: its link to ${link.to} ${why}`);
  };
  const target = routes.find((route) => route.procedurePath === link.to) ?? fail('names no REST operation');
  const answer = source.output instanceof z.ZodObject ? Object.keys(source.output.shape) : [];
  const pointers = [...Object.values(link.parameters ?? {})];
  const requestBody = link.body ? bodyTemplate(link.body, pointers) : undefined;
  for (const pointer of pointers) {
    if (!answer.includes(pointer.split('/')[0] ?? '')) fail(`reads ${pointer}, which the answer does not have`);
  }
  const names = Object.keys(link.parameters ?? {});
  if (names.length !== target.pathParams.size || names.some((name) => !target.pathParams.has(name))) {
    fail(`must fill exactly its path parameters (${[...target.pathParams.keys()].join(', ') || 'none'})`);
  }
  const bodyMembers = target.hasBody ? Object.keys(target.input.shape).filter((key) => !target.pathParams.has(key)) : [];
  for (const member of Object.keys(link.body ?? {})) if (!bodyMembers.includes(member)) fail(`fills ${member}, which its body does not have`);
  const parameters = Object.fromEntries(Object.entries(link.parameters ?? {}).map(([name, pointer]) => [name, answerMember(pointer)]));
  return [
    operationIdOf(target),
    {
      operationId: operationIdOf(target),
      ...(link.parameters ? { parameters } : {}),
      ...(requestBody !== undefined ? { requestBody } : {}),
      description: `${pathOf(target)}: ${link.description}`,
    },
  ];
}

/** The links of `route`'s success answer, by target operationId; undefined when it has none. */
export function linksOf(route: RestRoute, routes: readonly RestRoute[]): Record<string, oas31.LinkObject> | undefined {
  const links: Record<string, oas31.LinkObject> = {};
  const location = route.rest.location;
  if (location !== undefined) {
    for (const target of routes) {
      const parameters = target === route ? undefined : parametersFromLocation(location, target);
      if (parameters === undefined) continue;
      links[operationIdOf(target)] = {
        operationId: operationIdOf(target),
        parameters,
        description: `${pathOf(target)} on the resource at this answer's \`Location\`: ${target.summary ?? operationIdOf(target)}.`,
      };
    }
  }
  for (const link of route.rest.links ?? []) {
    const [name, object] = declaredLink(route, link, routes);
    links[name] = object;
  }
  return Object.keys(links).length > 0 ? links : undefined;
}
