/**
 * Issue 8, item 6: whatever was thrown becomes a DomainError in one function, whichever door
 * or layer answers (tRPC's formatter and middleware, the REST facade, Fastify's error handler).
 */
import { TRPCError } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DomainError } from '../../server/errors/problems.ts';
import { toDomainError } from '../../server/errors/to-domain-error.ts';

const zodError = (): z.ZodError => {
  const result = z.object({ quantity: z.int() }).safeParse({ quantity: 'two' });
  if (result.success) throw new Error('expected the parse to fail');
  return result.error;
};

describe('every failure converts to the DomainError it means, in one place', () => {
  it('a DomainError is itself', () => {
    const error = new DomainError('conflict', 'Busy.');
    expect(toDomainError(error)).toBe(error);
  });

  it('a TRPCError is read through its DomainError cause', () => {
    const domain = new DomainError('not-found', 'No such order.');
    expect(toDomainError(new TRPCError({ code: 'NOT_FOUND', cause: domain }))).toBe(domain);
  });

  it('input validation (BAD_REQUEST with a ZodError) is 422 with one entry per field', () => {
    const domain = toDomainError(new TRPCError({ code: 'BAD_REQUEST', cause: zodError() }));
    expect(domain.slug).toBe('validation-error');
    expect(domain.errors?.map((e) => e.field)).toEqual(['quantity']);
  });

  it('output validation (a ZodError under INTERNAL_SERVER_ERROR) is the service\'s bug: 500', () => {
    const cause = zodError();
    const domain = toDomainError(new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause }));
    expect(domain.slug).toBe('internal-error');
    expect(domain.cause).toBe(cause);
  });

  it('tRPC refusals before any procedure map to their problems', () => {
    expect(toDomainError(new TRPCError({ code: 'NOT_FOUND' })).slug).toBe('not-found');
    expect(toDomainError(new TRPCError({ code: 'PARSE_ERROR' })).slug).toBe('malformed-request');
    expect(toDomainError(new TRPCError({ code: 'PAYLOAD_TOO_LARGE' })).slug).toBe('payload-too-large');
  });

  it('Fastify errors map by code, then by 4xx status', () => {
    expect(toDomainError(Object.assign(new Error('x'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 })).slug).toBe('payload-too-large');
    expect(toDomainError(Object.assign(new SyntaxError('Unexpected token'), { statusCode: 400 })).slug).toBe('malformed-request');
    expect(toDomainError(Object.assign(new Error('x'), { statusCode: 410 })).slug).toBe('gone');
  });

  it('database failures answer what they mean, on either path', () => {
    const driver = Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
    expect(toDomainError(driver).slug).toBe('service-unavailable');
    expect(toDomainError(new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: driver })).slug).toBe('service-unavailable');
  });

  it('anything else is a 500 that keeps its cause for the log', () => {
    const bug = new Error('undefined is not a function');
    const domain = toDomainError(bug);
    expect(domain.slug).toBe('internal-error');
    expect(domain.cause).toBe(bug);
    expect(domain.message).not.toContain('undefined');
  });
});
