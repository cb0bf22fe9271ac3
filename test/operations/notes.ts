import { defineOperations } from '../helpers/operations.ts';

export default defineOperations(({ t, api, orderIn, adminActors, draftOf }) => ({
  walks: {
    'notes-create': {
      success: async () => ({ params: { id: (await orderIn('confirmed', await t.createUser())).id }, body: { body: 'Called the customer.' }, token: t.admin.token }),
      failure: async () => ({ params: { id: 2_000_000_000 }, body: { body: 'Called the customer.' }, token: t.admin.token, status: 404 }),
    },
    'notes-get': {
      success: async () => {
        const order = await orderIn('confirmed', await t.createUser());
        const note = await t.request({ method: 'POST', url: `/api/v1/orders/${order.id}/notes`, payload: { body: 'Address checked.' }, token: t.admin.token });
        return { params: { id: order.id, noteId: note.json<{ id: number }>().id }, token: t.admin.token };
      },
      failure: async () => ({ params: { id: (await orderIn('confirmed', await t.createUser())).id, noteId: 2_000_000_000 }, token: t.admin.token, status: 404 }),
    },
    'notes-list': {
      success: async () => ({ params: { id: (await orderIn('confirmed', await t.createUser())).id }, query: { page: 1, limit: 10 }, token: t.admin.token }),
      failure: async () => ({ params: { id: 2_000_000_000 }, token: t.admin.token, status: 404 }),
    },
  },
  idempotency: {
    'notes.create': {
      actors: adminActors,
      scenario: async () => {
        const owner = await t.createUser('customer');
        const [order, another] = [await draftOf(owner), await draftOf(owner)];
        return {
          call: { url: api(`/orders/${order.id}/notes`), body: { body: 'Customer called: leave it with the neighbour.' } },
          other: { url: api(`/orders/${another.id}/notes`), body: { body: 'Customer called: leave it with the neighbour.' } },
          failing: { url: api(`/orders/${order.id}/notes`), body: { body: '' } },
        };
      },
    },
  },
}));
