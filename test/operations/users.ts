import { defineOperations } from '../helpers/operations.ts';
import { userInput } from '../helpers/users.ts';

export default defineOperations(({ t, UNKNOWN_ID, api, read, withoutId, createOrder }) => ({
  walks: {
    'users-create': {
      success: async () => ({ body: userInput() }),
      failure: async () => ({ body: userInput({ email: 'not-an-email' }), status: 422 }),
    },
    'users-list': {
      success: async () => ({ query: { page: 1, limit: 10 }, token: t.admin.token }),
      failure: async () => ({ status: 401 }),
    },
    'users-get': {
      success: async () => {
        const user = await t.createUser();
        return { params: { id: user.id }, token: user.token };
      },
      failure: async () => ({ params: { id: UNKNOWN_ID }, token: t.admin.token, status: 404 }),
    },
    'users-replace': {
      success: async () => {
        const user = await t.createUser();
        const representation = await read(`/api/v1/users/${user.id}`, user.token);
        return { params: { id: user.id }, body: { ...withoutId(representation), name: 'Renamed user' }, token: user.token };
      },
      failure: async () => {
        const user = await t.createUser();
        const representation = await read(`/api/v1/users/${user.id}`, user.token);
        return { params: { id: user.id }, body: { ...withoutId(representation), email: 'not-an-email' }, token: user.token, status: 422 };
      },
    },
    'users-patch': {
      success: async () => {
        const user = await t.createUser();
        return { params: { id: user.id }, body: { name: 'Patched user', metadata: { crm_id: 'C-1' } }, contentType: 'application/merge-patch+json', token: user.token };
      },
      failure: async () => {
        const user = await t.createUser();
        return { params: { id: user.id }, body: { email: 'not-an-email' }, contentType: 'application/merge-patch+json', token: user.token, status: 422 };
      },
    },
    'users-delete': {
      success: async () => ({ params: { id: (await t.createUser()).id }, token: t.admin.token }),
      failure: async () => ({ params: { id: (await t.createUser()).id }, status: 401 }),
    },
  },
  reach: {
    'users-create': {
      // Registration cannot choose the admin role.
      403: async () => ({ body: userInput({ role: 'admin' }) }),
      409: async () => {
        const user = await t.createUser();
        return { body: userInput({ email: user.email.toUpperCase() }) };
      },
    },
    'users-replace': {
      409: async () => {
        const user = await t.createUser();
        const other = await t.createUser();
        const representation = await read(`/api/v1/users/${user.id}`, t.admin.token);
        return { params: { id: user.id }, body: { ...withoutId(representation), email: other.email }, token: t.admin.token };
      },
    },
    'users-patch': {
      409: async () => {
        const user = await t.createUser();
        const other = await t.createUser();
        return { params: { id: user.id }, body: { email: other.email }, contentType: 'application/merge-patch+json', token: t.admin.token };
      },
    },
    'users-delete': {
      409: async () => {
        const customer = await t.createUser();
        await createOrder(customer);
        return { params: { id: customer.id }, token: t.admin.token };
      },
    },
  },
  representationsForPut: {
    'users-replace': async () => {
      const user = await t.createUser();
      return { representation: await read(`/api/v1/users/${user.id}`, user.token), token: user.token };
    },
  },
  idempotency: {
    'users.create': {
      // Anonymous registration: keys are scoped by the client's address.
      actors: async () => [{ remoteAddress: '10.9.0.1' }, { remoteAddress: '10.9.0.2' }],
      scenario: async () => ({
        call: { url: api('/users'), body: userInput() },
        other: { url: api('/users'), body: userInput() },
        failing: { url: api('/users'), body: { ...userInput(), email: 'not-an-email' } },
      }),
    },
  },
}));
