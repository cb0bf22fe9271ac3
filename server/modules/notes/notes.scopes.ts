/**
 * The scope of staff notes on orders (docs/api.md#order-notes), declared here and collected into
 * the one catalogue (server/auth/scopes.ts); `Scope` knows it at compile time through `DeclaredScopes`.
 */
import { declareScopes } from '../../auth/scopes.ts';

export const noteScopes = declareScopes({
  'notes:manage': { description: "Read and write staff notes on orders (admins and service clients; never shown to the order's customer).", consent: 'Read and write staff notes on orders', customers: false },
});

declare module '../../auth/scopes.ts' {
  interface DeclaredScopes {
    notes: typeof noteScopes;
  }
}
