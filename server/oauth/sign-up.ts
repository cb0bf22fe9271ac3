/**
 * Creating an account from the sign-up form (docs/signing-in.md#the-sign-up-form): the fields are
 * held to the rules of `POST /api/v1/users` (its `UserInput` schema), and the account is made by
 * the same `createUser`, as an anonymous caller, so it is always a customer. What goes wrong comes
 * back as words for the page, one per field.
 */
import type { z } from 'zod';
import type { Db } from '../db/client.ts';
import { DomainError } from '../errors/problems.ts';
import { UserInput } from '../modules/users/users.schemas.ts';
import { createUser, findSignInAccount, type SignInAccount } from '../modules/users/users.service.ts';
import { MAX_PARAMETER_LENGTH } from './params.ts';

/** The fields of the sign-up form, in its order. */
export const SIGN_UP_FIELDS = ['name', 'email', 'password'] as const;
export type SignUpField = (typeof SIGN_UP_FIELDS)[number];

export type FieldErrors = Partial<Record<SignUpField, string>>;

/** What the person typed, as far as it can be shown again (one string per field, never the password). */
export interface TypedValues {
  name?: string;
  email?: string;
}

export type ReadSignUp = { ok: true; input: UserInput; typed: TypedValues } | { ok: false; typed: TypedValues; fieldErrors: FieldErrors };

const MISSING: Record<SignUpField, string> = {
  name: 'Enter your name.',
  email: 'Enter your email address.',
  password: 'Choose a password of at least 8 characters.',
};

/** The first complaint of the schema about a field, in words for the page. */
function describeIssue(field: SignUpField, issue: z.core.$ZodIssue): string {
  if (issue.code === 'too_small') return `Use at least ${issue.minimum} characters.`;
  if (issue.code === 'too_big') return `Use at most ${issue.maximum} characters.`;
  if (field === 'email') return 'Enter an email address such as ada@example.com.';
  return `${issue.message.charAt(0).toUpperCase()}${issue.message.slice(1)}.`;
}

/**
 * The three fields of a sign-up form body, checked by the API's own schema. A field sent twice or
 * not as text is an error on that field, as is one left empty.
 */
export function readSignUp(body: Record<string, unknown>): ReadSignUp {
  const fieldErrors: FieldErrors = {};
  const values: Partial<Record<SignUpField, string>> = {};
  for (const field of SIGN_UP_FIELDS) {
    const value = body[field];
    if (value === undefined || value === '') fieldErrors[field] = MISSING[field];
    else if (typeof value !== 'string') fieldErrors[field] = 'Send this field once.';
    else values[field] = value;
  }
  // Shown again only within what any OAuth parameter may hold: a megabyte name is not sent back.
  const shown = (value: string | undefined) => (value !== undefined && value.length <= MAX_PARAMETER_LENGTH ? value : undefined);
  const name = shown(values.name);
  const email = shown(values.email);
  const typed: TypedValues = { ...(name === undefined ? {} : { name }), ...(email === undefined ? {} : { email }) };
  const parsed = UserInput.safeParse(values);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = SIGN_UP_FIELDS.find((name) => name === issue.path[0]);
      if (field !== undefined && fieldErrors[field] === undefined) fieldErrors[field] = describeIssue(field, issue);
    }
  }
  if (Object.keys(fieldErrors).length > 0 || !parsed.success) return { ok: false, typed, fieldErrors };
  return { ok: true, input: parsed.data, typed };
}

export type CreatedAccount = { ok: true; account: SignInAccount } | { ok: false; reason: 'duplicate' | 'gone' };

/**
 * Registers a customer as `POST /api/v1/users` does without a token, and answers the account the
 * authorization continues with (the user and the hash `issueForSignIn` re-checks). `duplicate`:
 * the email has an account, which that endpoint tells anyone too (409). `gone`: the account
 * changed or vanished before it could be read back.
 */
export async function createCustomer(db: Db, input: UserInput): Promise<CreatedAccount> {
  let id: number;
  try {
    ({ id } = await createUser({ db, caller: null, input: { email: input.email, name: input.name, password: input.password } }));
  } catch (error) {
    if (error instanceof DomainError && error.slug === 'duplicate-resource') return { ok: false, reason: 'duplicate' };
    throw error;
  }
  const account = await findSignInAccount({ db, email: input.email });
  if (!account || account.user.id !== id) return { ok: false, reason: 'gone' };
  return { ok: true, account };
}
