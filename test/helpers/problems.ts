import { TRPCError } from '@trpc/server';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { DomainError, type Problem, type ProblemSlug } from '../../server/errors/problems.ts';

/** An RFC 9457 problem as the service answers it (`allowed` on invalid state transitions). */
export type ProblemBody = Problem & { allowed?: string[] };

export interface ExpectedProblem {
  /** Fields the `errors` array must name (others may be named too). */
  fields?: string[];
  /** The request path the problem's `instance` must be. */
  instance?: string;
}

/**
 * Asserts a problem response of this status and slug, shaped as docs/api.md#errors says every
 * one is: problem+json, never cached, a title and a detail, and the request id echoed.
 */
export function expectProblem(res: LightMyRequestResponse, status: number, slug: string, expected: ExpectedProblem = {}): ProblemBody {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.headers['cache-control']).toBe('no-store');
  const problem = res.json<ProblemBody>();
  expect(problem).toMatchObject({ type: `/problems/${slug}`, status });
  expect(problem.title).toEqual(expect.stringMatching(/./));
  expect(problem.detail).toEqual(expect.stringMatching(/./));
  expect(problem.request_id).toEqual(expect.stringMatching(/./));
  // docs/api.md#errors: `request_id` echoes the X-Request-Id response header, on every problem.
  expect(problem.request_id).toBe(res.headers['x-request-id']);
  if (expected.instance !== undefined) expect(problem.instance).toBe(expected.instance);
  if (expected.fields) expect((problem.errors ?? []).map((e) => e.field)).toEqual(expect.arrayContaining(expected.fields));
  return problem;
}

/** The fields a problem's `errors` array names, sorted. */
export const problemFields = (problem: ProblemBody): string[] => (problem.errors ?? []).map((e) => e.field).sort();

/**
 * Awaits a rejection from a procedure called without HTTP: a TRPCError of `code` whose cause is
 * the DomainError of `slug` (the harness docs in server/testing.ts).
 */
export async function expectDomainError(promise: Promise<unknown>, code: TRPCError['code'], slug: ProblemSlug): Promise<DomainError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TRPCError);
  const trpcError = error as TRPCError;
  expect(trpcError.code).toBe(code);
  expect(trpcError.cause).toBeInstanceOf(DomainError);
  const domain = trpcError.cause as DomainError;
  expect(domain.slug).toBe(slug);
  return domain;
}
