/**
 * W3C Trace Context (docs/api.md#tracing): a request's `traceparent` names the trace it belongs to,
 * and that trace id is on every log line of the request beside its request id (`trace_id`, the
 * name OpenTelemetry's log correlation uses), so a caller's trace and our logs meet. A request
 * without one (or with one that is not valid) gets a new trace id: every line still carries one.
 *
 * Nothing is answered: an invalid header is ignored, never refused (the specification asks a
 * receiver to restart the trace, not to fail the request). No `traceresponse` is sent either: it is
 * a draft of Trace Context Level 2, and we start no span of our own to report; `X-Request-Id`
 * already names the request in the answer and on the same log lines.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyServerOptions } from 'fastify';

export interface TraceParent {
  version: string;
  /** 32 lower-case hex digits, not all zero. */
  traceId: string;
  /** The caller's span: 16 lower-case hex digits, not all zero. */
  parentId: string;
  /** Trace flags, 2 hex digits (bit 0: sampled). */
  flags: string;
}

/** version-traceid-parentid-flags, lower-case hex only (the specification's HEXDIGLC). */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ALL_ZERO = /^0+$/;

/**
 * The `traceparent` header as W3C Trace Context Level 1 reads it, or undefined when it is not
 * valid. Version `ff` is invalid; version `00` has exactly four fields; a later version may carry
 * more after a `-`, and its first four fields are read as version 00's (forward compatibility).
 */
export function parseTraceparent(header: string | string[] | undefined): TraceParent | undefined {
  // A repeated header (Node joins it with ", ") is no valid traceparent.
  if (typeof header !== 'string') return undefined;
  const match = TRACEPARENT.exec(header);
  if (match === null) return undefined;
  const [, version = '', traceId = '', parentId = '', flags = '', rest] = match;
  if (version === 'ff') return undefined;
  if (version === '00' && rest !== undefined) return undefined;
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(parentId)) return undefined;
  return { version, traceId, parentId, flags };
}

/** A new trace id: 32 random lower-case hex digits (a version 4 UUID's, never all zero). */
export function newTraceId(): string {
  return randomUUID().replaceAll('-', '');
}

/** The trace a request belongs to: its valid `traceparent`'s, else a new one. */
export function traceIdOf(header: string | string[] | undefined): string {
  return parseTraceparent(header)?.traceId ?? newTraceId();
}

/**
 * Fastify's `childLoggerFactory`: every request's logger (and so each of its lines, the one line
 * per request included) carries `trace_id` beside `reqId`.
 */
export const traceContextLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options, rawRequest) =>
  logger.child({ ...bindings, trace_id: traceIdOf(rawRequest.headers.traceparent) }, options);
