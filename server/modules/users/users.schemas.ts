import { z } from 'zod';
import { Id, listOf, PageQuery, pageExample, readOnly, requestExample, responseExample, text, Timestamp } from '../common.schemas.ts';

export const UserRole = z.enum(['customer', 'admin']).meta({ id: 'UserRole', description: 'customer or admin.' });

export const User = z
  .object({
    id: Id,
    email: z.string().max(254).meta({ description: 'Compared case-insensitively; unique.' }),
    name: z.string().min(1).max(200),
    role: UserRole,
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'User' });
export type User = z.infer<typeof User>;

/**
 * What a careful registration form accepts (stricter than RFC 5321, on purpose): a local part of
 * at most 64 letters, digits and `_'+-` in dot-separated atoms that neither start nor end with a
 * hyphen; domain labels of letters, digits and inner hyphens (at most 63 each); a top-level
 * domain of at least two letters. `x1@b-.com` and `a@localhost` are refused.
 */
const EMAIL_PATTERN =
  /^(?=[^@]{1,64}@)[A-Za-z0-9_'+](?:[A-Za-z0-9_'+-]*[A-Za-z0-9_'+])?(?:\.[A-Za-z0-9_'+](?:[A-Za-z0-9_'+-]*[A-Za-z0-9_'+])?)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;
const Email = z
  .email({ pattern: EMAIL_PATTERN, message: 'must be an email address such as ada@example.com' })
  .max(254)
  .meta({ example: 'ada@example.com', description: 'At most 254 characters (local part at most 64); compared case-insensitively.' });
const Password = text(8, 256).meta({ description: 'Write-only; stored as a salted scrypt hash, never returned.', writeOnly: true });

const userFields = {
  email: Email,
  name: text(1, 200).meta({ example: 'Ada Lovelace' }),
  role: UserRole.optional().meta({ description: 'Defaults to customer. Only an admin may set another role.' }),
};

export const UserInput = z.strictObject({ ...userFields, password: Password }).meta({ id: 'UserInput' });
export type UserInput = z.infer<typeof UserInput>;

/**
 * Proof that the person holding the token knows the account's password. Not held to the rules
 * of a new password: it only has to match the one stored, whatever rules applied when it was set.
 */
const CurrentPassword = z.string().min(1).max(256).meta({
  description: "Write-only; required to change your own email or password (not for an admin changing another user's). Never stored or returned.",
  writeOnly: true,
});

/** PUT: without `password` the password is kept; read-only fields are ignored. */
export const UserReplace = z.strictObject({
  id: Id,
  ...userFields,
  password: Password.optional(),
  current_password: CurrentPassword.optional(),
  created_at: readOnly(Timestamp),
  updated_at: readOnly(Timestamp),
});
export type UserReplace = z.infer<typeof UserReplace>;

// No input at all is the first page: `list()` needs no `{}`.
export const UserListQuery = z.object({ ...PageQuery }).prefault({});
export type UserListQuery = z.infer<typeof UserListQuery>;

export const UserList = listOf(User).meta({ id: 'UserList' });

// Examples for the OpenAPI document (validated against the schemas by test/api/openapi.test.ts).
const ada: User = {
  id: 7,
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  role: 'customer',
  created_at: '2026-01-31T12:00:00.000Z',
  updated_at: '2026-01-31T12:00:00.000Z',
};
requestExample(UserInput, { email: 'ada@example.com', name: 'Ada Lovelace', password: 'correct-horse-battery' });
requestExample(UserReplace, { id: 7, email: 'ada@example.com', name: 'Ada King', role: 'customer' });
responseExample(User, ada);
responseExample(UserList, pageExample([ada]));
