/**
 * Webhook endpoints and their deliveries, beside their module (drizzle.config.ts reads every
 * `<name>.table.ts`; docs/architecture.md#adding-a-module).
 */
import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';
import { timestamps } from '../../db/columns.ts';
import { events } from '../../db/schema.ts';

/**
 * Webhook endpoints (docs/webhooks.md): where events are delivered. The secret signs every
 * delivery, so it is kept as written (a hash could not sign); it is shown only when made. After a
 * rotation the previous secret signs too until `previous_secret_expires_at` (24 hours).
 * `enabled_events` holds types, `<resource>.*` prefixes or `*`: the fan-out trigger of
 * migration `webhook_fan_out` matches an event against them with one array overlap.
 */
export const webhookEndpoints = pgTable('webhook_endpoints', {
  id: serial('id').primaryKey(),
  url: text('url').notNull(),
  description: text('description'),
  enabledEvents: text('enabled_events').array().notNull(),
  secret: text('secret').notNull(),
  previousSecret: text('previous_secret'),
  previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true, precision: 3 }),
  disabled: boolean('disabled').notNull().default(false),
  /** Why it is disabled (`requested`, or `gone` after a 410); null while enabled. */
  disabledReason: text('disabled_reason', { enum: ['requested', 'gone'] }),
  ...timestamps,
});

export const WEBHOOK_DELIVERY_STATES = ['pending', 'succeeded', 'failed'] as const;
export type WebhookDeliveryState = (typeof WEBHOOK_DELIVERY_STATES)[number];

/**
 * One event to one endpoint (docs/webhooks.md#delivery): made by the trigger on `events` in the
 * event's own transaction, for every enabled endpoint whose `enabled_events` match, so no event is
 * ever missed and none is fanned out twice. A worker claims a due delivery by setting
 * `locked_until` (a lease): a process killed mid-delivery leaves it due again once the lease ends.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: serial('id').primaryKey(),
    endpointId: integer('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    // Purged after its event's retention once it has ended (server/modules/events/events.service.ts#purgeOldEvents), then its event.
    eventId: text('event_id')
      .notNull()
      .references(() => events.id, { onDelete: 'cascade' }),
    eventType: text('event_type').notNull(),
    state: text('state', { enum: WEBHOOK_DELIVERY_STATES }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /** When it is due (pending), null once it succeeded or failed for good. */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }).defaultNow(),
    /** A worker holds it until then; past it, it is due again. */
    lockedUntil: timestamp('locked_until', { withTimezone: true, precision: 3 }),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true, precision: 3 }),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    // The worker's claim: an endpoint's due deliveries, oldest due first.
    index('webhook_deliveries_due_idx').on(t.endpointId, t.nextAttemptAt).where(sql`${t.state} = 'pending'`),
    // An endpoint's list, newest first.
    index('webhook_deliveries_endpoint_created_idx').on(t.endpointId, t.createdAt, t.id),
    // The events' purge (its ended deliveries of old events).
    index('webhook_deliveries_event_idx').on(t.eventId),
  ],
);
