/**
 * `npm run example:admin`: the admin console example against a service, in one command
 * (scripts/examples.ts says the steps; docs/examples.md how to use it). Sign in with the admin
 * account it prints (or, against a running service, one of its admins).
 *
 *   npm run example:admin                           # service on http://127.0.0.1:3001, console on http://127.0.0.1:5174
 *   ORDER_SERVICE_URL=http://127.0.0.1:3000 TOKEN=<admin access token> npm run example:admin   # e.g. the storefront's service
 */
import { ADMIN_CONSOLE, mainOf } from './examples.ts';

mainOf(ADMIN_CONSOLE, import.meta.filename);
