/**
 * OAuth clients for tests, typed from the module's schemas: what an admin sends (`z.input` of
 * ClientInput) and what the service answers (`z.infer` of Client / CreatedClient).
 */
import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import type { z } from 'zod';
import type { Db } from '../../server/db/client.ts';
import { oauthClients, oauthRefreshTokens } from '../../server/db/schema.ts';
import type { Client, ClientInput, ClientList, CreatedClient } from '../../server/modules/clients/clients.schemas.ts';
import { hashSecret, newSecret } from '../../server/auth/secrets.ts';
import type { TestApp } from './app.ts';

export const CLIENTS = '/api/v1/clients';

/** A POST /clients body (and `clients.create` input) as a client writes it. */
export type ClientInputBody = z.input<typeof ClientInput>;
export type ClientBody = z.infer<typeof Client>;
export type CreatedClientBody = z.infer<typeof CreatedClient>;
export type ClientListBody = z.infer<typeof ClientList>;

let sequence = 0;

/** A browser app: public, code flow with refresh tokens, one https redirect URI. */
export function publicClientInput(overrides: Partial<ClientInputBody> = {}): Required<ClientInputBody> {
  sequence += 1;
  return {
    name: `Web app ${sequence}`,
    redirect_uris: [`https://app${sequence}.example.com/oauth/callback`],
    grant_types: ['authorization_code', 'refresh_token'],
    scopes: ['orders:read', 'orders:write'],
    first_party: false,
    confidential: false,
    ...overrides,
  };
}

/** A partner's backend: confidential, client credentials only. */
export function confidentialClientInput(overrides: Partial<ClientInputBody> = {}): Required<ClientInputBody> {
  sequence += 1;
  return {
    name: `Backend ${sequence}`,
    redirect_uris: [],
    grant_types: ['client_credentials'],
    scopes: ['orders:read', 'fulfillments:write'],
    first_party: false,
    confidential: true,
    ...overrides,
  };
}

/** Registers a client over HTTP as the app's admin and returns the 201 body (expects 201). */
export async function createClient(t: TestApp, body: ClientInputBody = publicClientInput()): Promise<CreatedClientBody> {
  const res = await t.request({ method: 'POST', url: CLIENTS, payload: body, token: t.admin.token });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<CreatedClientBody>();
}

/** The client's row as stored, secret hash included. */
export async function clientRow(db: Db, clientId: string): Promise<typeof oauthClients.$inferSelect | undefined> {
  const [row] = await db.select().from(oauthClients).where(eq(oauthClients.id, clientId));
  return row;
}

/** Inserts a refresh token issued to `clientId` for `userId` straight into the table; answers its hash. */
export async function insertRefreshToken(db: Db, clientId: string, userId: number): Promise<string> {
  const tokenHash = hashSecret(newSecret());
  await db.insert(oauthRefreshTokens).values({
    tokenHash,
    familyId: newSecret(),
    clientId,
    userId,
    scope: 'orders:read',
    expiresAt: new Date(Date.now() + 30 * 24 * 3600 * 1000),
  });
  return tokenHash;
}

/** Whether a refresh token row with this hash exists. */
export async function refreshTokenExists(db: Db, tokenHash: string): Promise<boolean> {
  const rows = await db.select({ tokenHash: oauthRefreshTokens.tokenHash }).from(oauthRefreshTokens).where(eq(oauthRefreshTokens.tokenHash, tokenHash));
  return rows.length > 0;
}

/** What GET answers for a just-created client: its 201 without the secret. */
export function withoutSecret(created: CreatedClientBody): ClientBody {
  return Object.fromEntries(Object.entries(created).filter(([field]) => field !== 'client_secret')) as ClientBody;
}

/** The registration body that describes `client`. */
export function registrationOf(client: ClientBody): ClientInputBody {
  const { name, redirect_uris, grant_types, scopes, first_party, confidential } = client;
  return { name, redirect_uris, grant_types, scopes, first_party, confidential };
}
