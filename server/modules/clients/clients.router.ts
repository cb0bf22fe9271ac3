import './clients.scopes.ts';
import { declareTag } from '../../lib/api-tags.ts';
import { z } from 'zod';
import { procedureFor, router } from '../../trpc/trpc.ts';
import { Client, ClientIdParam, ClientInput, ClientList, ClientListQuery, CreatedClient } from './clients.schemas.ts';
import * as clients from './clients.service.ts';

// Registering and removing OAuth clients decides who may ask for tokens: admins, and service
// clients holding clients:manage.
const manager = procedureFor({ roles: ['admin'], scope: 'clients:manage' });
const tags = [declareTag('clients', 'OAuth 2.0 clients of the authorization server (`/oauth`): register, list and remove them (admins, `clients:manage`). A confidential client\'s secret is shown once.')];

// A client changes only at start (the built-in ones) and is read rarely: reads revalidate.
export const clientsRouter = router({
  create: manager
    .meta({
      openapi: {
        method: 'POST',
        path: '/clients',
        tags,
        summary: 'Register an OAuth client (admin)',
        description:
          'Registers an OAuth 2.0 client of the authorization server under `/oauth`. A confidential client gets a ' +
          '`client_secret` in this answer only: the service keeps just a hash of it, and neither GET nor an ' +
          '`Idempotency-Key` replay shows it again. The grant types must fit the client: `authorization_code` needs ' +
          'redirect URIs, `password` a first-party client, `client_credentials` a confidential one, `refresh_token` ' +
          'one of the grants that issue refresh tokens.',
      },
      // The secret is shown once: a replay answers the client without it.
      rest: { status: 201, location: '/clients/{client_id}', kind: 'item', notReplayed: ['client_secret'] },
    })
    .input(ClientInput)
    .output(CreatedClient)
    .mutation(({ ctx, input }) => clients.createClient({ db: ctx.db, work: ctx.work, input })),

  list: manager
    .meta({
      openapi: {
        method: 'GET',
        path: '/clients',
        tags,
        summary: 'List OAuth clients, newest first (admin)',
        description: 'Every registered client, the built-in ones included; secrets are never listed.',
      },
      rest: { kind: 'list' },
    })
    .input(ClientListQuery)
    .output(ClientList)
    .query(({ ctx, input }) => clients.listClients({ db: ctx.db, query: input, cursors: ctx.cursors })),

  get: manager
    .meta({
      openapi: {
        method: 'GET',
        path: '/clients/{client_id}',
        tags,
        summary: 'Read an OAuth client (admin)',
        description: 'A registered client, without its secret.',
      },
      rest: { kind: 'item', problems: ['not-found'] },
    })
    .input(ClientIdParam)
    .output(Client)
    .query(({ ctx, input }) => clients.getClient({ db: ctx.db, clientId: input.client_id })),

  delete: manager
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/clients/{client_id}',
        tags,
        summary: 'Delete an OAuth client (admin)',
        description:
          'Removes the client with its authorization codes and refresh tokens, so nothing it was issued can be renewed; ' +
          'access tokens already issued expire on their own (15 minutes by default). A built-in client ' +
          '(`order-service-docs`, `order-service-dev`) comes back at the next start.',
      },
      rest: { status: 204, problems: ['not-found', 'precondition-failed'] },
    })
    .input(ClientIdParam)
    .output(z.void())
    .mutation(({ ctx, input }) => clients.deleteClient({ db: ctx.db, clientId: input.client_id, preconditions: ctx.preconditions })),
});
