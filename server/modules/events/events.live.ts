/**
 * `orders.onChange` (docs/api.md#live-updates): the events of the orders a caller may read, as
 * they happen, over server-sent events on `/trpc`. Whoever may read an order hears its events
 * (its own, its payments' and its fulfillments'): a customer those of its own orders, admins and
 * service clients with `orders:read` every order's, as `GET /api/v1/orders/{id}/events` answers
 * them. Each is sent with its id (tRPC `tracked`); a client that reconnects with the last id it
 * saw (`lastEventId`) first gets, from the table, what was committed after it, then the live
 * ones, without a gap or a repeat. Not a REST operation: it has no `meta.openapi`, so neither the
 * facade nor the OpenAPI document lists it.
 */
import { and, asc, eq, gt, gte, inArray, isNotNull, sql } from 'drizzle-orm';
import { tracked } from '@trpc/server';
import { z } from 'zod';
import { mayReadOrder, ownCustomerId } from '../../auth/policy.ts';
import type { Caller } from '../../auth/tokens.ts';
import type { Db } from '../../db/client.ts';
import { events } from '../../db/schema.ts';
import { DomainError } from '../../errors/problems.ts';
import { TooManyStreams, type EndReason, type LiveEvent, type LiveEvents, type ReadLiveEvents, type Subscriber } from '../../events/live.ts';
import { revokedHolder } from '../../events/revocations.ts';
import { domainTrpcError, procedureFor } from '../../trpc/trpc.ts';
import { Id } from '../common.schemas.ts';
import { orders } from '../orders/orders.table.ts';
import type { Event } from './events.schemas.ts';
import { EventId } from './events.schemas.ts';
import { eventColumns, toEvent } from './events.service.ts';

/** The columns every live read selects: the event, its order and the order's customer. */
const liveEventColumns = {
  ...eventColumns,
  orderId: sql<number>`${events.orderId}`,
  // A deleted order's events keep their customer in the order they recorded (`data.object`).
  customerId: sql<number | null>`coalesce(${orders.customerId}, (${events.data} -> 'object' ->> 'customer_id')::integer)`,
};

/** Events of orders joined with their orders: the shape of every live read. */
const liveEventsFrom = (db: Db) => db.select(liveEventColumns).from(events).leftJoin(orders, eq(orders.id, events.orderId));

/** The hub's read of notified events (server/events/live.ts): those of orders, by id. */
export const readLiveEvents: ReadLiveEvents = (db, ids) => liveEventsFrom(db).where(and(inArray(events.id, ids), isNotNull(events.orderId)));

export const OrderChangesInput = z
  .strictObject({
    order_id: Id.optional().meta({ description: 'Only this order\'s events (404 if the caller may not read it).' }),
    // tRPC's own name: the client sends the last tracked id it got when it reconnects.
    lastEventId: EventId.optional().meta({ description: 'Resume after this event: the events committed after it come first.' }),
  })
  // No input at all is every order the caller may read, from now on.
  .prefault({});
export type OrderChangesInput = z.infer<typeof OrderChangesInput>;

/**
 * How far before the last seen event's `created_at` (its transaction's start) a resume looks for
 * events written after it: a transaction that began this long before and wrote its event later
 * would not be found. Bounds the read to the index's recent range instead of the whole table.
 */
const RESUME_LOOKBACK = '15 minutes';
const RESUME_BATCH = 500;
/**
 * How old the last seen event may be for a resume: resuming mends a dropped connection. A client
 * away for longer reads the order again (or the events API) and subscribes anew; the read of the
 * table a resume costs stays bounded, whoever asks for it.
 */
const RESUME_MAX_AGE_MS = 60 * 60 * 1000;

interface Scope {
  orderId: number | undefined;
  customerId: number | undefined;
}

const accepts =
  ({ orderId, customerId }: Scope) =>
  (event: LiveEvent): boolean =>
    (orderId === undefined || event.orderId === orderId) && (customerId === undefined || event.customerId === customerId);

/** The events after `lastEventId` the scope takes, in the order they were written, a batch at a time. */
async function* missedSince(db: Db, lastEventId: string, scope: Scope): AsyncGenerator<LiveEvent> {
  const [last] = await db.select({ seq: events.seq, createdAt: events.createdAt }).from(events).where(eq(events.id, lastEventId));
  if (!last) {
    throw new DomainError('gone', `Event ${lastEventId} is no longer kept: subscribe without lastEventId, and read what was missed from GET /api/v1/events.`);
  }
  if (Date.now() - last.createdAt.getTime() > RESUME_MAX_AGE_MS) {
    throw new DomainError('gone', `Event ${lastEventId} is more than an hour old, too old to resume after: read the order again (or its events, GET /api/v1/orders/{id}/events) and subscribe without lastEventId.`);
  }
  const since = sql`${last.createdAt.toISOString()}::timestamptz - ${RESUME_LOOKBACK}::interval`;
  let after = last.seq;
  for (;;) {
    const batch = await liveEventsFrom(db)
      .where(
        and(
          isNotNull(events.orderId),
          gte(events.createdAt, since),
          gt(events.seq, after),
          scope.orderId === undefined ? undefined : eq(events.orderId, scope.orderId),
          scope.customerId === undefined ? undefined : sql`${liveEventColumns.customerId} = ${scope.customerId}`,
        ),
      )
      .orderBy(asc(events.seq))
      .limit(RESUME_BATCH);
    yield* batch;
    const next = batch.at(-1);
    if (batch.length < RESUME_BATCH || next === undefined) return;
    after = next.seq;
  }
}

const ended = (reason: string) =>
  new DomainError('service-unavailable', `The live stream ended (${reason}); reconnect with the last event id to resume.`);

/**
 * The token that held the stream may hold none any more: 401, which the client does not retry
 * (its user is gone, or it must sign in again). An expired token is a retryable 503 instead: the
 * client reconnects, asking its `getToken` for a fresh one (docs/api.md#live-updates).
 */
const unheld = (reason: 'deleted' | 'revoked') =>
  new DomainError(
    'unauthorized',
    reason === 'deleted' ? 'The user of this access token no longer exists: the live stream ended.' : "This access token's sign-in was revoked: the live stream ended. Sign in again.",
  );

function endedError(reason: EndReason): DomainError {
  switch (reason) {
    case 'deleted':
    case 'revoked':
      return unheld(reason);
    case 'expired':
      return ended('the access token expired: reconnect with a fresh one');
    case 'behind':
      return ended('the client fell behind');
    default:
      return ended('the service is stopping or lost its feed');
  }
}

/**
 * The caller's order events: first those after `lastEventId` (if given) from the table, then
 * the live ones. The live subscription starts before the table is read, so an event committed
 * in between is in one or the other; one that is in both is sent once.
 */
export async function* orderChanges({ db, live, caller, input, signal }: { db: Db; live: LiveEvents | undefined; caller: Caller; input: OrderChangesInput; signal: AbortSignal | undefined }): AsyncGenerator<Event> {
  if (live === undefined) throw new DomainError('service-unavailable', 'Live updates are not served here.');
  if (input.order_id !== undefined) {
    const [order] = await db.select({ customerId: orders.customerId }).from(orders).where(eq(orders.id, input.order_id));
    if (!order || !mayReadOrder(caller, order)) throw new DomainError('not-found', `Order ${input.order_id} does not exist.`);
  }
  const scope: Scope = { orderId: input.order_id, customerId: ownCustomerId(caller) };
  await live.ready();
  let subscriber: Subscriber;
  try {
    subscriber = live.subscribe(accepts(scope), caller.role === 'service' ? `client:${caller.clientId}` : `user:${caller.userId}`, {
      userId: caller.role === 'service' ? undefined : caller.userId,
      family: caller.family,
      expiresAt: caller.expiresAt,
    });
  } catch (error) {
    if (!(error instanceof TooManyStreams)) throw error;
    throw new DomainError('rate-limited', `At most ${error.limit} live streams may be open at once for one caller: close one first.`);
  }
  const stop = () => subscriber.close();
  signal?.addEventListener('abort', stop, { once: true });
  // A client gone while the order was read or the LISTEN made ready: its abort has fired already.
  if (signal?.aborted === true) stop();
  try {
    // Checked once subscribed: a deletion or revocation committed since is in the table, or heard.
    const revoked = await revokedHolder(db, caller);
    if (revoked !== undefined) throw unheld(revoked);
    // The ids sent from the table, in case they are heard live too: at most `resumeLimit`.
    const sent = new Set<string>();
    if (input.lastEventId !== undefined) {
      for await (const event of missedSince(db, input.lastEventId, scope)) {
        sent.add(event.id);
        yield toEvent(event);
        // A long way behind: the client resumes again from this one, on a fresh stream.
        if (sent.size >= live.resumeLimit) throw ended('it has more to resume');
      }
    }
    for (;;) {
      const event = await subscriber.next();
      if (event === undefined) break;
      if (sent.delete(event.id)) continue;
      yield toEvent(event);
    }
    // Ended by the hub, not by the client: it reconnects (tRPC retries this error) and resumes.
    if (subscriber.ended !== undefined && signal?.aborted !== true) throw endedError(subscriber.ended);
  } finally {
    signal?.removeEventListener('abort', stop);
    subscriber.close();
  }
}

/** `orders.onChange`: whoever may read an order (procedureFor, as `orders.get`). */
export const onChange = procedureFor({ roles: ['customer', 'admin', 'service'], scope: 'orders:read' })
  .input(OrderChangesInput)
  .subscription(async function* ({ ctx, input, signal }) {
    try {
      for await (const event of orderChanges({ db: ctx.db, live: ctx.live, caller: ctx.caller, input, signal })) yield tracked(event.id, event);
    } catch (error) {
      // Thrown while the stream runs, after the procedure's middleware returned: given the
      // domain's code here (tRPC would send any other error as a retryable 500, and the client
      // would reconnect for ever to a 404).
      throw domainTrpcError(error);
    }
  });
