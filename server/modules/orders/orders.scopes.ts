/**
 * The OAuth scopes orders procedures need (docs/api.md#scopes), declared here and collected into the
 * one catalogue (server/auth/scopes.ts); `Scope` knows them at compile time through `DeclaredScopes`.
 */
import { declareScopes } from '../../auth/scopes.ts';

export const orderScopes = declareScopes({
  'orders:read': { description: 'Read orders, their payments and fulfillments (customers: their own).', consent: 'See orders with their payments and shipments (your own, or every order if you are staff)', customers: true },
  'orders:write': { description: 'Create, change, confirm, cancel and delete orders (customers: their own).', consent: 'Place, change, confirm and cancel orders (your own, or any order if you are staff)', customers: true },
});

declare module '../../auth/scopes.ts' {
  interface DeclaredScopes {
    orders: typeof orderScopes;
  }
}
