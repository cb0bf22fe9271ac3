/** The users module (docs/api.md#users); its table is below the modules (server/db/schema.ts), as the OAuth tables reference it: what it brings (docs/architecture.md#adding-a-module). */
import { defineModule } from '../module.ts';
import { usersRouter } from './users.router.ts';

export const usersModule = defineModule({ name: 'users', router: usersRouter });
