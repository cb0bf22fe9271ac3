/**
 * Live updates (docs/api.md#live-updates): every instance hears of every order event, whichever
 * instance wrote it, and hands it to the subscribers it serves (`orders.onChange`).
 *
 * Fed by PostgreSQL's LISTEN/NOTIFY, not by polling the events table: the outbox NOTIFYs each
 * event's id in the transaction that writes it (outbox.ts), and PostgreSQL delivers it to every
 * listening instance once, after the commit, in the order of the commits. So an event is never
 * heard of before it can be read, nor missed because a transaction that wrote it earlier
 * committed later (which a poll "after the last seq seen" would skip), and nothing is queried
 * while nothing changes. One LISTEN per process (a connection of its own on PostgreSQL) and one
 * query per burst of notifications, shared by all its subscribers: never a query per subscriber.
 *
 * A subscriber that falls behind (its queue full), and every subscriber when the LISTEN
 * connection was lost and remade (notifications sent meanwhile are gone) or the process stops,
 * is ended with a retryable error: its client reconnects with the last id it saw and reads what
 * it missed from the table (modules/events/events.live.ts).
 *
 * A stream also ends when its token expires (a timer to its `exp`: its client reconnects with a
 * fresh one), and when its user is deleted or its sign-in's refresh family revoked: those are
 * NOTIFYed on a channel of their own (revocations.ts), heard by every instance through the same
 * LISTEN connection, so a lost connection ends the streams and their reconnection is checked.
 */
import type { Db, Listen } from '../db/client.ts';
import type { events } from '../db/schema.ts';
import { EVENTS_CHANNEL } from './outbox.ts';
import { parseRevocation, REVOCATIONS_CHANNEL, type Revocation } from './revocations.ts';

/** An event that concerns an order, as a subscriber gets it, with whose order it is. */
export interface LiveEvent {
  id: string;
  seq: number;
  type: string;
  apiVersion: string;
  data: typeof events.$inferSelect.data;
  createdAt: Date;
  orderId: number;
  /** The order's customer (of a deleted order: as the event recorded it); null if unknown. */
  customerId: number | null;
}

/** What the hub listens through: `Database.listen` (server/db/client.ts). */
export type { Listen };

/** One owner asked for more streams than it may hold at once. */
export class TooManyStreams extends Error {
  constructor(readonly limit: number) {
    super(`at most ${limit} live streams at once`);
  }
}

/**
 * Why a subscriber's stream was ended by the hub rather than by its client: fell behind, feed
 * lost, process stopping, its token expired, its user deleted, its sign-in's family revoked.
 */
export type EndReason = 'behind' | 'relisten' | 'closing' | 'expired' | 'deleted' | 'revoked';

/** Whose token holds a stream: what ends it besides its client (docs/api.md#live-updates). */
export interface Holder {
  /** The token's user (none for a service client). */
  userId?: number | undefined;
  /** The refresh-token family the token came from (its `sid`). */
  family?: string | undefined;
  /** The token's `exp`, in seconds since the epoch. */
  expiresAt?: number | undefined;
}

/**
 * Reads notified events by id, each with its order's customer: given by the events module
 * (modules/events/events.live.ts), which may read the orders table this layer stands below.
 */
export type ReadLiveEvents = (db: Db, ids: string[]) => Promise<LiveEvent[]>;

export interface Subscriber {
  /** The next event (undefined once ended: then `ended` says why). Waits until there is one. */
  next(): Promise<LiveEvent | undefined>;
  readonly ended: EndReason | undefined;
  close(): void;
}

interface Entry {
  accepts: (event: LiveEvent) => boolean;
  owner: string | undefined;
  holder: Holder;
  queue: LiveEvent[];
  ended: EndReason | undefined;
  wake: (() => void) | undefined;
  expiry: ReturnType<typeof setTimeout> | undefined;
}

/** A setTimeout delay may be at most this (about 24.8 days); a token lives at most 24 hours. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface LiveEventsOptions {
  /** Events waiting for one slow subscriber; beyond, it is ended (default 1000). */
  maxQueue?: number;
  /** Streams one owner (a person or a client) may hold open on this process (default 16). */
  maxPerOwner?: number;
  /** Events one stream reads from the table when it resumes, at most; then it ends, and its client resumes again from the last (default 5000). */
  resumeLimit?: number;
  /** Told of a failure to read notified events (they are then lost to live subscribers: ended). */
  onError?: (error: unknown) => void;
}

export class LiveEvents {
  readonly #db: Db;
  readonly #listen: Listen;
  readonly #read: ReadLiveEvents;
  readonly #maxQueue: number;
  readonly #maxPerOwner: number;
  readonly #owners = new Map<string, number>();
  readonly resumeLimit: number;
  readonly #onError: (error: unknown) => void;
  readonly #subscribers = new Set<Entry>();
  #pending: string[] = [];
  #flushing = false;
  #listening: Promise<void> | undefined;
  #unlisten: (() => Promise<void>) | undefined;
  #listens = 0;
  #revocationListens = 0;
  #closed = false;
  #stopping = false;

  constructor(db: Db, listen: Listen, read: ReadLiveEvents, options: LiveEventsOptions = {}) {
    this.#db = db;
    this.#listen = listen;
    this.#read = read;
    this.#maxQueue = options.maxQueue ?? 1000;
    this.#maxPerOwner = options.maxPerOwner ?? 16;
    this.resumeLimit = options.resumeLimit ?? 5000;
    this.#onError = options.onError ?? (() => {});
  }

  /** Resolves once the LISTEN is in place (started on first use): events committed from then on are heard. */
  ready(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('live events are closed'));
    this.#listening ??= Promise.allSettled([
      this.#listen(EVENTS_CHANNEL, (id) => this.#notified(id), () => this.#listened()),
      this.#listen(REVOCATIONS_CHANNEL, (payload) => this.#revoked(payload), () => this.#revocationsListened()),
    ]).then(([events, revocations]) => {
      const made = [events, revocations].flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
      const unlisten = async () => {
        await Promise.all(made.map((stop) => stop()));
      };
      if (made.length === 2) {
        this.#unlisten = unlisten;
        return;
      }
      // The next subscriber tries again, both.
      this.#listening = undefined;
      void unlisten().catch(() => {});
      throw [events, revocations].flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : []))[0];
    });
    return this.#listening;
  }

  /**
   * Starts collecting the events `accepts` takes, from now on. Await `ready()` first: only
   * events committed after the LISTEN is in place are heard. `owner` names who holds the stream;
   * one owner holds at most `maxPerOwner` at once (a held stream costs memory and, on resume, a
   * read): beyond, this throws `TooManyStreams` and nothing is held.
   */
  subscribe(accepts: (event: LiveEvent) => boolean, owner?: string, holder: Holder = {}): Subscriber {
    const entry: Entry = { accepts, owner, holder, queue: [], ended: this.#stopping ? 'closing' : undefined, wake: undefined, expiry: undefined };
    if (entry.ended === undefined) {
      if (owner !== undefined) {
        const held = this.#owners.get(owner) ?? 0;
        if (held >= this.#maxPerOwner) throw new TooManyStreams(this.#maxPerOwner);
        this.#owners.set(owner, held + 1);
      }
      this.#subscribers.add(entry);
      // Ends the stream as its token expires: its client reconnects with a fresh one.
      if (holder.expiresAt !== undefined) {
        const left = holder.expiresAt * 1000 - Date.now();
        entry.expiry = setTimeout(() => this.#end(entry, 'expired'), Math.min(Math.max(0, left), MAX_TIMER_MS));
        entry.expiry.unref();
      }
    }
    return {
      next: async () => {
        for (;;) {
          const event = entry.queue.shift();
          if (event !== undefined) return event;
          if (entry.ended !== undefined) return undefined;
          await new Promise<void>((resolve) => (entry.wake = resolve));
        }
      },
      get ended() {
        return entry.ended;
      },
      close: () => this.#end(entry, 'closing'),
    };
  }

  /** Subscribers now (for tests and metrics). */
  get subscribers(): number {
    return this.#subscribers.size;
  }

  /** Ends every subscriber's stream: their clients reconnect and resume from the table. */
  endAll(reason: EndReason): void {
    for (const entry of [...this.#subscribers]) this.#end(entry, reason);
  }

  /** The drain began: every stream ends, and a new one ends at once (its client reconnects to another instance). */
  stop(): void {
    this.#stopping = true;
    this.endAll('closing');
  }

  /** Ends the streams and stops listening (before the database closes). */
  async close(): Promise<void> {
    this.#closed = true;
    this.stop();
    const listening = this.#listening;
    if (listening === undefined) return;
    await listening.catch(() => {});
    await this.#unlisten?.().catch(() => {});
  }

  #end(entry: Entry, reason: EndReason): void {
    entry.ended ??= reason;
    clearTimeout(entry.expiry);
    entry.expiry = undefined;
    if (this.#subscribers.delete(entry) && entry.owner !== undefined) {
      const held = (this.#owners.get(entry.owner) ?? 1) - 1;
      if (held > 0) this.#owners.set(entry.owner, held);
      else this.#owners.delete(entry.owner);
    }
    entry.wake?.();
    entry.wake = undefined;
  }

  #listened(): void {
    // A LISTEN made again: what was notified while it was down is lost to the live streams.
    if (this.#listens++ > 0) this.endAll('relisten');
  }

  #revocationsListened(): void {
    // Made again: a revocation NOTIFYed meanwhile is lost, so every stream ends and is checked as it reconnects.
    if (this.#revocationListens++ > 0) this.endAll('relisten');
  }

  /** Ends the streams a revocation names (revocations.ts). */
  #revoked(payload: string): void {
    const revocation = parseRevocation(payload);
    if (revocation === undefined) return;
    for (const entry of [...this.#subscribers]) {
      const reason = endedBy(revocation, entry.holder);
      if (reason !== undefined) this.#end(entry, reason);
    }
  }

  #notified(id: string): void {
    if (this.#subscribers.size === 0) return;
    this.#pending.push(id);
    if (!this.#flushing) void this.#flush();
  }

  /** Reads the notified events, a burst in one query, and hands each to the subscribers that take it, in commit order. */
  async #flush(): Promise<void> {
    this.#flushing = true;
    try {
      while (this.#pending.length > 0 && !this.#closed) {
        const ids = this.#pending.splice(0, 500);
        let rows: LiveEvent[];
        try {
          rows = await this.#read(this.#db, ids);
        } catch (error) {
          this.#onError(error);
          // Those events are lost to the live streams: their clients resume from the table.
          this.endAll('relisten');
          continue;
        }
        const byId = new Map(rows.map((row) => [row.id, row]));
        for (const id of ids) {
          const event = byId.get(id);
          if (event !== undefined) this.#publish(event);
        }
      }
    } finally {
      this.#flushing = false;
    }
  }

  #publish(event: LiveEvent): void {
    for (const entry of this.#subscribers) {
      if (!entry.accepts(event)) continue;
      if (entry.queue.length >= this.#maxQueue) {
        this.#end(entry, 'behind');
        continue;
      }
      entry.queue.push(event);
      entry.wake?.();
      entry.wake = undefined;
    }
  }
}

/** Whether `revocation` ends a stream held by `holder`, and why. */
function endedBy(revocation: Revocation, holder: Holder): 'deleted' | 'revoked' | undefined {
  switch (revocation.kind) {
    case 'user':
      return holder.userId === revocation.userId ? 'deleted' : undefined;
    case 'grants':
      // Every family of the user: only a token from a sign-in has one.
      return holder.userId === revocation.userId && holder.family !== undefined ? 'revoked' : undefined;
    case 'family':
      return holder.family === revocation.family ? 'revoked' : undefined;
  }
}
