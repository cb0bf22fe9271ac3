import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { SCOPES } from '../../auth/policy.ts';
import type { Db } from '../../db/client.ts';
import { transaction, type UnitOfWork } from '../../db/unit-of-work.ts';
import { oauthClients, oauthRefreshTokens, type GrantType } from '../../db/schema.ts';
import { notifyRevocation } from '../../events/revocations.ts';
import { DomainError } from '../../errors/problems.ts';
import { assertIfMatch, type Preconditions } from '../../lib/preconditions.ts';
import { hashSecret, newSecret } from '../../auth/secrets.ts';
import { iso, type Page } from '../common.schemas.ts';
import { listPage, newestFirst, type CursorCodec } from '../paging.ts';
import { Client, type ClientInput, type ClientListQuery, type CreatedClient } from './clients.schemas.ts';

/** What the authorization server reads of a client (server/oauth/client-auth.ts): never the secret. */
export const clientGrantColumns = {
  id: oauthClients.id,
  name: oauthClients.name,
  redirectUris: oauthClients.redirectUris,
  grantTypes: oauthClients.grantTypes,
  scopes: oauthClients.scopes,
  firstParty: oauthClients.firstParty,
  confidential: oauthClients.confidential,
};

/** The columns a client is read with: its representation (never the secret's hash). */
const clientColumns = { ...clientGrantColumns, createdAt: oauthClients.createdAt, updatedAt: oauthClients.updatedAt };
type ClientRecord = Pick<typeof oauthClients.$inferSelect, keyof typeof clientColumns>;

export function toClient(row: ClientRecord): Client {
  return {
    client_id: row.id,
    name: row.name,
    redirect_uris: row.redirectUris,
    grant_types: row.grantTypes,
    // The column is text[]; only SCOPES are ever written to it (schema-checked input, or built-ins).
    scopes: row.scopes as Client['scopes'],
    first_party: row.firstParty,
    confidential: row.confidential,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

const notFound = (clientId: string) => new DomainError('not-found', `Client "${clientId}" does not exist.`);

/**
 * A new client id: 128 random bits, base64url (22 characters). Random rather than a sequence, so
 * an id says nothing about how many clients exist, and a deleted client's id never comes back.
 */
export const newClientId = (): string => randomBytes(16).toString('base64url');

/**
 * Registers a client. A confidential one gets a secret, answered here once: the table keeps only
 * its hash (server/auth/secrets.ts), and an Idempotency-Key replay never carries it
 * (the router's `meta.rest.notReplayed`).
 */
export async function createClient({ db, work, input }: { db: Db; work?: UnitOfWork; input: ClientInput }): Promise<CreatedClient> {
  const secret = input.confidential ? newSecret() : undefined;
  // One statement, in a unit of work all the same: with an Idempotency-Key it commits with the key's row.
  const [row] = await transaction(work ?? db, (tx) =>
    tx
      .insert(oauthClients)
      .values({
        id: newClientId(),
        name: input.name,
        secretHash: secret === undefined ? null : hashSecret(secret),
        redirectUris: input.redirect_uris,
        grantTypes: input.grant_types,
        scopes: input.scopes,
        firstParty: input.first_party,
        confidential: input.confidential,
      })
      .returning(clientColumns)
      .execute(),
  );
  if (!row) throw new Error('insert returned no row');
  const client = toClient(row);
  return secret === undefined ? client : { ...client, client_secret: secret };
}

export async function getClient({ db, clientId }: { db: Db; clientId: string }): Promise<Client> {
  const [row] = await db.select(clientColumns).from(oauthClients).where(eq(oauthClients.id, clientId));
  if (!row) throw notFound(clientId);
  return toClient(row);
}

/** Newest first; the id breaks ties, so pages never overlap. */
const clientOrder = newestFirst<{ createdAt: Date; id: string }>(oauthClients.createdAt, oauthClients.id, 'text', (row) => row.id);

export async function listClients({ db, query, cursors }: { db: Db; query: ClientListQuery; cursors: CursorCodec }): Promise<Page<Client>> {
  return listPage({ cursors, binding: 'clients', terms: clientOrder, query }, (page) => page.rowsOf(db.select(clientColumns).from(oauthClients).$dynamic()), toClient);
}

/**
 * Removes a client. Its authorization codes and refresh tokens go with it (ON DELETE CASCADE), so
 * nothing it was issued can be renewed; access tokens already issued live out their short life,
 * but the live streams they hold end now: each of its refresh families is announced revoked
 * (docs/api.md#live-updates).
 */
export async function deleteClient({ db, clientId, preconditions }: { db: Db; clientId: string; preconditions: Preconditions }): Promise<void> {
  await transaction(db, async (tx) => {
    const [row] = await tx.select(clientColumns).from(oauthClients).where(eq(oauthClients.id, clientId)).for('update');
    if (!row) throw notFound(clientId);
    assertIfMatch(preconditions, Client, toClient(row));
    const families = await tx.selectDistinct({ family: oauthRefreshTokens.familyId }).from(oauthRefreshTokens).where(eq(oauthRefreshTokens.clientId, clientId));
    for (const { family } of families) await notifyRevocation(tx, { kind: 'family', family });
    await tx.delete(oauthClients).where(eq(oauthClients.id, clientId));
  });
}

// --- Built-in clients, made sure of at start (server/bootstrap.ts) ---

/** The API docs page's client: Swagger UI's "Authorize" runs the code flow with it. */
export const DOCS_CLIENT_ID = 'order-service-docs';
/** Development's client for trying the flows by hand (the banner prints a curl line with it). */
export const DEV_CLIENT_ID = 'order-service-dev';
/** A loopback redirect for trying the code flow in development (RFC 8252 section 7.3). */
export const DEV_REDIRECT_URI = 'http://127.0.0.1:8765/callback';

/** Where Swagger UI finishes the code flow, under the service's public base URL. */
export const docsRedirectUri = (baseUrl: string): string => `${baseUrl.replace(/\/+$/, '')}/api/docs/oauth2-redirect.html`;

interface BuiltInClient {
  id: string;
  name: string;
  redirectUris: string[];
  grantTypes: GrantType[];
}

/**
 * Creates a built-in client, or brings it back to this shape: first-party, public, every scope
 * (as SCOPES stands today). A row already in that shape is left alone (no write, same
 * `updated_at`), so running it at every start, or on two instances at once, changes nothing.
 */
async function ensureBuiltInClient(db: Db, client: BuiltInClient): Promise<Client> {
  const values = {
    name: client.name,
    secretHash: null,
    redirectUris: client.redirectUris,
    grantTypes: client.grantTypes,
    scopes: [...SCOPES],
    firstParty: true,
    confidential: false,
  };
  await db
    .insert(oauthClients)
    .values({ id: client.id, ...values })
    .onConflictDoUpdate({
      target: oauthClients.id,
      set: { ...values, updatedAt: sql`now()` },
      setWhere: sql`(${oauthClients.name}, ${oauthClients.secretHash}, ${oauthClients.redirectUris}, ${oauthClients.grantTypes},
        ${oauthClients.scopes}, ${oauthClients.firstParty}, ${oauthClients.confidential})
        is distinct from (excluded.name, excluded.secret_hash, excluded.redirect_uris, excluded.grant_types,
        excluded.scopes, excluded.first_party, excluded.confidential)`,
    });
  return getClient({ db, clientId: client.id });
}

/**
 * Makes sure the docs page's client exists (every environment): public (a browser keeps no
 * secret), authorization_code + refresh_token, every scope, redirecting only to
 * `${baseUrl}/api/docs/oauth2-redirect.html`. A changed base URL replaces the old redirect URI.
 */
export function ensureDocsClient(db: Db, baseUrl: string): Promise<Client> {
  return ensureBuiltInClient(db, {
    id: DOCS_CLIENT_ID,
    name: 'order-service API docs',
    redirectUris: [docsRedirectUri(baseUrl)],
    grantTypes: ['authorization_code', 'refresh_token'],
  });
}

/**
 * Makes sure development's client exists: first-party and public, so the password grant works
 * with nothing but its client_id; the code flow redirects to a loopback address.
 */
export function ensureDevClient(db: Db): Promise<Client> {
  return ensureBuiltInClient(db, {
    id: DEV_CLIENT_ID,
    name: 'order-service development',
    redirectUris: [DEV_REDIRECT_URI],
    grantTypes: ['password', 'refresh_token', 'authorization_code'],
  });
}

/**
 * Removes development's client (production and test starts): a public first-party client with the
 * password grant and every scope must not outlive a development start on the same database. Its
 * codes and refresh tokens go with it (foreign keys cascade). Answers whether it was there.
 */
export async function removeDevClient(db: Db): Promise<boolean> {
  const removed = await db.delete(oauthClients).where(eq(oauthClients.id, DEV_CLIENT_ID)).returning({ id: oauthClients.id });
  return removed.length > 0;
}
