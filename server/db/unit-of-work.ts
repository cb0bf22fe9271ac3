/**
 * The unit of work: where a transaction begins and what commits with it (docs/architecture.md#transactions).
 *
 * A `UnitOfWork` is the handle of a transaction in progress, and `transaction()` is the only
 * place that makes one. Every write that needs a transaction takes a `UnitOfWork`, never a pool's
 * `Db`: an event's `record`, a refund's ledger row, an order's move, a locked read. The compiler
 * refuses a pool handle there, and a cast around it is refused at run time. Reads take the plain
 * `Db`, which a unit of work is too. `transaction(db, work)` begins a transaction on a pool's
 * handle; given a unit of work, it continues that one (a savepoint on the connection it holds),
 * and everything `work` writes commits with it. A service writes `transaction(work ?? db, ...)`:
 * `work` is the unit its caller began for it, the Idempotency-Key's (`ctx.work`, whose key row
 * commits with the operation's writes, server/trpc/idempotency.ts); without one it begins its own.
 * Writes deferred to the end of a unit (`atTransactionEnd`, `gatherAtTransactionEnd`) are kept on
 * the unit itself, and a pool's transaction slots on the pool's handle: no table on the side.
 */
import type { Db } from './handle.ts';

type Ending = () => Promise<void>;

/** What a unit of work keeps while its work runs. */
interface WorkState {
  /** Writes deferred to the end of the work, in the order asked; each runs once. */
  readonly endings: Ending[];
  /** Items gathered for one write at the end (`gatherAtTransactionEnd`), by the batch's name. */
  readonly batches: Map<string, unknown[]>;
  /** False once the work has returned or thrown: nothing more is written on the handle. */
  open: boolean;
  /** True once a `transaction()` has continued this unit (a savepoint on it). */
  continued: boolean;
  /**
   * A deferred write that failed as a savepoint opened on this unit: the unit fails with it, even
   * when its work caught the savepoint's error (PostgreSQL would roll the commit back in silence).
   */
  failure?: { error: unknown };
}

const workState = Symbol('unit of work');
const transactionGate = Symbol('transaction slots');

/** A transaction in progress: made by `transaction()` only, and required by every write that needs one. */
export type UnitOfWork = Db & { readonly [workState]: WorkState };

/** A pool's handle whose transactions wait for a slot (PostgreSQL, `gateTransactions`). */
type GatedDb = Db & { readonly [transactionGate]?: Semaphore };

type TransactionConfig = Parameters<Db['transaction']>[1];

function stateOf(db: Db): WorkState | undefined {
  return (db as Partial<UnitOfWork>)[workState];
}

/**
 * The state of `work`, refusing what no transaction of ours holds: a pool's handle cast into a
 * `UnitOfWork` (the write would run on its own, outside any transaction), or a unit that ended.
 */
function openState(work: UnitOfWork): WorkState {
  const state = stateOf(work);
  if (state === undefined) {
    throw new Error('A write that needs a transaction was given a handle of none (a pool\'s): begin one with transaction(db, work) and write on its unit of work.');
  }
  if (!state.open) throw new Error('The transaction of this handle has ended: nothing more can be written on it.');
  return state;
}

/** Refuses, at run time, a handle that is no open unit of work (for writes a cast could reach). */
export function assertUnitOfWork(work: UnitOfWork): void {
  openState(work);
}

/** Whether a `transaction()` continued `work`: the idempotency layer checks its procedure joined the key's unit. */
export function wasContinued(work: UnitOfWork): boolean {
  return stateOf(work)?.continued === true;
}

/**
 * Runs `work` in a unit of work and answers what it answers; every transaction of the service
 * begins here, never with `db.transaction` (the lint config refuses that outside this file).
 *
 * - On a pool's handle it begins a transaction. On PostgreSQL it first waits for one of the pool's
 *   transaction slots (`transactionSlots`) at most `acquireTimeoutMs`, then fails with
 *   POOL_ACQUIRE_TIMEOUT (-> 503).
 * - On a unit of work it continues it: a savepoint, which needs no slot (it runs on the connection
 *   its transaction holds) and commits with that transaction. What the outer unit deferred so far
 *   is written first, so writes keep their order.
 */
export function transaction<T>(db: Db | UnitOfWork, work: (tx: UnitOfWork) => Promise<T>, config?: TransactionConfig): Promise<T> {
  const run = () =>
    db.transaction(async (handle) => {
      const state: WorkState = { endings: [], batches: new Map(), open: true, continued: false };
      Object.defineProperty(handle, workState, { value: state });
      const unit = handle as unknown as UnitOfWork;
      try {
        const result = await work(unit);
        await finish(state);
        if (state.failure !== undefined) throw state.failure.error;
        return result;
      } finally {
        state.open = false;
      }
    }, config);
  const outer = stateOf(db);
  if (outer === undefined) {
    const gate = (db as GatedDb)[transactionGate];
    return gate ? gate.run(run) : run();
  }
  outer.continued = true;
  if (outer.endings.length === 0) return run();
  return finish(outer).then(run, (error: unknown) => {
    outer.failure = { error };
    throw error;
  });
}

async function finish(state: WorkState): Promise<void> {
  for (let write = state.endings.shift(); write; write = state.endings.shift()) await write();
}

/**
 * Defers `write` to the end of `work`: it runs after the work returns, before the commit (or the
 * savepoint's release), and before any savepoint opened on `work` meanwhile. If the work throws,
 * nothing deferred runs: the rollback takes the change and its rows together. Throws on a handle
 * that is no open unit of work, where the write would run alone or be lost.
 */
export function atTransactionEnd(work: UnitOfWork, write: Ending): void {
  openState(work).endings.push(write);
}

/**
 * Adds `item` to the batch `name` of `work`, which its end writes with `write` in one go (the
 * events' outbox gathers a unit's events into one statement so). A savepoint opened meanwhile
 * writes the batch so far first; later items start a new one.
 */
export function gatherAtTransactionEnd<T>(work: UnitOfWork, name: string, item: T, write: (items: T[]) => Promise<void>): void {
  const state = openState(work);
  const batch = state.batches.get(name) as T[] | undefined;
  if (batch) {
    batch.push(item);
    return;
  }
  const items = [item];
  state.batches.set(name, items);
  state.endings.push(async () => {
    state.batches.delete(name);
    await write(items);
  });
}

/**
 * Transactions may hold all but a few connections: rows they wait on (a locked order) can then
 * never starve single-statement reads, the health check included. With pool size 10: 8 slots.
 */
export function transactionSlots(poolSize: number): number {
  const reserved = poolSize >= 4 ? 2 : poolSize >= 2 ? 1 : 0;
  return poolSize - reserved;
}

/**
 * Makes the transactions begun on the pool handle `db` wait for one of `transactionSlots(poolSize)`
 * slots, at most `acquireTimeoutMs` each (PostgreSQL; postgres.js itself would queue forever).
 * Answers the slots' state now, for /metrics.
 */
export function gateTransactions(db: Db, poolSize: number, acquireTimeoutMs: number): () => { slots: number; active: number; waiting: number } {
  const slots = transactionSlots(poolSize);
  const gate = new Semaphore(slots, acquireTimeoutMs);
  Object.defineProperty(db, transactionGate, { value: gate });
  return () => ({ slots, ...gate.state });
}

/** Counting semaphore whose waiters give up after a timeout. */
class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly slots: number,
    private readonly timeoutMs: number,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.active < this.slots) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolveSlot, reject) => {
      // The releasing holder hands its slot straight over, so `active` stays as it is.
      const grant = () => {
        clearTimeout(timer);
        resolveSlot();
      };
      const timer = setTimeout(() => {
        const index = this.waiting.indexOf(grant);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(Object.assign(new Error(`No database connection became free within ${this.timeoutMs} ms`), { code: 'POOL_ACQUIRE_TIMEOUT' }));
      }, this.timeoutMs);
      this.waiting.push(grant);
    });
  }

  /** Slots held and callers waiting for one, now. */
  get state(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.length };
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }
}
