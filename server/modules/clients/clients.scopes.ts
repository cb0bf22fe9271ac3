/**
 * The OAuth scopes clients procedures need (docs/api.md#scopes), declared here and collected into the
 * one catalogue (server/auth/scopes.ts); `Scope` knows them at compile time through `DeclaredScopes`.
 */
import { declareScopes } from '../../auth/scopes.ts';

export const clientScopes = declareScopes({
  'clients:manage': { description: 'Register, list and remove OAuth clients (admins).', consent: 'Register and remove the apps that may sign in to this service', customers: false },
});

declare module '../../auth/scopes.ts' {
  interface DeclaredScopes {
    clients: typeof clientScopes;
  }
}
