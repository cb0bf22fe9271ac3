/**
 * Parameters the endpoints do not define are ignored (RFC 6749 section 3.1: "unrecognized request
 * parameters MUST be ignored"; RFC 8707's `resource` may repeat), and no answer echoes a
 * parameter the request sent, by name or value. Every `error_description` keeps to RFC 6749's
 * charset (%x20-21 / %x23-5B / %x5D-7E), on the token endpoint and in authorization redirects.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { asDescription } from '../../server/oauth/errors.ts';
import { TEST_PASSWORD, type TestUser } from '../helpers/app.ts';
import { codeFlowStart, getForm, insertClient, REDIRECT_URI, type TestClient, useOAuthServer } from '../helpers/oauth.ts';

const SEED = 20_250_311;
const DESCRIPTION = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

let ada: TestUser;
let app: TestClient;

const server = useOAuthServer({ oauth: { backoff: { freeFailures: 1_000_000 } } });
beforeAll(async () => {
  ada = await server.createUser('customer');
  app = await insertClient(server.db, { scopes: ['orders:read', 'orders:write'] });
});

const form = (entries: [string, string][]) => new URLSearchParams(entries).toString();

const tokenRequest = (payload: string, contentType = 'application/x-www-form-urlencoded') =>
  server.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': contentType }, payload });

const passwordGrant = (): [string, string][] => [
  ['grant_type', 'password'],
  ['client_id', app.client.client_id],
  ['username', ada.email],
  ['password', TEST_PASSWORD],
];

/** A name no endpoint defines, and any value. */
const unknownName = fc.string({ minLength: 1, maxLength: 30 }).filter((name) => !/^(grant_type|code|redirect_uri|code_verifier|refresh_token|scope|username|password|client_id|client_secret|token|token_type_hint|response_type|state|code_challenge|code_challenge_method|csrf_token|email)$/.test(name));
const anyValue = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 10 }), fc.constantFrom('\u0000', '"\\<script>', 'a'.repeat(5000)));

describe('the token endpoint ignores parameters it does not define', () => {
  it('a repeated resource (RFC 8707), extensions and odd names do not spoil a valid request', async () => {
    const response = await tokenRequest(
      form([...passwordGrant(), ['resource', 'https://api.example.com'], ['resource', 'https://other.example.com'], ['nonce', 'n'], ['x"evil\\', '\u0000'], ['', 'empty name'], ['claims', 'a'.repeat(5000)]]),
    );
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ token_type: 'Bearer' });
  });

  it('in JSON bodies, an undefined member may be anything (object, array, number, null)', async () => {
    const body = { ...Object.fromEntries(passwordGrant()), resource: ['https://a.example', 'https://b.example'], extra: { nested: true }, n: 1, nothing: null };
    const response = await tokenRequest(JSON.stringify(body), 'application/json');
    expect(response.statusCode, response.body).toBe(200);
  });

  it('random undefined parameters never change the answer to a valid request', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(unknownName, anyValue), { maxLength: 5 }), async (extra) => {
        const response = await tokenRequest(form([...passwordGrant(), ...extra]));
        expect(response.statusCode, response.body).toBe(200);
      }),
      { seed: SEED, numRuns: 25 },
    );
  });

  it('an error never echoes what the request sent, and its description keeps to the charset', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(unknownName, fc.string({ minLength: 6, maxLength: 30 })), { minLength: 1, maxLength: 4 }), fc.constantFrom('', 'nope', 'password'), async (extra, grant) => {
        const entries: [string, string][] = [...extra, ...(grant === '' ? [] : ([['grant_type', grant]] as [string, string][])), ['client_id', 'x-unknown-client']];
        const response = await tokenRequest(form(entries));
        expect(response.statusCode).toBeGreaterThanOrEqual(400);
        expect(response.statusCode).toBeLessThan(500);
        const { error_description: description } = response.json<{ error_description: string }>();
        expect(description).toMatch(DESCRIPTION);
        for (const [name, value] of extra) {
          if (name.length >= 6) expect(description).not.toContain(name);
          expect(description).not.toContain(value);
        }
      }),
      { seed: SEED, numRuns: 60 },
    );
  });

  it('a defined parameter is still checked: repeated, or not a string in JSON, is invalid_request naming only it', async () => {
    const repeated = await tokenRequest(form([...passwordGrant(), ['scope', 'orders:read'], ['scope', 'orders:write']]));
    expect(repeated.json()).toMatchObject({ error: 'invalid_request', error_description: 'Invalid request: parameter scope may be sent only once.' });
    const nonString = await tokenRequest(JSON.stringify({ ...Object.fromEntries(passwordGrant()), scope: ['orders:read'] }), 'application/json');
    expect(nonString.json()).toMatchObject({ error: 'invalid_request', error_description: 'Invalid request: parameter scope must be a string.' });
    const notObject = await tokenRequest('[1,2]', 'application/json');
    expect(notObject.json()).toMatchObject({ error: 'invalid_request', error_description: 'Invalid request: the body must be a form (or a JSON object) of named parameters.' });
  });

  it('a scope beyond the client\'s is refused without repeating what was asked', async () => {
    const response = await tokenRequest(form([...passwordGrant(), ['scope', 'orders:read users:write']]));
    const body = response.json<{ error: string; error_description: string }>();
    expect(body.error).toBe('invalid_scope');
    expect(body.error_description).toBe("The scope asks for more than the client's registered scopes (orders:read orders:write).");
  });
});

describe('the revocation endpoint ignores them too', () => {
  it('an unknown parameter beside a token is no error', async () => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/oauth/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form([['token', 'not-a-token'], ['client_id', app.client.client_id], ['resource', 'a'], ['resource', 'b']]),
    });
    expect(response.statusCode, response.body).toBe(200);
  });
});

describe('the authorization endpoint ignores them', () => {
  it('a repeated resource and unknown parameters: the form is served, and signs in', async () => {
    const { query } = await codeFlowStart(app.client);
    const search = new URLSearchParams(query);
    for (const [name, value] of [['resource', 'https://a.example'], ['resource', 'https://b.example'], ['prompt', 'login'], ['x"y', '<b>']]) search.append(name ?? '', value ?? '');
    const response = await server.app.inject({ method: 'GET', url: `/oauth/authorize?${search}` });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.body).not.toContain('resource');
    expect(response.body).not.toContain('x&quot;y');
    // The form carries only the request's own parameters and signs in.
    const served = await getForm(server.base, Object.fromEntries(search));
    expect(Object.keys(served.fields).sort()).toEqual(['client_id', 'code_challenge', 'code_challenge_method', 'csrf_token', 'redirect_uri', 'response_type', 'state']);
  });

  it('an error redirect names no undefined parameter and keeps its description to the charset', async () => {
    await fc.assert(
      fc.asyncProperty(unknownName, anyValue, fc.constantFrom('token', 'plain', 'bad scope'), async (name, value, spoil) => {
        const { query } = await codeFlowStart(app.client);
        const spoiled = { ...query, ...(spoil === 'token' ? { response_type: 'token' } : spoil === 'plain' ? { code_challenge_method: 'plain' } : { scope: 'clients:manage' }) };
        const search = new URLSearchParams(spoiled);
        search.append(name, value);
        search.append(name, value);
        const response = await server.app.inject({ method: 'GET', url: `/oauth/authorize?${search}` });
        expect(response.statusCode).toBe(303);
        const location = new URL(String(response.headers.location));
        expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
        const description = location.searchParams.get('error_description') ?? '';
        expect(location.searchParams.get('error')).toMatch(/^(unsupported_response_type|invalid_request|invalid_scope)$/);
        expect(description).toMatch(DESCRIPTION);
        if (name.length >= 6) expect(description).not.toContain(name);
      }),
      { seed: SEED, numRuns: 40 },
    );
  });

  it('asDescription keeps any text to the charset', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (text) => {
        expect(asDescription(text)).toMatch(DESCRIPTION);
      }),
      { seed: SEED },
    );
    expect(asDescription('a "quoted" \\ path é\n')).toBe("a 'quoted' ' path ??");
  });
});
