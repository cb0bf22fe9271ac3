import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/** An RFC 9457 problem as the service answers it. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  request_id?: string;
  errors?: { field: string; message: string }[];
  allowed?: string[];
  [extension: string]: unknown;
}

/** Asserts a problem response of this status and slug (and, if given, naming these fields). */
export function expectProblem(res: LightMyRequestResponse, status: number, slug: string, fields?: string[]): ProblemBody {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = res.json<ProblemBody>();
  expect(problem).toMatchObject({ type: `/problems/${slug}`, status });
  if (fields) expect((problem.errors ?? []).map((e) => e.field)).toEqual(expect.arrayContaining(fields));
  return problem;
}
