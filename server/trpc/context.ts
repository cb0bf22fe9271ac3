import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { pino } from 'pino';
import type { Caller } from '../auth/tokens.ts';
import type { Db } from '../db/client.ts';
import type { UnitOfWork } from '../db/unit-of-work.ts';
import type { LiveEvents } from '../events/live.ts';
import { Settings } from '../lib/settings.ts';
import { MAX_LISTED_ERRORS } from '../errors/problems.ts';
import { parseEntityTags } from '../lib/etag.ts';
import type { Preconditions } from '../lib/preconditions.ts';
import { processCursors, type CursorCodec } from '../lib/cursors.ts';

// Services import it from here today; it lives in lib/ so lib/ never imports trpc/.
export type { Preconditions };

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified caller (null: anonymous), set before routing on API and tRPC requests (server/http/admission.ts). */
    caller: Caller | null;
  }
}

/**
 * What the procedure layer adds to the answer, whichever door carries it: the REST facade copies
 * the headers onto its reply, `/trpc` sends them through `responseMeta`. A middleware fills it
 * once and both doors answer alike.
 */
export interface ResponseBag {
  headers: Record<string, string>;
  /**
   * Set by the idempotency layer when the output is a stored one (a retried request): REST then
   * answers 200 instead of the operation's 201/202 (docs/api.md#idempotency).
   */
  replayed?: boolean;
}

/** How the idempotency layer (server/trpc/idempotency.ts) keeps and waits for keys. */
export interface IdempotencySettings {
  /** How long a key is kept, then purged (`IDEMPOTENCY_TTL_HOURS`). */
  ttlHours: number;
  /** How long a request waits for the first request with its key before 409 (docs/api.md#idempotency: 10 s). */
  waitTimeoutMs: number;
  /**
   * HMAC key of the input fingerprints kept with each key: inputs may hold passwords, which must
   * not be stored as a plain, guessable hash. Every instance must use the same one (`main.ts`
   * derives it from JWT_SECRET); the default serves tests and scripts only.
   */
  fingerprintKey: string;
  /** Told of every answer replayed from a stored result, with the operation (for /metrics). */
  onReplay?: ((operation: string) => void) | undefined;
}

export const defaultIdempotencySettings: IdempotencySettings = { ttlHours: 24, waitTimeoutMs: 10_000, fingerprintKey: 'order-service-local' };

export interface Context {
  /** The pool's handle: reads run on it, and a write's `transaction(work ?? db, ...)` begins there without `work`. */
  db: Db;
  /**
   * The unit of work the procedure continues, begun for it by the idempotency layer: with an
   * `Idempotency-Key`, the key's row commits with what the procedure writes, so a creating
   * service writes in `transaction(work ?? db, ...)` (server/db/unit-of-work.ts). Absent otherwise.
   */
  work: UnitOfWork | undefined;
  caller: Caller | null;
  requestId: string;
  /** The request's logger: its lines carry the request id. */
  log: FastifyBaseLogger;
  preconditions: Preconditions;
  /** The request's `Idempotency-Key` header as sent (validated by the idempotency layer). */
  idempotencyKey: string | undefined;
  /** The client's address (`request.ip`, proxy-aware): scopes anonymous callers' idempotency keys. */
  clientAddress: string | undefined;
  idempotency: IdempotencySettings;
  /** Signs and reads list cursors (server/modules/paging.ts). */
  cursors: CursorCodec;
  /** The modules' settings (server/lib/settings.ts): a module reads its own, `ctx.settings.get(key)`. */
  settings: Settings;
  response: ResponseBag;
  /**
   * How many field errors a problem lists (`errors`; `errors_total` counts them all): the whole
   * MAX_LISTED_ERRORS, but a /trpc batch shares them among its calls, so its answer stays small.
   */
  listedErrors: number;
  /** The live events of this process (server/events/live.ts), for subscriptions; absent: none served. */
  live: LiveEvents | undefined;
  /** What the procedure's `meta.prepare` answered before an Idempotency-Key's transaction; absent without one. */
  prepared?: unknown;
}

export interface ContextInnerOptions {
  db: Db;
  caller?: Caller | null;
  requestId?: string;
  log?: FastifyBaseLogger;
  preconditions?: Preconditions;
  idempotencyKey?: string;
  clientAddress?: string;
  idempotency?: IdempotencySettings;
  cursors?: CursorCodec;
  live?: LiveEvents;
  settings?: Settings;
}

/** Without settings given, every module's defaults. */
const noSettings = new Settings();

/** Calls without a request (tests, scripts) log nothing unless given a logger. */
const silentLogger: FastifyBaseLogger = pino({ enabled: false });

/**
 * Builds a context from plain values: tests and scripts call procedures with it through
 * `createCaller`, no HTTP involved. The HTTP doors build theirs with `createContext`.
 */
export function createContextInner(options: ContextInnerOptions): Context {
  return {
    db: options.db,
    work: undefined,
    caller: options.caller ?? null,
    requestId: options.requestId ?? 'local',
    log: options.log ?? silentLogger,
    preconditions: options.preconditions ?? {},
    idempotencyKey: options.idempotencyKey,
    clientAddress: options.clientAddress,
    idempotency: options.idempotency ?? defaultIdempotencySettings,
    cursors: options.cursors ?? processCursors,
    settings: options.settings ?? noSettings,
    response: { headers: {} },
    listedErrors: MAX_LISTED_ERRORS,
    live: options.live,
  };
}

/** What a context needs besides the request. */
export interface ContextDeps {
  db: Db;
  idempotency?: IdempotencySettings;
  cursors?: CursorCodec;
  live?: LiveEvents;
  settings?: Settings;
}

/**
 * The one mapping from an HTTP request to a context, for the REST facade and `/trpc` alike, so
 * what a procedure sees cannot depend on the door it was called through.
 */
export function createContext(request: FastifyRequest, deps: ContextDeps): Context {
  const ifMatch = parseEntityTags(request.headers['if-match']);
  // Node joins a repeated header with ", ": a key sent twice is no valid key, and is refused.
  const idempotencyKey = request.headers['idempotency-key'];
  return createContextInner({
    db: deps.db,
    caller: request.caller,
    requestId: String(request.id),
    log: request.log,
    preconditions: ifMatch ? { ifMatch } : {},
    ...(typeof idempotencyKey === 'string' ? { idempotencyKey } : {}),
    clientAddress: request.ip,
    ...(deps.idempotency ? { idempotency: deps.idempotency } : {}),
    ...(deps.cursors ? { cursors: deps.cursors } : {}),
    ...(deps.live ? { live: deps.live } : {}),
    ...(deps.settings ? { settings: deps.settings } : {}),
  });
}
