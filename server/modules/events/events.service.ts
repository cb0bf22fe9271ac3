/**
 * Reading events (docs/api.md#events): every event (admins, service clients with `events:read`),
 * one event, and one order's timeline for whoever may read the order. Newest first, paged by
 * cursor like every list; `seq` orders the events of one transaction, which share a `created_at`.
 * Events are written by the modules that make the changes (server/events/outbox.ts) and purged
 * after `EVENT_RETENTION_DAYS`.
 */
import { and, eq, inArray, lt, ne, notExists, sql } from 'drizzle-orm';
import { mayReadOrder } from '../../auth/policy.ts';
import type { Caller } from '../../auth/tokens.ts';
import type { Db } from '../../db/client.ts';
import { events } from '../../db/schema.ts';
import { orders } from '../orders/orders.table.ts';
import { webhookDeliveries } from '../webhooks/webhooks.table.ts';
import { DomainError } from '../../errors/problems.ts';
import { eventTypes, resourceOf, type EventType } from '../../events/catalogue.ts';
import { deleteInBatches } from '../../db/purge.ts';
import { iso, type Page } from '../common.schemas.ts';
import { listPage, newestFirst, type CursorCodec } from '../paging.ts';
import type { Event, EventListQuery, OrderEventListQuery } from './events.schemas.ts';

/** The columns an event's representation is made of (`toEvent`); the live read adds its order's. */
export const eventColumns = {
  id: events.id,
  seq: events.seq,
  type: events.type,
  apiVersion: events.apiVersion,
  data: events.data,
  createdAt: events.createdAt,
};

type EventRow = Pick<typeof events.$inferSelect, keyof typeof eventColumns>;

export const toEvent = (row: EventRow): Event => ({
  id: row.id,
  type: row.type,
  created_at: iso(row.createdAt),
  api_version: row.apiVersion,
  data: row.data,
});

/** Newest first; `seq` (the order of writing) breaks ties, so a transaction's events keep their order. */
const eventOrder = newestFirst<EventRow>(events.createdAt, events.seq, 'bigint', (row) => row.seq);

const unknownType = (given: string) =>
  new DomainError('validation-error', `Unknown event type "${given}".`, {
    errors: [{ field: 'type', message: `must be a comma list of event types and prefixes such as order.*; "${given}" is neither` }],
  });

/**
 * The types a `type` filter names, sorted (undefined: no filter): each item a declared type or
 * `<resource>.*`, any other 422. So the query only ever compares with known types.
 */
export function typesOf(filter: string | undefined): EventType[] | undefined {
  if (filter === undefined) return undefined;
  const known = [...eventTypes().keys()];
  const wanted = new Set<EventType>();
  for (const item of filter.split(',').map((part) => part.trim())) {
    const matching = item.endsWith('.*') ? known.filter((type) => resourceOf(type) === item.slice(0, -2)) : known.filter((type) => type === item);
    if (matching.length === 0) throw unknownType(item);
    for (const type of matching) wanted.add(type);
  }
  return [...wanted].sort();
}

async function listOf(
  { db, cursors, list, filter, query }: { db: Db; cursors: CursorCodec; list: string; filter: { types?: EventType[]; orderId?: number }; query: EventListQuery },
): Promise<Page<Event>> {
  // A cursor is good for the same filters, however they were spelled (`order.*` or each type).
  const binding = JSON.stringify([list, filter.types ?? null, filter.orderId ?? null]);
  return listPage(
    { cursors, binding, terms: eventOrder, query },
    (page) =>
      page.rowsOf(
        db.select(eventColumns).from(events).$dynamic(),
        and(filter.orderId === undefined ? undefined : eq(events.orderId, filter.orderId), filter.types === undefined ? undefined : inArray(events.type, filter.types)),
      ),
    toEvent,
  );
}

export function listEvents({ db, query, cursors }: { db: Db; query: EventListQuery; cursors: CursorCodec }): Promise<Page<Event>> {
  return listOf({ db, cursors, list: 'events', filter: { types: typesOf(query.type), orderId: query.order_id }, query });
}

export async function getEvent({ db, id }: { db: Db; id: string }): Promise<Event> {
  const [row] = await db.select(eventColumns).from(events).where(eq(events.id, id));
  if (!row) throw new DomainError('not-found', `Event ${id} does not exist.`);
  return toEvent(row);
}

/** One order's events, if `caller` may read the order: another customer's, or a deleted one, is 404 as its read is. */
export async function listOrderEvents({ db, caller, query, cursors }: { db: Db; caller: Caller; query: OrderEventListQuery; cursors: CursorCodec }): Promise<Page<Event>> {
  const [order] = await db.select({ customerId: orders.customerId }).from(orders).where(eq(orders.id, query.id));
  if (!order || !mayReadOrder(caller, order)) throw new DomainError('not-found', `Order ${query.id} does not exist.`);
  return listOf({ db, cursors, list: 'order-events', filter: { types: typesOf(query.type), orderId: query.id }, query });
}

/**
 * Deletes the events older than `retentionDays`, in batches (server/db/purge.ts), with their
 * webhook deliveries; an event with a delivery still pending stays until it ends (a disabled
 * endpoint's deliveries wait for it to be enabled: docs/webhooks.md#delivery). Returns how many
 * events went.
 *
 * In two steps, so that a delivery retried by hand while the purge runs is never lost: first the
 * old events' ended deliveries (a row's state is checked again when the purge locks it, so one a
 * retry has just made pending again is kept, and one a retry holds is skipped), then the old events
 * left with no delivery at all. Had the events gone in one step on a check of their deliveries, a
 * retry committed after that check would have lost its delivery to the cascade while answering 200.
 */
export async function purgeOldEvents(db: Db, retentionDays: number): Promise<number> {
  const old = lt(events.createdAt, sql`now() - make_interval(days => ${retentionDays})`);
  await deleteInBatches(db, webhookDeliveries, and(ne(webhookDeliveries.state, 'pending'), inArray(webhookDeliveries.eventId, db.select({ id: events.id }).from(events).where(old))) ?? sql`false`);
  return deleteInBatches(db, events, and(old, notExists(db.select({ one: sql`1` }).from(webhookDeliveries).where(eq(webhookDeliveries.eventId, events.id)))) ?? sql`false`);
}
