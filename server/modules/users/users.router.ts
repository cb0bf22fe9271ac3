import './users.scopes.ts';
import { declareTag } from '../../lib/api-tags.ts';
import { z } from 'zod';
import { procedureFor, publicProcedure, router } from '../../trpc/trpc.ts';
import { IdParam } from '../common.schemas.ts';
import { User, UserInput, UserList, UserListQuery, UserPatch, UserReplace } from './users.schemas.ts';
import * as users from './users.service.ts';

declareTag('users', 'Accounts. Registration needs no token; customers read and change only themselves, admins everyone. Passwords are write-only.');

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
        description:
          'Without a token, registers a customer (a `role` other than `customer` is 403). With an admin token, creates a user of any role ' +
          '(an admin token limited by a `scope` claim needs `users:write`). The email is unique whatever its case (409 `duplicate-resource`); ' +
          'the password is stored as a salted scrypt hash and never returned.',
        protect: false,
      },
      rest: {
        status: 201,
        location: '/users/{id}',
        kind: 'item',
        problems: ['duplicate-resource', 'forbidden', 'insufficient-scope'],
        links: [{ to: 'orders.create', body: { customer_id: 'id' }, description: 'Order for the new customer (admins and service clients name the customer).' }],
      },
    })
    .input(UserInput)
    .output(User)
    .mutation(({ ctx, input }) => users.createUser({ db: ctx.db, work: ctx.work, caller: ctx.caller, input })),

  get: reader
    .meta({
      openapi: { method: 'GET', path: '/users/{id}', tags: ['users'], summary: 'Read a user (yourself, or any as admin)', description: 'A user. Customers read only themselves (another id is 404); admins and service clients read anyone.' },
      rest: { kind: 'item', cache: 'private', problems: ['not-found'] },
    })
    .input(IdParam)
    .output(User)
    .query(({ ctx, input }) => users.getUser({ db: ctx.db, caller: ctx.caller, id: input.id })),

  list: procedureFor({ roles: ['admin', 'service'], scope: 'users:read' })
    .meta({
      openapi: { method: 'GET', path: '/users', tags: ['users'], summary: 'List users (admin)', description: 'Every user, paged. For admins and service clients.' },
      rest: { kind: 'list', cache: 'private' },
    })
    .input(UserListQuery)
    .output(UserList)
    .query(({ ctx, input }) => users.listUsers({ db: ctx.db, query: input, cursors: ctx.cursors })),

  replace: writer
    .meta({
      openapi: { method: 'PUT', path: '/users/{id}', tags: ['users'], summary: 'Replace a user (yourself, or any as admin)', description: 'Replaces a user. Without `password` the password is kept; changing your own email or password needs `current_password` (422 when absent or wrong). Only an admin changes a role, and the last admin cannot be demoted (409 `conflict`). Read-only fields sent back are ignored.' },
      rest: { kind: 'item', problems: ['not-found', 'duplicate-resource', 'conflict', 'precondition-failed'] },
    })
    .input(UserReplace)
    .output(User)
    .mutation(({ ctx, input }) => users.replaceUser({ db: ctx.db, caller: ctx.caller, input, preconditions: ctx.preconditions })),

  patch: writer
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/users/{id}',
        tags: ['users'],
        summary: 'Patch a user (yourself, or any as admin; merge patch or JSON Patch)',
        description: 'Changes some fields of a user: a merge patch (RFC 7396; `metadata` merges key by key, a key set to null is removed) or a JSON Patch (RFC 6902). The patched user must be a valid PUT body and follows the same rules (`current_password` to change your own email or password, roles by admins only); a patch that changes nothing changes nothing (same ETag, no event).',
        contentTypes: ['application/merge-patch+json', 'application/json-patch+json', 'application/json'],
      },
      rest: {
        kind: 'item',
        patch: {
          examples: {
            mergePatch: { name: 'Ada King', metadata: { crm_id: 'C-1042', newsletter: null } },
            jsonPatch: [
              { op: 'test', path: '/name', value: 'Ada Lovelace' },
              { op: 'replace', path: '/name', value: 'Ada King' },
              { op: 'add', path: '/metadata/crm_id', value: 'C-1042' },
            ],
          },
        },
        problems: ['not-found', 'duplicate-resource', 'conflict', 'precondition-failed'],
      },
    })
    .input(UserPatch)
    .output(User)
    .mutation(({ ctx, input }) => users.patchUser({ db: ctx.db, caller: ctx.caller, input, preconditions: ctx.preconditions })),

  delete: writer
    .meta({
      openapi: { method: 'DELETE', path: '/users/{id}', tags: ['users'], summary: 'Delete a user without orders', description: 'Deletes a user who has no orders (409 `conflict` otherwise, and for the last admin). Customers delete only themselves.' },
      rest: { status: 204, problems: ['not-found', 'conflict', 'precondition-failed'] },
    })
    .input(IdParam)
    .output(z.void())
    .mutation(({ ctx, input }) => users.deleteUser({ db: ctx.db, caller: ctx.caller, id: input.id, preconditions: ctx.preconditions })),
});
