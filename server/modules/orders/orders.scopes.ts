/**
 * The OAuth scopes orders procedures need (docs/api.md#scopes), declared here and collected into the
 * one catalogue (server/auth/scopes.ts); `Scope` knows them at compile time through `DeclaredScopes`.
 */
import { declareScopes } from '../../auth/scopes.ts';

export const orderScopes = declareScopes({
  'orders:read': { description: 'Read orders, their payments and fulfillments (customers: their own).', customers: true },
  'orders:write': { description: 'Create, change, confirm, cancel and delete orders (customers: their own).', customers: true },
});

declare module '../../auth/scopes.ts' {
  interface DeclaredScopes {
    orders: typeof orderScopes;
  }
}
