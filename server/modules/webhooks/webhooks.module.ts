/**
 * The webhooks module (docs/webhooks.md): its router, its tables, its settings and the delivery
 * worker, which runs unless `WEBHOOK_WORKER=false` (docs/architecture.md#adding-a-module).
 */
import { defineModule } from '../module.ts';
import { webhooksRouter } from './webhooks.router.ts';
import { webhookSettings, webhookSettingsDeclaration } from './webhooks.settings.ts';
import { webhookDeliveries, webhookEndpoints } from './webhooks.table.ts';
import { WebhookWorker } from './webhooks.worker.ts';

export const webhooksModule = defineModule({
  name: 'webhooks',
  router: webhooksRouter,
  tables: [webhookEndpoints, webhookDeliveries],
  settings: webhookSettingsDeclaration,
  // The worker LISTENs for the fan-out's notifications: a delivery is sent as its event commits,
  // on whichever instance wrote it, not at the next poll.
  jobs: ({ db, listen, log, settings }) => {
    const { worker, ...rules } = settings.get(webhookSettings);
    if (worker === false) return [];
    const delivery = new WebhookWorker(db, rules, worker, log, listen);
    return [{ name: 'webhook delivery', start: () => delivery.start(), stop: () => delivery.stop() }];
  },
});
