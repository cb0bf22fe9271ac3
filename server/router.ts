import { routerOf } from './modules/module.ts';
import { modules } from './modules/modules.ts';
import { createCallerFactory } from './trpc/trpc.ts';

/** Every module's router under its name (server/modules/modules.ts). */
export const appRouter = routerOf(modules);

export type AppRouter = typeof appRouter;

/** `createCaller(createContextInner({ db, caller }))` calls any procedure without HTTP. */
export const createCaller = createCallerFactory(appRouter);
