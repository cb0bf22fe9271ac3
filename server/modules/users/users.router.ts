import { z } from 'zod';
import { authedProcedure, publicProcedure, router, scopedProcedure } from '../../trpc/trpc.ts';
import { IdParam } from '../common.schemas.ts';
import { User, UserInput, UserList, UserListQuery, UserReplace } from './users.schemas.ts';
import * as users from './users.service.ts';

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
      rest: { status: 201, location: '/users/{id}', kind: 'item', cache: 'private', problems: ['duplicate-resource', 'forbidden'] },
    })
    .input(UserInput)
    .output(User)
    .mutation(({ ctx, input }) => users.createUser(ctx.db, ctx.caller, input)),

  get: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/users/{id}', tags: ['users'], summary: 'Read a user (yourself, or any as admin)' },
      rest: { kind: 'item', cache: 'private', problems: ['not-found'] },
    })
    .input(IdParam)
    .output(User)
    .query(({ ctx, input }) => users.getUser(ctx.db, ctx.caller, input.id)),

  list: scopedProcedure('users:read')
    .meta({
      openapi: { method: 'GET', path: '/users', tags: ['users'], summary: 'List users (admin)' },
      rest: { kind: 'list', cache: 'private' },
    })
    .input(UserListQuery)
    .output(UserList)
    .query(({ ctx, input }) => users.listUsers(ctx.db, input)),

  replace: authedProcedure
    .meta({
      openapi: { method: 'PUT', path: '/users/{id}', tags: ['users'], summary: 'Replace a user (yourself, or any as admin)' },
      rest: { kind: 'item', cache: 'private', problems: ['not-found', 'duplicate-resource', 'conflict', 'precondition-failed'] },
    })
    .input(UserReplace)
    .output(User)
    .mutation(({ ctx, input }) => users.replaceUser(ctx.db, ctx.caller, input, ctx.preconditions)),

  delete: authedProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/users/{id}', tags: ['users'], summary: 'Delete a user without orders' },
      rest: { status: 204, problems: ['not-found', 'conflict', 'precondition-failed'] },
    })
    .input(IdParam)
    .output(z.void())
    .mutation(({ ctx, input }) => users.deleteUser(ctx.db, ctx.caller, input.id, ctx.preconditions)),
});
