/**
 * The tests that cover every operation of the service take how to call each from one file per
 * module in test/operations/: test/api/openapi.test.ts walks every documented operation (a request
 * that succeeds, one that fails, one for each status its generic probes cannot reach) and
 * test/api/idempotency.test.ts runs its matrix over every creating operation. Both collect every
 * file of the folder without naming it, so a new module adds a file of its own and edits neither
 * (docs/architecture.md#adding-a-module). Each test still fails by name when an operation has no
 * entry, and loading fails by name when two files declare the same one.
 */
import { readdirSync } from 'node:fs';
import type { Actor, OperationsContext, Representation } from './operations-context.ts';

/** A request of the walk: values for the documented operation's parameters, its body, who sends it. */
export interface Call {
  params?: Record<string, string | number>;
  /** A list's values are sent repeated (`style: form, explode: true`, as documented). */
  query?: Record<string, string | number | readonly string[]>;
  body?: unknown;
  /** Sent as it is instead of `body` (malformed or oversized bodies). */
  rawBody?: string;
  /** Content-Type of `body`; default the operation's first. */
  contentType?: string;
  token?: string;
  headers?: Record<string, string>;
}

export interface FailingCall extends Call {
  /** What the contract says this request answers. */
  status: number;
}

export interface Walk {
  /** Prepares what the request needs and returns a request that should succeed. */
  success(): Promise<Call>;
  /** A request that should fail with `status`; none where only a spent rate limit fails (the OAuth metadata). */
  failure?(): Promise<FailingCall>;
}

/** By status: a request that reaches it. */
export type Reach = Partial<Record<number, () => Promise<Call>>>;

/** The success status the contract gives a POST that acts on a resource instead of creating one. */
export interface ActionPost {
  status: number;
  /** It answers the `Location` of what it started, as a creating POST does. */
  location?: true;
}

/** One POST of a creating operation: where, with which body. */
export interface PostCall {
  url: string;
  body: Record<string, unknown>;
}

/** For one test, a fresh target: a valid call, another valid call, and one that fails (4xx). */
export interface Scenario {
  call: PostCall;
  other: PostCall;
  failing: PostCall;
}

export interface CreatingOperation {
  /** Two callers whose keys must not collide. */
  actors(): Promise<[Actor, Actor]>;
  scenario(actor: Actor): Promise<Scenario>;
  /** An action on a resource that exists (a delivery retried): each run answers that same resource. */
  actsOnExisting?: true;
}

/** What one module's file declares; every table but `idempotency` is keyed by operationId. */
export interface OperationTables {
  /** How test/api/openapi.test.ts calls each documented operation: once to succeed, once to fail. */
  walks?: Record<string, Walk>;
  /** The statuses generic probes cannot reach: each operation's own conflicts, gones and refusals. */
  reach?: Record<string, Reach>;
  /** POSTs that act instead of creating; every other POST creates: 201 with Location. */
  actionPosts?: Record<string, ActionPost>;
  /** Members a 201 answers that GET at its Location never shows again. */
  shownOnlyOnCreation?: Record<string, string[]>;
  /** For each PUT, a representation to send back, and the token allowed to. */
  representationsForPut?: Record<string, () => Promise<{ representation: Representation; token: string }>>;
  /** By procedure path: each creating operation's case in test/api/idempotency.test.ts. */
  idempotency?: Record<string, CreatingOperation>;
}

/** A file of test/operations/: its tables, built around the context of the test that collects them. */
export type OperationsFile = (ctx: OperationsContext) => OperationTables;

/** `export default defineOperations((ctx) => ({ ... }))`: types the tables of a file of test/operations/. */
export const defineOperations = (build: OperationsFile): OperationsFile => build;

const FOLDER = new URL('../operations/', import.meta.url);
const TABLES = ['walks', 'reach', 'actionPosts', 'shownOnlyOnCreation', 'representationsForPut', 'idempotency'] as const satisfies readonly (keyof OperationTables)[];

/** Every file of test/operations/, its tables built around `ctx` and merged. */
export async function loadOperations(ctx: OperationsContext): Promise<Required<OperationTables>> {
  const collected: Required<OperationTables> = { walks: {}, reach: {}, actionPosts: {}, shownOnlyOnCreation: {}, representationsForPut: {}, idempotency: {} };
  const declaredIn = new Map<string, string>();
  for (const name of readdirSync(FOLDER).sort()) {
    const file = `test/operations/${name}`;
    // Anything else in the folder would be skipped in silence, and its operations go untested.
    if (!name.endsWith('.ts')) throw new Error(`${file}: test/operations/ holds only the modules' .ts files`);
    const { default: build } = (await import(new URL(name, FOLDER).href)) as { default?: unknown };
    if (typeof build !== 'function') throw new Error(`${file} has no \`export default defineOperations(...)\``);
    const tables = (build as OperationsFile)(ctx);
    const unknown = Object.keys(tables).filter((table) => !(TABLES as readonly string[]).includes(table));
    if (unknown.length > 0) throw new Error(`${file} declares tables no test reads: ${unknown.join(', ')} (known: ${TABLES.join(', ')})`);
    for (const table of TABLES) {
      for (const [key, entry] of Object.entries(tables[table] ?? {})) {
        const where = `${table}['${key}']`;
        const first = declaredIn.get(where);
        if (first !== undefined) throw new Error(`${where} is declared by both ${first} and ${file}: one operation, one file`);
        declaredIn.set(where, file);
        (collected[table] as Record<string, unknown>)[key] = entry;
      }
    }
  }
  return collected;
}
