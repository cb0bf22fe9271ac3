/**
 * The events module (docs/api.md#events): its router, and the purge of old events, kept
 * `EVENT_RETENTION_DAYS` (docs/architecture.md#adding-a-module). The events table itself is the
 * outbox every module writes, below the modules (server/db/schema.ts).
 */
import { z } from 'zod';
import { purgeJob } from '../../db/purge.ts';
import { SettingsKey } from '../../lib/settings.ts';
import { defineModule, defineSettings } from '../module.ts';
import { eventsRouter } from './events.router.ts';
import { purgeOldEvents } from './events.service.ts';

export interface EventSettings {
  /** Days an event is kept. */
  retentionDays: number;
  /** How often old events are purged. */
  purgeIntervalMs: number;
}

export const eventSettings = new SettingsKey<EventSettings>('events', { retentionDays: 30, purgeIntervalMs: 10 * 60_000 });

export const eventsModule = defineModule({
  name: 'events',
  router: eventsRouter,
  settings: defineSettings({
    key: eventSettings,
    title: 'Events (docs/api.md#events)',
    env: {
      EVENT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(eventSettings.defaults.retentionDays).describe('Days an event is kept, 1-3650.'),
    },
    read: (e) => ({ ...eventSettings.defaults, retentionDays: e.EVENT_RETENTION_DAYS }),
  }),
  jobs: ({ db, log, settings }) => {
    const { retentionDays, purgeIntervalMs } = settings.get(eventSettings);
    return [purgeJob(log, purgeIntervalMs, 'old events', () => purgeOldEvents(db, retentionDays))];
  },
});
