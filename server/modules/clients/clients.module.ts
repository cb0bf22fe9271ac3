/** The OAuth clients module (docs/signing-in.md); its tables are the OAuth tables, below the modules (server/db/schema.ts): what it brings (docs/architecture.md#adding-a-module). */
import { defineModule } from '../module.ts';
import { clientsRouter } from './clients.router.ts';

export const clientsModule = defineModule({ name: 'clients', router: clientsRouter });
