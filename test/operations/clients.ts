import { createClient, publicClientInput } from '../helpers/clients.ts';
import { defineOperations } from '../helpers/operations.ts';

export default defineOperations(({ t, api, adminActors }) => ({
  walks: {
    // A public client: its 201 (no secret) is what GET at its Location answers.
    'clients-create': {
      success: async () => ({ body: publicClientInput(), token: t.admin.token }),
      failure: async () => ({ body: publicClientInput({ redirect_uris: ['http://app.example.com/cb'] }), token: t.admin.token, status: 422 }),
    },
    'clients-list': {
      success: async () => {
        await createClient(t);
        return { query: { page: 1, limit: 10 }, token: t.admin.token };
      },
      failure: async () => ({ token: (await t.createUser()).token, status: 403 }),
    },
    'clients-get': {
      success: async () => ({ params: { client_id: (await createClient(t)).client_id }, token: t.admin.token }),
      failure: async () => ({ params: { client_id: 'Hq3cY1n0x9K7d2mWv8Jt4A' }, token: t.admin.token, status: 404 }),
    },
    'clients-delete': {
      success: async () => ({ params: { client_id: (await createClient(t)).client_id }, token: t.admin.token }),
      failure: async () => ({ params: { client_id: (await createClient(t)).client_id }, token: (await t.createUser()).token, status: 403 }),
    },
  },
  idempotency: {
    'clients.create': {
      // A public client: its answer has no secret, so the replay's body is the first one's byte for byte.
      actors: adminActors,
      scenario: async () => ({
        call: { url: api('/clients'), body: publicClientInput() },
        other: { url: api('/clients'), body: publicClientInput() },
        failing: { url: api('/clients'), body: publicClientInput({ redirect_uris: [] }) },
      }),
    },
  },
}));
