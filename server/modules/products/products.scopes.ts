/**
 * The OAuth scopes products procedures need (docs/api.md#scopes), declared here and collected into the
 * one catalogue (server/auth/scopes.ts); `Scope` knows them at compile time through `DeclaredScopes`.
 */
import { declareScopes } from '../../auth/scopes.ts';

export const productScopes = declareScopes({
  'products:write': { description: 'Create, replace and archive products.', consent: 'Add, change and remove products in the catalogue', customers: false },
});

declare module '../../auth/scopes.ts' {
  interface DeclaredScopes {
    products: typeof productScopes;
  }
}
