import { initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { z } from 'zod';
import { missingToken } from '../auth/tokens.ts';
import { DomainError, internalError, problemBody, problemTypes, type Problem } from '../errors/problems.ts';
import { validationError } from '../errors/zod-errors.ts';
import { databaseProblem } from '../lib/db-errors.ts';
import type { Context } from './context.ts';

/** How the REST facade answers a procedure, beside trpc-to-openapi's method and path. */
export interface RestMeta {
  /** Success status; default 200. */
  status?: 200 | 201 | 202 | 204;
  /** `public` -> `public, max-age=60`; `private` -> revalidate every time; `no-store`. */
  cache?: 'public' | 'private' | 'no-store';
  /** Path template under `/api/v1` filled from the output, e.g. `/products/{id}` -> `Location`. */
  location?: string;
  /** `item` gets `Last-Modified` from `updated_at`; `list` gets an RFC 8288 `Link` header. */
  kind?: 'item' | 'list';
  /**
   * PATCH: the body is a patch document of the request's Content-Type; the procedure gets
   * `{ ...pathParams, format: 'merge-patch' | 'json-patch', document: body }`.
   */
  patch?: boolean;
  /** Problem slugs this operation can answer besides the generic ones (for the OpenAPI document). */
  problems?: readonly (keyof typeof problemTypes)[];
}

export type Meta = OpenApiMeta<{ rest?: RestMeta }>;

/** Every failure of a procedure, whatever threw it, as the DomainError it means. */
export function toDomainError(error: unknown): DomainError {
  const cause = error instanceof TRPCError ? error.cause : error;
  if (cause instanceof DomainError) return cause;
  if (error instanceof TRPCError && error.code === 'BAD_REQUEST' && cause instanceof z.ZodError) {
    return validationError(cause.issues);
  }
  if (error instanceof TRPCError) {
    switch (error.code) {
      case 'NOT_FOUND':
        return new DomainError('not-found', 'No such procedure.');
      case 'METHOD_NOT_SUPPORTED':
        return new DomainError('method-not-allowed', error.message);
      case 'PARSE_ERROR':
      case 'BAD_REQUEST':
        return new DomainError('malformed-request', 'The request could not be parsed.');
      case 'PAYLOAD_TOO_LARGE':
        return new DomainError('payload-too-large', 'The request body is too large.');
      case 'UNSUPPORTED_MEDIA_TYPE':
        return new DomainError('unsupported-media-type', 'The request has an unsupported Content-Type.');
      default:
        break;
    }
  }
  return databaseProblem(cause) ?? internalError(cause);
}

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    errorFormatter({ shape, error, ctx }) {
      const problem: Problem = problemBody(toDomainError(error), undefined, ctx?.requestId);
      return {
        message: problem.detail,
        code: shape.code,
        data: { code: shape.data.code, httpStatus: problem.status, path: shape.data.path, problem },
      };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** Turns whatever a procedure threw into a TRPCError whose code and cause are the domain's. */
const domainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok) {
    const domain = toDomainError(result.error);
    throw new TRPCError({ code: problemTypes[domain.slug].code, message: domain.message, cause: domain });
  }
  return result;
});

export const publicProcedure = t.procedure.use(domainErrors);

export const authedProcedure = publicProcedure.use(({ ctx, next }) => {
  if (!ctx.caller) throw missingToken();
  return next({ ctx: { caller: ctx.caller } });
});

const forbidden = (what: string) => new DomainError('forbidden', `Your role may not ${what}.`);

export const adminProcedure = authedProcedure.use(({ ctx, next }) => {
  if (ctx.caller.role !== 'admin') throw forbidden('perform this operation');
  return next();
});

/** Admins, or service clients holding `scope` (client credentials act by scope). */
export const scopedProcedure = (scope: string) =>
  authedProcedure.use(({ ctx, next }) => {
    const { caller } = ctx;
    if (caller.role === 'admin' || (caller.role === 'service' && caller.scopes.has(scope))) return next();
    throw forbidden(`perform this operation (needs the admin role or the "${scope}" scope)`);
  });

/** Customers (on their own resources, which the service enforces), admins, and services holding `scope`. */
export const customerProcedure = (scope: string) =>
  authedProcedure.use(({ ctx, next }) => {
    const { caller } = ctx;
    if (caller.role !== 'service' || caller.scopes.has(scope)) return next();
    throw forbidden(`perform this operation (a service client needs the "${scope}" scope)`);
  });
