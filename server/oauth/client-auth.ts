/**
 * Client authentication at the token and revocation endpoints (RFC 6749 sections 2.3 and 3.2.1):
 * a public client names itself with `client_id` (`none`); a confidential one proves its secret
 * with HTTP Basic (`client_secret_basic`, id and secret form-urlencoded inside, section 2.3.1) or
 * with `client_id` + `client_secret` in the body (`client_secret_post`), never both at once.
 */
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { oauthClients } from '../db/schema.ts';
import { clientGrantColumns } from '../modules/clients/clients.service.ts';
import { invalidClient, invalidRequest } from './errors.ts';
import type { Params } from './params.ts';
import { secretMatches } from '../auth/secrets.ts';

export type ClientAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';
export const CLIENT_AUTH_METHODS: readonly ClientAuthMethod[] = ['none', 'client_secret_basic', 'client_secret_post'];

/** A registered client as the authorization server needs it (never its secret hash). */
export interface OAuthClient {
  id: string;
  name: string;
  redirectUris: string[];
  grantTypes: string[];
  scopes: string[];
  firstParty: boolean;
  confidential: boolean;
}

export interface AuthenticatedClient {
  client: OAuthClient;
  method: ClientAuthMethod;
}

/** Client ids are short random strings; a longer one, or one with a NUL (no text column holds one), names no client. */
const MAX_CLIENT_ID_LENGTH = 255;
const namesNoClient = (id: string): boolean => id.length > MAX_CLIENT_ID_LENGTH || id.includes('\u0000');

/** The client `id`, or undefined (an over-long id names none). */
export async function findClient(db: Db, id: string): Promise<OAuthClient | undefined> {
  if (namesNoClient(id)) return undefined;
  const [row] = await db.select(clientGrantColumns).from(oauthClients).where(eq(oauthClients.id, id));
  return row;
}

async function findClientWithSecret(db: Db, id: string): Promise<(OAuthClient & { secretHash: string | null }) | undefined> {
  if (namesNoClient(id)) return undefined;
  const [row] = await db
    .select({ ...clientGrantColumns, secretHash: oauthClients.secretHash })
    .from(oauthClients)
    .where(eq(oauthClients.id, id));
  return row;
}

/** RFC 6749 appendix B: `+` is a space, then percent-decoding; undefined when malformed. */
function formUrlDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** The id and secret of an `Authorization: Basic` header; undefined without the header. */
function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  if (header === undefined) return undefined;
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header);
  if (!match?.[1]) throw invalidClient('The Authorization header must be "Basic" with the form-urlencoded client_id and client_secret (RFC 6749 section 2.3.1).', true);
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const id = colon < 0 ? undefined : formUrlDecode(decoded.slice(0, colon));
  const secret = colon < 0 ? undefined : formUrlDecode(decoded.slice(colon + 1));
  if (!id || secret === undefined) throw invalidClient('The Basic credentials must be client_id:client_secret, each form-urlencoded (RFC 6749 section 2.3.1).', true);
  return { id, secret };
}

export const UNKNOWN_CLIENT = 'The client is unknown or its credentials are wrong.';

/**
 * The client the request authenticates as. A failure is `invalid_client`: 401 with a Basic
 * challenge when the Authorization header was sent, 400 otherwise (RFC 6749 section 5.2).
 */
export async function authenticateClient(db: Db, authorization: string | undefined, params: Params): Promise<AuthenticatedClient> {
  const basic = basicCredentials(authorization);
  const refuse = (description: string) => invalidClient(description, authorization !== undefined);
  const bodyId = params.get('client_id');
  const bodySecret = params.get('client_secret');
  if (basic && bodySecret !== undefined) {
    throw invalidRequest('Use one client authentication method: HTTP Basic or client_secret in the body, not both.');
  }
  if (basic && bodyId !== undefined && bodyId !== basic.id) {
    throw invalidRequest('The client_id in the body differs from the one in the Authorization header.');
  }
  const id = basic?.id ?? bodyId;
  if (id === undefined) {
    throw refuse('Client authentication is required: send client_id (public clients), or the client secret with HTTP Basic or client_secret_post.');
  }
  const row = await findClientWithSecret(db, id);
  if (!row) throw refuse(UNKNOWN_CLIENT);
  const { secretHash, ...client } = row;
  const secret = basic?.secret ?? bodySecret;
  if (!client.confidential) {
    if (secret !== undefined) throw refuse('This client is public: it has no secret; send only its client_id.');
    return { client, method: 'none' };
  }
  if (secret === undefined) {
    throw refuse('This client is confidential: authenticate with its secret (HTTP Basic or client_secret_post).');
  }
  if (!secretMatches(secret, secretHash)) throw refuse(UNKNOWN_CLIENT);
  return { client, method: basic ? 'client_secret_basic' : 'client_secret_post' };
}
