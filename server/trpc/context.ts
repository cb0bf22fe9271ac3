import type { Caller } from '../auth/tokens.ts';
import type { Db } from '../db/client.ts';
import type { Preconditions } from '../lib/preconditions.ts';

// Services import it from here today; it lives in lib/ so lib/ never imports trpc/.
export type { Preconditions };

export interface Context {
  db: Db;
  caller: Caller | null;
  requestId: string;
  preconditions: Preconditions;
}

export interface ContextInnerOptions {
  db: Db;
  caller?: Caller | null;
  requestId?: string;
  preconditions?: Preconditions;
}

/**
 * Builds a context from plain values: tests and scripts call procedures with it through
 * `createCaller`, no HTTP involved. The HTTP doors build theirs from the request.
 */
export function createContextInner(options: ContextInnerOptions): Context {
  return {
    db: options.db,
    caller: options.caller ?? null,
    requestId: options.requestId ?? 'local',
    preconditions: options.preconditions ?? {},
  };
}
