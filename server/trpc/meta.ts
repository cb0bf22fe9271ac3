/**
 * What a procedure declares about itself beside its input and output: how the REST facade answers
 * it, and who may call it. Its own file, so the layers that read it (the idempotency middleware,
 * the REST facade, the OpenAPI document) need not import the tRPC instance (docs/architecture.md).
 */
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { z } from 'zod';
import type { Policy } from '../auth/policy.ts';
import type { Context } from './context.ts';
import type { ProblemSlug } from '../errors/problems.ts';
import type { JsonPatchOperation } from '../lib/patch-documents.ts';

/** How the REST facade answers a procedure, beside trpc-to-openapi's method and path. */
export interface RestMeta {
  /** Success status; default 200. */
  status?: 200 | 201 | 202 | 204;
  /**
   * Reads only (default `private`): `public` -> `public, max-age=60`; `private` -> revalidate every
   * time; `no-store`. Writes always answer `no-store`, so the route table refuses it on them.
   */
  cache?: 'public' | 'private' | 'no-store';
  /** Path template under `/api/v1` filled from the output, e.g. `/products/{id}` -> `Location`. */
  location?: string;
  /** `item` gets `Last-Modified` from `updated_at`; `list` gets an RFC 8288 `Link` header. */
  kind?: 'item' | 'list';
  /**
   * PATCH: the body is a patch document of the request's Content-Type; the procedure gets
   * `{ ...pathParams, format: 'merge-patch' | 'json-patch', document: body }`.
   */
  patch?: PatchMeta;
  /** Problem slugs this operation can answer besides the generic ones (for the OpenAPI document). */
  problems?: readonly ProblemSlug[];
  /**
   * Output fields shown only in the first answer of a creation (a client secret): never stored
   * with an `Idempotency-Key`, so a replay answers without them (server/trpc/idempotency.ts).
   */
  notReplayed?: readonly string[];
  /**
   * A POST answering 200 that honours `Idempotency-Key` all the same (docs/api.md#idempotency): an
   * action whose answer cannot be had again any other way (a rotated webhook secret), so a client
   * that lost it retries with its key and gets that answer, instead of a second action.
   */
  honoursIdempotencyKey?: true;
  /**
   * Output fields a replay answers again although they are secrets (a rotated webhook secret):
   * stored with the key's result only encrypted, bound to the key, and decrypted for the replay
   * (server/trpc/idempotency.ts, `sealFields`).
   */
  sealed?: readonly string[];
  /**
   * The next steps a client takes with this operation's answer beyond those its `location` names
   * (the OpenAPI document derives those): OpenAPI links, which schemathesis's stateful phase follows.
   */
  links?: readonly RestLink[];
}

/** A PATCH operation as the OpenAPI document describes it (docs/api.md#writes). */
export interface PatchMeta {
  /** One merge patch and one JSON Patch of this resource, shown in the document. */
  examples: { mergePatch: Readonly<Record<string, unknown>>; jsonPatch: readonly JsonPatchOperation[] };
  /**
   * The merge patch's schema when no PUT on the same path describes it (a payment's PATCH takes
   * metadata only); without it the merge patch is the PUT body with every member optional.
   */
  mergePatch?: z.ZodType;
}

/**
 * A next step from an operation's answer to another procedure: which of the target's path
 * parameters and body members come from which members of the answer, named by JSON pointer into
 * it, e.g. paying a confirmed order: `{ to: 'payments.create', body: { order_id: 'id', amount: 'total' } }`,
 * or ordering the first product of a page: `body: { items: [{ product_id: 'data/0/id', quantity: 1 }] }`.
 */
export interface RestLink {
  /** The target procedure's dotted path on the router. */
  to: string;
  /** Target path parameter -> pointer into the answer. */
  parameters?: Readonly<Record<string, string>>;
  /** Members of the target's body: every string a pointer into the answer, anything else as it is. */
  body?: Readonly<Record<string, unknown>>;
  /** What the step does, for the document. */
  description: string;
}

/**
 * What a creating operation does before an `Idempotency-Key`'s transaction begins, with the input
 * as sent: a wait on the outside world (DNS) that must hold no connection nor the key's lock
 * (server/trpc/idempotency.ts). Its answer reaches the procedure as `ctx.prepared`; it throws
 * nothing, so a replay still answers the stored result.
 */
export type Prepare = (input: unknown, ctx: Context) => Promise<unknown>;

/** `policy`: who may call the procedure (server/auth/policy.ts); every procedure declares one. */
export type Meta = OpenApiMeta<{ rest?: RestMeta; policy?: Policy; prepare?: Prepare }>;
