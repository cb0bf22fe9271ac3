/**
 * The token and revocation endpoints refuse what their request schemas (server/oauth/
 * request-schemas.ts, the very schemas the OpenAPI document renders) refuse: a parameter over
 * MAX_PARAMETER_LENGTH or holding a NUL, a required one left out, a code_verifier of the wrong
 * form, a scope of unknown names. Each case is first checked against the schema, so a schema that
 * stops refusing it fails here too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { GrantType } from '../../server/db/schema.ts';
import { MAX_PARAMETER_LENGTH } from '../../server/oauth/params.ts';
import { RevocationRequest, tokenGrants } from '../../server/oauth/request-schemas.ts';
import { TEST_PASSWORD, type TestUser } from '../helpers/app.ts';
import { insertClient, REDIRECT_URI, startOAuthServer, type OAuthTestServer, type TestClient } from '../helpers/oauth.ts';

let server: OAuthTestServer;
let ada: TestUser;
/** A public first-party client of the user grants, and a confidential one of client_credentials. */
let app: TestClient;
let backend: TestClient;

beforeAll(async () => {
  server = await startOAuthServer({ oauth: { backoff: { freeFailures: 1_000_000 } } });
  ada = await server.createUser('customer');
  app = await insertClient(server.db, { scopes: ['orders:read', 'orders:write'] });
  backend = await insertClient(server.db, { confidential: true, grantTypes: ['client_credentials'], scopes: ['orders:read'] });
});
afterAll(() => server?.close());

const post = (url: string, body: Record<string, string>, headers: Record<string, string> = {}) =>
  server.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) });

const basic = (client: TestClient) => ({ authorization: `Basic ${Buffer.from(`${client.client.client_id}:${client.secret ?? ''}`).toString('base64')}` });

/** A request of each grant whose parameters the grant's schema accepts, from a client that may use it. */
async function validRequest(grantType: GrantType): Promise<{ body: Record<string, string>; headers?: Record<string, string> }> {
  switch (grantType) {
    case 'authorization_code':
      return {
        body: { grant_type: grantType, client_id: app.client.client_id, code: 'a-code-never-issued', redirect_uri: REDIRECT_URI, code_verifier: 'v'.repeat(43) },
      };
    case 'refresh_token': {
      const signedIn = await post('/oauth/token', { grant_type: 'password', client_id: app.client.client_id, username: ada.email, password: TEST_PASSWORD });
      expect(signedIn.statusCode, signedIn.body).toBe(200);
      return { body: { grant_type: grantType, client_id: app.client.client_id, refresh_token: signedIn.json<{ refresh_token: string }>().refresh_token } };
    }
    case 'client_credentials':
      return { body: { grant_type: grantType }, headers: basic(backend) };
    case 'password':
      return { body: { grant_type: grantType, client_id: app.client.client_id, username: ada.email, password: TEST_PASSWORD } };
  }
}

const GRANTS = Object.keys(tokenGrants()) as GrantType[];

/** The schema refuses `body`: the precondition of every case. */
function expectRefusedBySchema(schema: z.ZodType, body: Record<string, string>) {
  expect(schema.safeParse(body).success, JSON.stringify(body).slice(0, 200)).toBe(false);
}

async function expectOAuthError(response: ReturnType<typeof post>, error: string, description?: string) {
  const answer = await response;
  expect(answer.statusCode, answer.body).toBe(400);
  expect(answer.json<{ error: string; error_description: string }>()).toMatchObject({ error, ...(description === undefined ? {} : { error_description: description }) });
}

describe('the token endpoint refuses what its grant schemas refuse', () => {
  it.each(GRANTS)('%s: each of its parameters over-long or with a NUL is invalid_request', async (grantType) => {
    const schema = tokenGrants()[grantType];
    const { body, headers } = await validRequest(grantType);
    for (const name of Object.keys(schema.shape).filter((key) => key !== 'grant_type')) {
      for (const [what, value] of [
        ['over-long', 'a'.repeat(MAX_PARAMETER_LENGTH + 1)],
        ['with a NUL', 'a\u0000b'],
      ] as const) {
        const spoiled = { ...body, [name]: value };
        expectRefusedBySchema(schema, spoiled);
        const problem = what === 'over-long' ? `is longer than ${MAX_PARAMETER_LENGTH} characters` : 'contains a NUL character';
        await expectOAuthError(post('/oauth/token', spoiled, headers), 'invalid_request', `Invalid request: parameter ${name} ${problem}.`);
      }
    }
  });

  it.each(GRANTS)('%s: each parameter its schema requires, left out, is invalid_request naming it', async (grantType) => {
    const schema = tokenGrants()[grantType];
    const { body, headers } = await validRequest(grantType);
    const shape: Record<string, z.ZodType> = schema.shape;
    const requiredNames = Object.keys(shape).filter((key) => key !== 'grant_type' && shape[key]?.isOptional() === false);
    for (const name of requiredNames) {
      const rest = Object.fromEntries(Object.entries(body).filter(([key]) => key !== name));
      expectRefusedBySchema(schema, rest);
      await expectOAuthError(post('/oauth/token', rest, headers), 'invalid_request', `The ${name} parameter is required.`);
    }
  });

  it('a code_verifier of the wrong form is invalid_request with the schema\'s words', async () => {
    const schema = tokenGrants().authorization_code;
    const { body } = await validRequest('authorization_code');
    for (const verifier of ['too-short', 'v'.repeat(129), `${'v'.repeat(42)}!`]) {
      const spoiled = { ...body, code_verifier: verifier };
      expectRefusedBySchema(schema, spoiled);
      await expectOAuthError(post('/oauth/token', spoiled), 'invalid_request', 'The code_verifier must be 43-128 characters of A-Z, a-z, 0-9, -, ., _ and ~ (RFC 7636).');
    }
  });

  it.each(['refresh_token', 'client_credentials', 'password'] as const)('%s: a scope its schema refuses is invalid_scope', async (grantType) => {
    const schema = tokenGrants()[grantType];
    const { body, headers } = await validRequest(grantType);
    for (const scope of ['no-such:scope', 'orders:read  orders:write', 'orders:read\torders:write', ' orders:read']) {
      const spoiled = { ...body, scope };
      expectRefusedBySchema(schema, spoiled);
      await expectOAuthError(post('/oauth/token', spoiled, headers), 'invalid_scope');
    }
  });
});

describe('the revocation endpoint refuses what its schema refuses', () => {
  const valid = () => ({ token: 'a-token-never-issued', client_id: app.client.client_id });

  it('a request its schema accepts is answered 200', async () => {
    expect(RevocationRequest.safeParse(valid()).success).toBe(true);
    const response = await post('/oauth/revoke', valid());
    expect(response.statusCode, response.body).toBe(200);
  });

  it('token left out is invalid_request naming it', async () => {
    const rest = { client_id: valid().client_id };
    expectRefusedBySchema(RevocationRequest, rest);
    await expectOAuthError(post('/oauth/revoke', rest), 'invalid_request', 'The token parameter is required.');
  });

  it('each parameter over-long or with a NUL is invalid_request', async () => {
    for (const name of Object.keys(RevocationRequest.shape)) {
      for (const value of ['a'.repeat(MAX_PARAMETER_LENGTH + 1), 'a\u0000b']) {
        const spoiled = { ...valid(), [name]: value };
        expectRefusedBySchema(RevocationRequest, spoiled);
        await expectOAuthError(post('/oauth/revoke', spoiled), 'invalid_request');
      }
    }
  });
});
