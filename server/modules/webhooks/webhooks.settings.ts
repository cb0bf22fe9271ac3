/**
 * The webhooks' settings (docs/webhooks.md), from their environment variables: the rules endpoints
 * are held to, and the delivery worker's, or `false` for no worker in this process.
 */
import { z } from 'zod';
import { SettingsKey } from '../../lib/settings.ts';
import { defineSettings } from '../module.ts';
import { bareHost, type WebhookEndpointSettings } from './webhooks.targets.ts';
import { defaultWebhookWorkerSettings, type WebhookWorkerSettings } from './webhooks.worker.ts';

export interface WebhookSettings extends WebhookEndpointSettings {
  /** The delivery worker's settings, or `false`: this process delivers nothing (tests drive a `WebhookWorker` of their own). */
  worker: Partial<WebhookWorkerSettings> | false;
}

/** Outside production, 16 endpoints, the worker on with its defaults: tests and scripts that give none. */
export const webhookSettings = new SettingsKey<WebhookSettings>('webhooks', { production: false, allowedHosts: [], maxEndpoints: 16, worker: {} });

const positiveInt = z.coerce.number().int().positive();

export const webhookSettingsDeclaration = defineSettings({
  key: webhookSettings,
  title: 'Webhooks (docs/webhooks.md)',
  env: {
    WEBHOOK_MAX_ENDPOINTS: positiveInt.max(1000).default(16).describe('The most webhook endpoints (409 beyond).'),
    WEBHOOK_ALLOWED_HOSTS: z
      .string()
      .refine((v) => v.split(',').every((host) => /^[a-z0-9.:[\]-]+$/i.test(host.trim())), 'must be a comma list of host names such as hooks.internal,10.0.0.5')
      .optional()
      .describe('Production refuses endpoint hosts that resolve to loopback, private or link-local addresses,\nwhen saved and at each delivery, unless named here (comma list).'),
    WEBHOOK_RETRY_SCHEDULE: z
      .string()
      .regex(/^\s*\d+\s*(,\s*\d+\s*){0,19}$/, 'must be a comma list of at most 20 whole seconds such as 5,300,1800')
      .default(defaultWebhookWorkerSettings.retryScheduleSeconds.join(','))
      .describe('Seconds before each retry of a failed delivery (then it has failed): about 27 hours.'),
    WEBHOOK_WORKER: z.enum(['true', 'false']).default('true').describe('false: this process sends no webhooks (another instance does).'),
    WEBHOOK_CONCURRENCY_PER_ENDPOINT: positiveInt.max(100).default(defaultWebhookWorkerSettings.concurrencyPerEndpoint).describe('Attempts at once to one endpoint, per process.'),
    WEBHOOK_POLL_INTERVAL_MS: positiveInt.min(10).max(60_000).default(defaultWebhookWorkerSettings.pollIntervalMs).describe('How often the worker looks for due deliveries.'),
    WEBHOOK_LEASE_SECONDS: positiveInt
      .min(15)
      .max(3600)
      .default(defaultWebhookWorkerSettings.leaseSeconds)
      .describe('How long a claimed delivery is held before another worker may take it (15 or more).'),
  },
  read: (e, { production }): WebhookSettings => ({
    production,
    allowedHosts: (e.WEBHOOK_ALLOWED_HOSTS ?? '')
      .split(',')
      .map((host) => bareHost(host.trim()))
      .filter((host) => host !== ''),
    maxEndpoints: e.WEBHOOK_MAX_ENDPOINTS,
    worker:
      e.WEBHOOK_WORKER === 'true'
        ? {
            retryScheduleSeconds: scheduleOf(e.WEBHOOK_RETRY_SCHEDULE),
            concurrencyPerEndpoint: e.WEBHOOK_CONCURRENCY_PER_ENDPOINT,
            pollIntervalMs: e.WEBHOOK_POLL_INTERVAL_MS,
            leaseSeconds: e.WEBHOOK_LEASE_SECONDS,
          }
        : false,
  }),
  // The events' purge deletes their deliveries: a delivery's whole schedule (its delays, and each
  // attempt held up to its lease) must end within the retention (docs/webhooks.md#delivery).
  check: (e) => {
    const retentionDays = Number(e.EVENT_RETENTION_DAYS);
    const delays = scheduleOf(e.WEBHOOK_RETRY_SCHEDULE);
    const span = delays.reduce((sum, delay) => sum + delay, 0) + (delays.length + 1) * e.WEBHOOK_LEASE_SECONDS;
    if (!(span >= retentionDays * 86_400)) return [];
    return [
      `EVENT_RETENTION_DAYS: ${retentionDays} days is shorter than a webhook delivery's retries (WEBHOOK_RETRY_SCHEDULE with a WEBHOOK_LEASE_SECONDS lease per attempt: ${(span / 3600).toFixed(1)} hours); keep events longer or shorten the schedule`,
    ];
  },
});

function scheduleOf(text: string): number[] {
  return text.split(',').map((seconds) => Number(seconds.trim()));
}
