import { clientsRouter } from './modules/clients/clients.router.ts';
import { eventsRouter } from './modules/events/events.router.ts';
import { fulfillmentsRouter } from './modules/fulfillments/fulfillments.router.ts';
import { notesRouter } from './modules/notes/notes.router.ts';
import { ordersRouter } from './modules/orders/orders.router.ts';
import { paymentsRouter } from './modules/payments/payments.router.ts';
import { productsRouter } from './modules/products/products.router.ts';
import { refundsRouter } from './modules/refunds/refunds.router.ts';
import { usersRouter } from './modules/users/users.router.ts';
import { webhooksRouter } from './modules/webhooks/webhooks.router.ts';
import { createCallerFactory, router } from './trpc/trpc.ts';

export const appRouter = router({
  products: productsRouter,
  users: usersRouter,
  orders: ordersRouter,
  payments: paymentsRouter,
  refunds: refundsRouter,
  fulfillments: fulfillmentsRouter,
  clients: clientsRouter,
  events: eventsRouter,
  webhooks: webhooksRouter,
  notes: notesRouter,
});

export type AppRouter = typeof appRouter;

/** `createCaller(createContextInner({ db, caller }))` calls any procedure without HTTP. */
export const createCaller = createCallerFactory(appRouter);
