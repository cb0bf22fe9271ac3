import { z } from 'zod';
import { procedureFor, publicProcedure, router } from '../../trpc/trpc.ts';
import { IdParam } from '../common.schemas.ts';
import { User, UserInput, UserList, UserListQuery, UserReplace } from './users.schemas.ts';
import * as users from './users.service.ts';

// People reach their own user (admins any); a service client reads any user with users:read and
// never changes one. A token limited by its `scope` claim needs users:read / users:write.
const reader = procedureFor({ roles: ['customer', 'admin', 'service'], scope: 'users:read' });
const writer = procedureFor({ roles: ['customer', 'admin'], scope: 'users:write' });

export const usersRouter = router({
  create: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/users',
        tags: ['users'],
        summary: 'Register a customer (no token) or create any user (admin)',
        protect: false,
      },
      rest: { status: 201, location: '/users/{id}', kind: 'item', problems: ['duplicate-resource', 'forbidden'] },
    })
    .input(UserInput)
    .output(User)
    .mutation(({ ctx, input }) => users.createUser({ db: ctx.db, caller: ctx.caller, input })),

  get: reader
    .meta({
      openapi: { method: 'GET', path: '/users/{id}', tags: ['users'], summary: 'Read a user (yourself, or any as admin)' },
      rest: { kind: 'item', cache: 'private', problems: ['not-found'] },
    })
    .input(IdParam)
    .output(User)
    .query(({ ctx, input }) => users.getUser({ db: ctx.db, caller: ctx.caller, id: input.id })),

  list: procedureFor({ roles: ['admin', 'service'], scope: 'users:read' })
    .meta({
      openapi: { method: 'GET', path: '/users', tags: ['users'], summary: 'List users (admin)' },
      rest: { kind: 'list', cache: 'private' },
    })
    .input(UserListQuery)
    .output(UserList)
    .query(({ ctx, input }) => users.listUsers({ db: ctx.db, query: input })),

  replace: writer
    .meta({
      openapi: { method: 'PUT', path: '/users/{id}', tags: ['users'], summary: 'Replace a user (yourself, or any as admin)' },
      rest: { kind: 'item', problems: ['not-found', 'duplicate-resource', 'conflict', 'precondition-failed'] },
    })
    .input(UserReplace)
    .output(User)
    .mutation(({ ctx, input }) => users.replaceUser({ db: ctx.db, caller: ctx.caller, input, preconditions: ctx.preconditions })),

  delete: writer
    .meta({
      openapi: { method: 'DELETE', path: '/users/{id}', tags: ['users'], summary: 'Delete a user without orders' },
      rest: { status: 204, problems: ['not-found', 'conflict', 'precondition-failed'] },
    })
    .input(IdParam)
    .output(z.void())
    .mutation(({ ctx, input }) => users.deleteUser({ db: ctx.db, caller: ctx.caller, id: input.id, preconditions: ctx.preconditions })),
});
