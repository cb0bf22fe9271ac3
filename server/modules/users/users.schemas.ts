import { z } from 'zod';
import { Id, listOf, Metadata, PageQuery, pageExample, patchInput, readOnly, requestExample, responseExample, text, Timestamp, type MetadataMergePatch } from '../common.schemas.ts';

export const UserRole = z.enum(['customer', 'admin']).meta({ id: 'UserRole', description: 'customer or admin.' });

export const User = z
  .object({
    id: Id,
    email: z.string().max(254).meta({ description: 'Compared case-insensitively; unique.' }),
    name: z.string().min(1).max(200),
    role: UserRole,
    metadata: Metadata,
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
 *
 * Two patterns that must both match (the document says `allOf`), the shape and the local part's
 * length, rather than one with a lookahead `(?=[^@]{1,64}@)`: the same addresses, but a generator
 * such as schemathesis cannot build strings from a lookahead, only filter them, which made it
 * spend minutes on each user body (scripts/schemathesis.sh). Same message for both, and only the
 * first complaint about a field is listed, so the answer is as before.
 */
const EMAIL_SHAPE =
  /^[A-Za-z0-9_'+](?:[A-Za-z0-9_'+-]*[A-Za-z0-9_'+])?(?:\.[A-Za-z0-9_'+](?:[A-Za-z0-9_'+-]*[A-Za-z0-9_'+])?)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;
const EMAIL_LOCAL_PART = /^[^@]{1,64}@/;
const EMAIL_MESSAGE = 'must be an email address such as ada@example.com';
export const Email = z
  .email({ pattern: EMAIL_SHAPE, message: EMAIL_MESSAGE })
  .regex(EMAIL_LOCAL_PART, { message: EMAIL_MESSAGE })
  .max(254)
  // Two patterns leave the format out of the generated schema: it is still an email.
  .meta({ format: 'email', example: 'ada@example.com', description: 'At most 254 characters (local part at most 64); compared case-insensitively.' });
const Password = text(8, 256).meta({ description: 'Write-only; stored as a salted scrypt hash, never returned.', writeOnly: true });

const userFields = {
  email: Email,
  name: text(1, 200).meta({ example: 'Ada Lovelace' }),
  role: UserRole.optional().meta({ description: 'Defaults to customer. Only an admin may set another role.' }),
  metadata: Metadata.optional(),
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

/** What a patch must leave (docs/api.md#writes): a PUT body whose `id` is read-only (the path names the user). */
export const PatchedUserDocument = UserReplace.extend({ id: readOnly(Id) });

/**
 * A merge patch (RFC 7396): members of the PUT body (`password` and `current_password` too: they
 * are in no representation, so a patch adds them); a metadata key set to `null` is removed.
 */
export type UserMergePatch = Partial<Omit<z.input<typeof UserReplace>, 'metadata'>> & { metadata?: MetadataMergePatch };

export const UserPatch = patchInput<UserMergePatch>();
export type UserPatch = z.infer<typeof UserPatch>;

// No input at all is the first page: `list()` needs no `{}`.
export const UserListQuery = z.strictObject({ ...PageQuery }).prefault({});
export type UserListQuery = z.infer<typeof UserListQuery>;

export const UserList = listOf(User).meta({ id: 'UserList' });

// Examples for the OpenAPI document (validated against the schemas by test/api/openapi.test.ts).
const ada: User = {
  id: 7,
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  role: 'customer',
  metadata: {},
  created_at: '2026-01-31T12:00:00.000Z',
  updated_at: '2026-01-31T12:00:00.000Z',
};
requestExample(UserInput, { email: 'ada@example.com', name: 'Ada Lovelace', password: 'correct-horse-battery' });
requestExample(UserReplace, { id: 7, email: 'ada@example.com', name: 'Ada King', role: 'customer' });
responseExample(User, ada);
responseExample(UserList, pageExample([ada]));
