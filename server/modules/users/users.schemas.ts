import { z } from 'zod';
import { Id, listOf, PageQuery, ReadOnly, text, Timestamp } from '../common.schemas.ts';

export const UserRole = z.enum(['customer', 'admin']);

export const User = z
  .object({
    id: Id,
    email: z.string(),
    name: z.string(),
    role: UserRole,
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'User' });
export type User = z.infer<typeof User>;

const Email = z.email().max(254).meta({ example: 'ada@example.com' });
const Password = text(8, 256).meta({ description: 'Write-only; stored as a salted scrypt hash, never returned.', writeOnly: true });

const userFields = {
  email: Email,
  name: text(1, 200).meta({ example: 'Ada Lovelace' }),
  role: UserRole.optional().meta({ description: 'Defaults to customer. Only an admin may set another role.' }),
};

export const UserInput = z.strictObject({ ...userFields, password: Password }).meta({ id: 'UserInput' });
export type UserInput = z.infer<typeof UserInput>;

/** PUT: without `password` the password is kept; read-only fields are ignored. */
export const UserReplace = z.strictObject({
  id: Id,
  ...userFields,
  password: Password.optional(),
  created_at: ReadOnly,
  updated_at: ReadOnly,
});
export type UserReplace = z.infer<typeof UserReplace>;

export const UserListQuery = z.object({ ...PageQuery });
export type UserListQuery = z.infer<typeof UserListQuery>;

export const UserList = listOf(User).meta({ id: 'UserList' });
