/**
 * Users for tests, typed from the module's schemas: what a client sends (`z.input` of UserInput)
 * and what the service answers (`z.infer` of User). Users that a test only needs to exist come
 * from `TestApp.createUser` / the harness (server/testing.ts `createTestUser`).
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { z } from 'zod';
import type { User, UserInput, UserList, UserReplace } from '../../server/modules/users/users.schemas.ts';
import type { TestApp } from './app.ts';

export const USERS = '/api/v1/users';

/** A POST /users body (and `users.create` input) as a client writes it. */
export type UserInputBody = z.input<typeof UserInput>;
export type UserReplaceBody = z.input<typeof UserReplace>;
export type UserBody = z.infer<typeof User>;
export type UserListBody = z.infer<typeof UserList>;

let sequence = 0;

/** A valid registration body; emails are unique per call. */
export function userInput(overrides: Partial<UserInputBody> = {}): UserInputBody {
  sequence += 1;
  return {
    email: `user-${sequence}-${randomBytes(3).toString('hex')}@example.com`,
    name: `User ${sequence}`,
    password: 'a-long-enough-password',
    ...overrides,
  };
}

/** Registers a user over HTTP (anonymously, or as `token`) and returns it (expects 201). */
export async function registerUser(t: TestApp, overrides: Partial<UserInputBody> = {}, token?: string): Promise<UserBody> {
  const res = await t.request({ method: 'POST', url: USERS, payload: userInput(overrides), ...(token ? { token } : {}) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<UserBody>();
}
