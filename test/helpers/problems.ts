import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Problem } from '../../server/errors/problems.ts';

/** An RFC 9457 problem as the service answers it (`allowed` on invalid state transitions). */
export type ProblemBody = Problem & { allowed?: string[] };

/** Asserts a problem response of this status and slug (and, if given, naming these fields). */
export function expectProblem(res: LightMyRequestResponse, status: number, slug: string, fields?: string[]): ProblemBody {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = res.json<ProblemBody>();
  expect(problem).toMatchObject({ type: `/problems/${slug}`, status });
  if (fields) expect((problem.errors ?? []).map((e) => e.field)).toEqual(expect.arrayContaining(fields));
  return problem;
}
