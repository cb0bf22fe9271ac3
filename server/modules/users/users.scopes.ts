/**
 * The OAuth scopes users procedures need (docs/api.md#scopes), declared here and collected into the
 * one catalogue (server/auth/scopes.ts); `Scope` knows them at compile time through `DeclaredScopes`.
 */
import { declareScopes } from '../../auth/scopes.ts';

export const userScopes = declareScopes({
  'users:read': { description: 'Read users (customers: themselves).', consent: "See your name and email address (every account's if you are staff)", customers: true },
  'users:write': { description: 'Change and delete users (customers: themselves).', consent: 'Change your name, email address and password, or delete your account (any account if you are staff)', customers: true },
});

declare module '../../auth/scopes.ts' {
  interface DeclaredScopes {
    users: typeof userScopes;
  }
}
