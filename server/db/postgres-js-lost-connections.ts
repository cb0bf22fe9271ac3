/**
 * Our one reach into how postgres.js behaves when PostgreSQL closes a connection (a backend
 * terminated, a stalled process's transaction ended by `idle_in_transaction_session_timeout`, a
 * network reset). Checked on postgres.js 3.4.9; test/db/postgres-js-lost-connections.test.ts
 * makes each case happen and fails if an upgrade (of postgres.js or drizzle) changes what this
 * file relies on (test/db/migration-lock.test.ts: `singleSessionClient`). Public API only:
 * `begin`, `savepoint` and `unsafe` (all drizzle calls) and the `fetch_types`, `onclose`,
 * `max_lifetime` and `idle_timeout` options.
 *
 * The defect (postgres.js issues #1066, #1154, #1208, #1216; open PRs #1168, #1215): a
 * transaction's scope keeps the connection it began on and sends to it without asking whether it
 * is still open. When the socket closes, postgres.js rejects the statement in flight and
 * `begin()` itself, but the transaction's callback runs on: its next statement, or the ROLLBACK
 * (after a failure) or COMMIT (after success) the scope sends itself once the callback settles,
 * goes to the closed connection. That write is flushed from a `setImmediate` to a socket variable
 * now null: `TypeError: Cannot read properties of null (reading 'write')` in `nextWrite`, thrown
 * outside any promise, and the process exits. Had the pool reconnected that connection object
 * for other work meanwhile, the statement would run there instead: outside its transaction.
 *
 * The guard: a transaction is over for postgres.js once `begin()` has settled (postgres.js
 * rejects it the moment the connection closes), and suspected lost as soon as a statement
 * through it fails with a connection error (that failure reaches us before the callback hears of
 * it). From then on
 *   - a statement through the transaction or its savepoints is refused here (an error with code
 *     CONNECTION_CLOSED, which the error mapping answers 503), never handed to postgres.js;
 *   - the callback's outcome is not handed back to postgres.js, so the scope waits forever and
 *     sends neither COMMIT nor ROLLBACK (PostgreSQL rolled the transaction back when the
 *     connection closed). The request has its answer from `begin()`'s rejection already; the
 *     abandoned scope is garbage. Should a suspected loss not close the connection after all,
 *     the outcome is handed back after LOST_CONNECTION_GRACE_MS, as it would have been at once.
 *
 * Why this and not the alternatives: a patched postgres.js is against the house rule, and the
 * upstream guard (#1168) only skips the fatal write, leaving a late statement free to run on a
 * reconnected connection; `process.on('uncaughtException')` would hide our own bugs as well; no
 * connection-lifetime setting keeps PostgreSQL or a network from closing a connection in the
 * middle of a transaction; node-postgres is not installed, and moving drizzle to it would change
 * every statement's path (the prepared statements of statements.ts) to save this one file.
 */

import postgres from 'postgres';

/**
 * Options every postgres.js client of ours takes. `fetch_types: false`: on each new connection
 * postgres.js otherwise first queries the array types from `pg_catalog`, from a promise nobody
 * awaits (`fetchArrayTypes()` in its `ReadyForQuery`); a connection closed during that query
 * rejects it (at once, or with the terminated backend's error after the reconnect, its issue
 * #1223), and that unhandled rejection ends the process. We lose nothing by it: drizzle reads and
 * writes array columns in PostgreSQL's text form itself, and no statement of ours passes a
 * JavaScript array to postgres.js.
 */
export const lostConnectionOptions = { fetch_types: false } as const;

/**
 * How long a transaction whose statement failed with a connection error waits for postgres.js to
 * report the connection closed before its outcome is handed back after all. A real close is
 * reported within the same turn of the event loop; this only bounds a misjudged error.
 */
const LOST_CONNECTION_GRACE_MS = 5_000;

/** The part of a postgres.js `sql` object (pool or transaction scope) the guard wraps. */
interface ScopedClient {
  unsafe(query: string, args?: unknown[], options?: Record<string, unknown>): unknown;
  begin?: (...args: unknown[]) => Promise<unknown>;
  savepoint?: (...args: unknown[]) => Promise<unknown>;
}

interface TransactionState {
  /** `begin()` has settled: the scope must not reach postgres.js again. */
  over: boolean;
  /** A statement failed with a connection error: its close is about to be reported. */
  suspect: boolean;
  /** Resolves when `begin()` settles, either way. */
  settled: Promise<void>;
}

/**
 * Codes postgres.js gives a statement whose connection went away under it (`Errors.connection`:
 * the socket's close, `terminate()`, the connect timer). A failure of the socket itself, which
 * postgres.js passes on from the socket's `error` event, carries the failed `syscall` (ECONNRESET,
 * EPIPE, ...) or a Node stream or TLS code (a write after the peer ended the socket).
 */
const LOST_CONNECTION_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT']);
const SOCKET_ERROR_CODE = /^ERR_(STREAM|SOCKET|TLS|SSL)_/;

/** The statement failed because its connection is gone, not because of what it asked. */
export function isLostConnection(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const { code, syscall } = error as { code?: unknown; syscall?: unknown };
  if (typeof syscall === 'string') return true;
  return typeof code === 'string' && (LOST_CONNECTION_CODES.has(code) || SOCKET_ERROR_CODE.test(code));
}

const connectionClosed = (): Error => Object.assign(new Error("The transaction's database connection was closed"), { code: 'CONNECTION_CLOSED' });

/**
 * What a refused statement answers: a rejected promise, made only when it is awaited (as a
 * postgres.js query runs only then), so an unawaited one leaves no unhandled rejection; with the
 * query methods drizzle calls on a statement (`values`, `raw`).
 */
class RefusedStatement implements PromiseLike<never> {
  constructor(private readonly refusal: () => Error = connectionClosed) {}

  then<A = never, B = never>(onFulfilled?: ((value: never) => A | PromiseLike<A>) | null, onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return Promise.reject(this.refusal()).then(onFulfilled, onRejected);
  }

  values(): this {
    return this;
  }

  raw(): this {
    return this;
  }
}

/** Makes `client.begin` (a pool's) run every transaction under the guard. Returns `client`. */
export function guardLostConnections<T>(client: T): T {
  const sql = client as unknown as ScopedClient;
  const begin = sql.begin;
  if (!begin) return client;
  sql.begin = (...args: unknown[]) => {
    let ended: () => void = () => {};
    const state: TransactionState = { over: false, suspect: false, settled: new Promise((resolve) => (ended = resolve)) };
    const work = args.at(-1) as (scoped: unknown) => unknown;
    const transaction = begin(...args.slice(0, -1), (scoped: unknown) => guardedScope(scoped, work, state));
    const end = () => {
      state.over = true;
      ended();
    };
    transaction.then(end, end);
    return transaction;
  };
  return client;
}

/**
 * Runs a transaction's (or savepoint's) callback on a guarded scope, and hands its outcome back
 * to postgres.js only while the transaction's connection is not known to be gone.
 */
function guardedScope(scoped: unknown, work: (scoped: unknown) => unknown, state: TransactionState): Promise<unknown> {
  guardScope(scoped as ScopedClient, state);
  return new Promise((resolve, reject) => {
    const handBack = async (settle: () => void) => {
      if (state.suspect && !state.over) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([state.settled, new Promise((wake) => (timer = setTimeout(wake, LOST_CONNECTION_GRACE_MS)))]);
        clearTimeout(timer);
      }
      if (!state.over) settle();
    };
    Promise.resolve()
      .then(() => work(scoped))
      .then(
        (value) => handBack(() => resolve(value)),
        (error: unknown) => handBack(() => reject(error)),
      );
  });
}

function guardScope(scoped: ScopedClient, state: TransactionState): void {
  const unsafe = scoped.unsafe;
  scoped.unsafe = (query, args, options) => {
    if (state.over || state.suspect) return new RefusedStatement();
    const statement = unsafe(query, args, options);
    // Subscribed before the caller, so the mark is set before the callback hears of the failure.
    // (postgres.js's scope subscribes to each of its statements the same way.)
    (statement as Promise<unknown>).catch((error: unknown) => {
      if (isLostConnection(error)) state.suspect = true;
    });
    return statement;
  };
  const savepoint = scoped.savepoint;
  if (savepoint) {
    scoped.savepoint = (...args: unknown[]) => {
      if (state.over || state.suspect) return Promise.reject(connectionClosed());
      const work = args.at(-1) as (inner: unknown) => unknown;
      return savepoint(...args.slice(0, -1), (inner: unknown) => guardedScope(inner, work, state));
    };
  }
}

const sessionClosed = (): Error =>
  Object.assign(new Error("The session's database connection was closed: a new connection would be another session, without its locks, so nothing more is run"), {
    code: 'CONNECTION_CLOSED',
  });

/**
 * A postgres.js client of one connection that is never replaced: once that connection is lost,
 * every statement through the client is refused (CONNECTION_CLOSED) instead of being sent on a new
 * connection. A new connection is a new session, without what the old one held: the migration lock
 * (migration-lock.ts) is a session advisory lock. Lost means closed (the `onclose` option, called
 * as each connection closes; here there is one), or a statement failed in a way that closes it (a
 * socket error, a FATAL from PostgreSQL), since postgres.js hears of the close itself a moment
 * later and would meanwhile queue a statement for the connection it then opens. For the same reason
 * the client is for statements sent one at a time, each awaited (as drizzle's migrator does): one
 * already queued behind another when the connection closes runs on the next. postgres.js's own
 * reasons to close the connection are off: `max_lifetime` (by default it ends a connection 30 to 60
 * minutes after it connected, whatever it is doing) and `idle_timeout`. Its transactions are
 * guarded as the pool's (`guardLostConnections`).
 *
 * A reserved connection (`sql.reserve()`) would say "one session" more directly, but on
 * postgres.js 3.4.9 it has neither `begin` nor `options`, both of which drizzle needs, and it too
 * sends to a connection that has closed.
 */
export function singleSessionClient(url: string, options: Omit<postgres.Options<Record<string, never>>, 'max' | 'max_lifetime' | 'idle_timeout'>): postgres.Sql {
  let lost = false;
  const client = postgres(url, {
    ...options,
    ...lostConnectionOptions,
    max: 1,
    max_lifetime: null,
    // 0: never (a PGIDLE_TIMEOUT in the environment would otherwise set one).
    idle_timeout: 0,
    onclose: (connection) => {
      lost = true;
      options.onclose?.(connection);
    },
  });
  const sql = client as unknown as ScopedClient & { begin: (...args: unknown[]) => Promise<unknown> };
  const unsafe = sql.unsafe;
  sql.unsafe = (query, args, queryOptions) => {
    if (lost) return new RefusedStatement(sessionClosed);
    const statement = unsafe(query, args, queryOptions);
    // Subscribed before the caller, so the mark is set before the caller hears of the failure.
    (statement as Promise<unknown>).catch((error: unknown) => {
      if (isLostConnection(error) || endsTheSession(error)) lost = true;
    });
    return statement;
  };
  const begin = sql.begin;
  sql.begin = (...args) => (lost ? Promise.reject(sessionClosed()) : begin(...args));
  return guardLostConnections(client);
}

/** PostgreSQL's FATAL (or PANIC) error: the server closes the session after sending it. */
function endsTheSession(error: unknown): boolean {
  const severity = error && typeof error === 'object' ? (error as { severity?: unknown }).severity : undefined;
  return severity === 'FATAL' || severity === 'PANIC';
}
