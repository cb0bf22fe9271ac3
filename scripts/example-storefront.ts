/**
 * `npm run example:storefront`: the storefront example against a service, in one command
 * (scripts/examples.ts says the steps; docs/examples.md how to use it).
 *
 *   npm run example:storefront                      # service on http://127.0.0.1:3000, shop on http://127.0.0.1:5173
 *   ORDER_SERVICE_URL=http://127.0.0.1:3000 TOKEN=<admin access token> npm run example:storefront
 */
import { mainOf, STOREFRONT } from './examples.ts';

mainOf(STOREFRONT, import.meta.filename);
