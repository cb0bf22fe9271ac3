/**
 * The OAuth scopes events procedures need (docs/api.md#scopes), declared here and collected into the
 * one catalogue (server/auth/scopes.ts); `Scope` knows them at compile time through `DeclaredScopes`.
 */
import { declareScopes } from '../../auth/scopes.ts';

export const eventScopes = declareScopes({
  'events:read': { description: "Read every event (admins); an order's own events need only `orders:read`.", consent: 'Read the record of every change in the shop: orders, payments, products and accounts', customers: false },
});

declare module '../../auth/scopes.ts' {
  interface DeclaredScopes {
    events: typeof eventScopes;
  }
}
