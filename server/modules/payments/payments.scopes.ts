/**
 * The OAuth scopes payments procedures need (docs/api.md#scopes), declared here and collected into the
 * one catalogue (server/auth/scopes.ts); `Scope` knows them at compile time through `DeclaredScopes`.
 */
import { declareScopes } from '../../auth/scopes.ts';

export const paymentScopes = declareScopes({
  'payments:write': { description: 'Pay confirmed orders; refund payments (admins and service clients).', consent: 'Pay for orders, and refund payments if you are staff', customers: true },
});

declare module '../../auth/scopes.ts' {
  interface DeclaredScopes {
    payments: typeof paymentScopes;
  }
}
