/**
 * The OAuth scopes fulfillments procedures need (docs/api.md#scopes), declared here and collected into the
 * one catalogue (server/auth/scopes.ts); `Scope` knows them at compile time through `DeclaredScopes`.
 */
import { declareScopes } from '../../auth/scopes.ts';

export const fulfillmentScopes = declareScopes({
  'fulfillments:write': { description: 'Send paid orders to fulfillment and record shipments.', consent: 'Send paid orders to be packed and record their shipments', customers: false },
});

declare module '../../auth/scopes.ts' {
  interface DeclaredScopes {
    fulfillments: typeof fulfillmentScopes;
  }
}
