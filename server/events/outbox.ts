/**
 * The one way an event is written (docs/api.md#events): a transactional outbox. A module declares
 * its types once (`declareEvents`, in its `<name>.events.ts`) and records each change on the
 * transaction that makes it, so the event commits with its change or not at all. The event holds
 * the resource as its GET answers it (without `_links`, which say what a client may do now, not
 * what happened) and, for an update, the previous values of the fields that changed.
 */
import { randomBytes } from 'node:crypto';
import { isNotNull, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { gatherAtTransactionEnd, type UnitOfWork } from '../db/unit-of-work.ts';
import { events } from '../db/schema.ts';
import { statements } from '../db/statements.ts';
import { declareTypes, type EventDeclaration, type EventType } from './catalogue.ts';

/** A representation as a GET answers it: a JSON object. */
type Representation = object;

export interface Change<T extends EventType, R extends Representation> {
  type: T;
  /** The resource as it now is (for a deletion: as it was). */
  object: R;
  /** For an update: the resource as it was before, in the same representation. */
  previous?: R;
}

/** What a module records its changes through. */
export interface EventSource<T extends EventType, R extends Representation> {
  readonly types: readonly T[];
  /**
   * Records the event of `change` on `tx`, the unit of work that makes the change: written with
   * it, at its end. There is no writing one outside a transaction: a pool's handle is refused.
   */
  record(tx: UnitOfWork, change: Change<T, R>): Promise<void>;
}

/** 15 random bytes: 120 bits, 20 base64url characters. */
const newEventId = (): string => `evt_${randomBytes(15).toString('base64url')}`;

/**
 * The channel each order event's id is NOTIFYed on, for the live updates of every instance
 * (server/events/live.ts). PostgreSQL delivers a notification only once its transaction commits,
 * in the order of the commits, so a listener never hears of an event it cannot read yet.
 */
export const EVENTS_CHANNEL = 'order_service_events';

// One statement per number of rows (at most `BATCH`; a transaction writes a few events), each
// prepared once. The data goes as text, cast in SQL: both drivers then send the string as it is
// (a json parameter would be serialized by each driver its own way). Rows are inserted in the
// order given, so `seq` follows it. The NOTIFY goes in the same statement: no round trip more
// per event. Only an order's events are NOTIFYed: the live updates carry nothing else, and a
// notifying transaction holds PostgreSQL's one lock for notifications through its commit.
const BATCH = 8;
const insertEvents = statements('events_insert', (db, count: number) => {
  const rows = Array.from({ length: count }, (_, i) => ({
    id: sql.placeholder(`id${i}`),
    type: sql.placeholder(`type${i}`),
    orderId: sql.placeholder(`orderId${i}`),
    data: sql`${sql.placeholder(`data${i}`)}::text::json`,
  }));
  const inserted = db.$with('inserted').as(db.insert(events).values(rows).returning({ id: events.id, orderId: events.orderId }));
  return db
    .with(inserted)
    .select({ notified: sql`pg_notify(${sql.raw(`'${EVENTS_CHANNEL}'`)}, ${inserted.id})` })
    .from(inserted)
    .where(isNotNull(inserted.orderId));
});

async function insert(tx: Db, rows: EventRow[]): Promise<void> {
  for (let start = 0; start < rows.length; start += BATCH) {
    const batch = rows.slice(start, start + BATCH);
    const values: Record<string, unknown> = {};
    batch.forEach((row, i) => {
      values[`id${i}`] = row.id;
      values[`type${i}`] = row.type;
      values[`orderId${i}`] = row.orderId;
      values[`data${i}`] = JSON.stringify(row.data);
    });
    await insertEvents(batch.length, tx, values);
  }
}

interface EventRow {
  id: string;
  type: string;
  orderId: number | null;
  data: Record<string, unknown>;
}

/** Queues `row` on `tx`'s events, which its end writes in one statement (`gatherAtTransactionEnd`). */
function write(tx: UnitOfWork, row: EventRow): void {
  gatherAtTransactionEnd(tx, 'events', row, (rows) => insert(tx, rows));
}

/** The representation without `_links`. */
function withoutLinks(representation: Representation): Record<string, unknown> {
  const rest: Record<string, unknown> = { ...representation };
  delete rest._links;
  return rest;
}

/** The fields of `before` whose values differ in `after`, with their old values. */
function previousAttributes(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const changed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(before)) {
    if (JSON.stringify(value) !== JSON.stringify(after[key])) changed[key] = value;
  }
  return changed;
}

/**
 * Declares a module's event types (added to the catalogue) and answers the source it records
 * them through. `orderIdOf` names the order an event concerns (null for none): one order's
 * timeline is every event that names it.
 */
export function declareEvents<T extends EventType, R extends Representation>(options: {
  types: EventDeclaration<T>;
  orderIdOf: (object: R) => number | null;
}): EventSource<T, R> {
  const types = declareTypes(options.types);
  return {
    types,
    async record(tx, { type, object, previous }) {
      const current = withoutLinks(object);
      const data = previous === undefined ? { object: current } : { object: current, previous_attributes: previousAttributes(withoutLinks(previous), current) };
      write(tx, { id: newEventId(), type, orderId: options.orderIdOf(object), data });
    },
  };
}
