/** The authorization server's endpoints (server/oauth/, documented by server/oauth/openapi-paths.ts). */
import { defineOperations } from '../helpers/operations.ts';

export default defineOperations(({ basic, confidentialClient, publicClient }) => ({
  walks: {
    // Every grant type is called in test/api/openapi.test.ts ("the OAuth endpoints ..."); the walk uses client credentials.
    'oauth-token': {
      success: async () => ({ body: { grant_type: 'client_credentials', scope: 'orders:read' }, headers: { authorization: (await confidentialClient()).authorization } }),
      failure: async () => ({ body: { grant_type: 'refresh_token', refresh_token: 'not-a-refresh-token', client_id: await publicClient() }, status: 400 }),
    },
    // RFC 7009 section 2.2: an unknown token is "revoked" too.
    'oauth-revoke': {
      success: async () => ({ body: { token: 'not-a-refresh-token', client_id: await publicClient() } }),
      failure: async () => ({ body: { token: 'not-a-refresh-token' }, status: 400 }),
    },
    'oauth-metadata': {
      success: async () => ({}),
    },
  },
  reach: {
    // A wrong secret with HTTP Basic: 401 with the Basic challenge (without the header it is 400).
    'oauth-token': {
      401: async () => ({ body: { grant_type: 'client_credentials' }, headers: { authorization: basic((await confidentialClient()).id, 'wrong-secret') } }),
    },
    'oauth-revoke': {
      401: async () => ({ body: { token: 'not-a-refresh-token' }, headers: { authorization: basic((await confidentialClient()).id, 'wrong-secret') } }),
    },
  },
  // RFC 6749 section 5.1 and RFC 7009 section 2.2: both answer 200.
  actionPosts: {
    'oauth-token': { status: 200 },
    'oauth-revoke': { status: 200 },
  },
}));
