/**
 * The module list: every module the service mounts, in the order of the router (and so of the
 * REST routes and the OpenAPI document). Adding a module is one line here; its router, settings
 * and jobs come from its declaration (docs/architecture.md#adding-a-module).
 */
import { clientsModule } from './clients/clients.module.ts';
import { eventsModule } from './events/events.module.ts';
import { fulfillmentsModule } from './fulfillments/fulfillments.module.ts';
import { notesModule } from './notes/notes.module.ts';
import { ordersModule } from './orders/orders.module.ts';
import { paymentsModule } from './payments/payments.module.ts';
import { productsModule } from './products/products.module.ts';
import { refundsModule } from './refunds/refunds.module.ts';
import { usersModule } from './users/users.module.ts';
import { webhooksModule } from './webhooks/webhooks.module.ts';

export const modules = [
  productsModule,
  usersModule,
  ordersModule,
  paymentsModule,
  refundsModule,
  fulfillmentsModule,
  clientsModule,
  eventsModule,
  webhooksModule,
  notesModule,
] as const;
