/**
 * Development's client `order-service-dev` (public, first-party, password grant, every scope)
 * exists only while the service runs in development: a production or test start on a database a
 * development start once used removes it, and everything issued through it goes too.
 */
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { bootstrapClients } from '../../server/bootstrap.ts';
import { oauthClients, oauthRefreshTokens } from '../../server/db/schema.ts';
import { DEV_CLIENT_ID, DOCS_CLIENT_ID } from '../../server/modules/clients/clients.service.ts';
import { TEST_PASSWORD } from '../helpers/app.ts';
import { postToken, useOAuthServer } from '../helpers/oauth.ts';

const server = useOAuthServer();

const BASE = 'https://orders.example.com';
const clientIds = async () => (await server.db.select({ id: oauthClients.id }).from(oauthClients)).map((row) => row.id).sort();

describe('order-service-dev lives only in development', () => {
  it.each(['production', 'test'] as const)('a %s start after a development one removes it with its refresh tokens; the docs client stays', async (env) => {
    const dev = await bootstrapClients(server.db, { env: 'development' }, BASE);
    expect(dev.dev?.client_id).toBe(DEV_CLIENT_ID);
    const ada = await server.createUser('customer');
    const signedIn = await postToken(server.base, { grant_type: 'password', client_id: DEV_CLIENT_ID, username: ada.email, password: TEST_PASSWORD });
    expect(signedIn.status).toBe(200);
    const { refresh_token: refreshToken } = (await signedIn.json()) as { refresh_token: string };

    const later = await bootstrapClients(server.db, { env }, BASE);
    expect(later.dev).toBeUndefined();
    expect(later.docs.client_id).toBe(DOCS_CLIENT_ID);
    expect(await clientIds()).not.toContain(DEV_CLIENT_ID);
    expect(await clientIds()).toContain(DOCS_CLIENT_ID);
    expect(await server.db.select().from(oauthRefreshTokens).where(eq(oauthRefreshTokens.clientId, DEV_CLIENT_ID))).toEqual([]);
    // Nothing can sign in or refresh through it any more.
    const refreshed = await postToken(server.base, { grant_type: 'refresh_token', client_id: DEV_CLIENT_ID, refresh_token: refreshToken });
    expect(await refreshed.json()).toMatchObject({ error: 'invalid_client' });
    const again = await postToken(server.base, { grant_type: 'password', client_id: DEV_CLIENT_ID, username: ada.email, password: TEST_PASSWORD });
    expect(await again.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('a production start without it changes nothing; a development start brings it back', async () => {
    const before = await clientIds();
    expect((await bootstrapClients(server.db, { env: 'production' }, BASE)).dev).toBeUndefined();
    expect(await clientIds()).toEqual(before);
    expect((await bootstrapClients(server.db, { env: 'development' }, BASE)).dev?.client_id).toBe(DEV_CLIENT_ID);
    expect(await clientIds()).toContain(DEV_CLIENT_ID);
  });
});
