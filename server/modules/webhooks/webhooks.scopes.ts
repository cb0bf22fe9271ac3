/**
 * The OAuth scopes webhooks procedures need (docs/api.md#scopes), declared here and collected into the
 * one catalogue (server/auth/scopes.ts); `Scope` knows them at compile time through `DeclaredScopes`.
 */
import { declareScopes } from '../../auth/scopes.ts';

export const webhookScopes = declareScopes({
  'webhooks:manage': { description: 'Add, change and remove webhook endpoints, rotate their secrets, read and retry their deliveries (admins).', consent: "Choose where the shop's changes are sent, and see and resend those deliveries", customers: false },
});

declare module '../../auth/scopes.ts' {
  interface DeclaredScopes {
    webhooks: typeof webhookScopes;
  }
}
