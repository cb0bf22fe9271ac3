import { describe, expect, it } from 'vitest';
import { DomainError } from '../../server/errors/problems.ts';
import { databaseProblem } from '../../server/errors/db-errors.ts';

/** A driver error as drizzle hands it on: wrapped, the driver's error as `cause`. */
function wrapped(fields: Record<string, unknown>, message = 'driver failure'): Error {
  const driver = Object.assign(new Error(message), fields);
  return new Error('Failed query: select ...', { cause: driver });
}

describe('database failures map to the problem they mean for the client (issue 7, item 3)', () => {
  it.each([
    ['connection refused', { code: 'ECONNREFUSED' }],
    ['connect timeout', { code: 'CONNECT_TIMEOUT' }],
    ['connection closed', { code: 'CONNECTION_CLOSED' }],
    ['connection ended', { code: 'CONNECTION_ENDED' }],
    ['connection destroyed', { code: 'CONNECTION_DESTROYED' }],
    ['connection reset', { code: 'ECONNRESET' }],
    ['class 08 connection failure', { code: '08006' }],
    ['admin shutdown', { code: '57P01' }],
    ['cannot connect now', { code: '57P03' }],
    ['too many connections', { code: '53300' }],
    ['statement timeout', { code: '57014' }],
    ['lock timeout', { code: '55P03' }],
    ['pool acquire timeout', { code: 'POOL_ACQUIRE_TIMEOUT' }],
  ])('%s -> 503 service-unavailable with Retry-After, keeping the cause', (_name, fields) => {
    const error = wrapped(fields);
    const problem = databaseProblem(error);
    expect(problem).toBeInstanceOf(DomainError);
    expect(problem?.slug).toBe('service-unavailable');
    expect(problem?.status).toBe(503);
    expect(Number(problem?.headers['retry-after'])).toBeGreaterThan(0);
    expect(problem?.cause).toBe(error);
    expect(problem?.message).not.toMatch(/driver failure|select/);
  });

  it('a closed PGlite -> 503 service-unavailable', () => {
    expect(databaseProblem(new Error('PGlite is closed'))?.slug).toBe('service-unavailable');
  });

  it('numeric value out of range (22003) -> 422 validation-error', () => {
    const problem = databaseProblem(wrapped({ code: '22003' }, 'integer out of range'));
    expect(problem?.slug).toBe('validation-error');
    expect(problem?.status).toBe(422);
    expect(problem?.message).not.toMatch(/integer out of range/);
  });

  it.each([
    ['a unique violation (the service maps it itself)', wrapped({ code: '23505' })],
    ['a syntax error (a bug: stays 500)', wrapped({ code: '42601' })],
    ['an error without a code', new Error('boom')],
    ['a non-error value', 'boom'],
  ])('%s -> not a database problem', (_name, error) => {
    expect(databaseProblem(error)).toBeUndefined();
  });
});
