import { DomainError } from './problems.ts';

/** PostgreSQL error fields, read through drizzle's wrapper; both drivers expose `code`. */
interface PgErrorFields {
  code?: string;
  constraint?: string;
  constraint_name?: string;
}

function pgError(error: unknown): PgErrorFields | undefined {
  let current: unknown = error;
  for (let depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const fields = current as PgErrorFields & { cause?: unknown };
    if (typeof fields.code === 'string' && /^[0-9A-Z]{5}$/.test(fields.code)) return fields;
    current = fields.cause;
  }
  return undefined;
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const fields = pgError(error);
  if (fields?.code !== '23505') return false;
  if (constraint === undefined) return true;
  return (fields.constraint ?? fields.constraint_name) === constraint || String(error).includes(constraint);
}

/** Seconds a client should wait before retrying after the database was unreachable or busy. */
const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Driver-side failure codes (postgres.js and Node's sockets): the database cannot be reached now. */
const unreachableCodes = new Set([
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a transient condition: the server is going away or cannot take us now, or our
 * own statement/lock timeout fired. Retrying later may succeed, so they are 503, not 500.
 */
function isTransientSqlState(code: string): boolean {
  return (
    code.startsWith('08') || // connection exception
    code === '57P01' || // admin_shutdown
    code === '57P02' || // crash_shutdown
    code === '57P03' || // cannot_connect_now (starting up, shutting down)
    code === '53300' || // too_many_connections
    code === '57014' || // query_canceled: statement_timeout
    code === '55P03' || // lock_not_available: lock_timeout
    code === '40001' || // serialization_failure
    code === '40P01' // deadlock_detected
  );
}

function errorChain(error: unknown): { code?: unknown; message?: unknown }[] {
  const chain: { code?: unknown; message?: unknown }[] = [];
  let current: unknown = error;
  for (let depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    chain.push(current as { code?: unknown; message?: unknown });
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

const unavailable = (cause: unknown, detail: string): DomainError =>
  new DomainError('service-unavailable', detail, {
    headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) },
    cause,
  });

/**
 * The one mapping from a database failure to the problem it means for the client, or
 * undefined when the failure is not the database's (or is a bug: then it stays a 500).
 * Drizzle wraps driver errors (`cause`), so the whole chain is read.
 */
export function databaseProblem(error: unknown): DomainError | undefined {
  for (const link of errorChain(error)) {
    const code = typeof link.code === 'string' ? link.code : undefined;
    if (code !== undefined && unreachableCodes.has(code)) {
      return unavailable(error, 'The database is unavailable. Retry later.');
    }
    // Our own bounded wait for a pooled connection (server/db/unit-of-work.ts) ran out.
    if (code === 'POOL_ACQUIRE_TIMEOUT') return unavailable(error, 'The database is busy. Retry later.');
    if (code !== undefined && /^[0-9A-Z]{5}$/.test(code)) {
      if (isTransientSqlState(code)) return unavailable(error, 'The database is busy or unavailable. Retry later.');
      if (code === '22003') {
        return new DomainError('validation-error', 'A value is out of the range the service can store.', {
          errors: [{ field: '(body)', message: 'a number is too large' }],
          cause: error,
        });
      }
      // Any other SQLSTATE is a definite answer from a working database: not ours to map.
      return undefined;
    }
    // PGlite after close() (shutdown, or the process lost its database) throws a plain Error.
    if (link instanceof Error && (link.message === 'PGlite is closed' || link.message === 'PGlite is closing')) {
      return unavailable(error, 'The database is closed. Retry later.');
    }
  }
  return undefined;
}
