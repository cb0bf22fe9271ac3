/** Health and readiness (server/http/health.ts): operations of the service outside any module. */
import { defineOperations } from '../helpers/operations.ts';

export default defineOperations(({ t }) => ({
  walks: {
    health: {
      success: async () => ({}),
      failure: async () => ({ headers: { accept: 'text/html' }, status: 406 }),
    },
    // The test app is not told its start is done (server/main.ts does so once it listens): tell it.
    'health-ready': {
      success: async () => {
        t.app.lifecycle.serving();
        return {};
      },
      failure: async () => ({ headers: { accept: 'text/html' }, status: 406 }),
    },
  },
}));
