/**
 * The pure rules of OAuth clients (server/modules/clients/clients.rules.ts): which redirect URIs
 * a client may register (RFC 6749 section 3.1.2, RFC 8252) and which grant types fit together;
 * and the development banner's ready curl line (server/bootstrap.ts).
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { passwordGrantCommand, shellQuote } from '../../server/bootstrap.ts';
import { grantComplaints, redirectUriProblem, type ClientKind } from '../../server/modules/clients/clients.rules.ts';

describe('redirectUriProblem', () => {
  it.each([
    'https://app.example.com/cb',
    'https://app.example.com:8443/a/b?c=d&e=%20',
    'http://127.0.0.1:8765/callback',
    'http://localhost/cb',
    'http://[::1]:3000/cb',
    'com.example.app:/oauth2redirect',
    'com.example.app://callback',
  ])('accepts %s', (uri) => {
    expect(redirectUriProblem(uri)).toBeUndefined();
  });

  it.each([
    ['https://app.example.com/cb#x', /fragment/],
    ['https://app.example.com/cb#', /fragment/],
    ['http://app.example.com/cb', /loopback/],
    ['http://127.0.0.2.example.com/cb', /loopback/],
    ['http://localhost.example.com/cb', /loopback/],
    ['javascript:alert(1)', /private-use scheme/],
    ['data:text/html,x', /private-use scheme/],
    ['file:///etc/passwd', /private-use scheme/],
    ['myapp:/cb', /private-use scheme/],
    ['https:app.example.com', /must start with https:\/\//],
    ['https://a:b@app.example.com/', /credentials/],
    ['https://user@app.example.com/', /credentials/],
    ['/relative', /absolute URI/],
    ['https://app.example.com/a b', /RFC 3986/],
    ['https://app.example.com/\u00e9', /RFC 3986/],
    ['https://app.example.com/%4', /RFC 3986/],
    ['https://app.example.com\\@evil.example/', /RFC 3986/],
    ['https://app.example.com/\n', /RFC 3986/],
  ])('refuses %s', (uri, message) => {
    expect(redirectUriProblem(uri)).toMatch(message);
  });
});

describe('grantComplaints', () => {
  const kind = (overrides: Partial<ClientKind>): ClientKind => ({
    grant_types: ['authorization_code'],
    redirect_uris: ['https://app.example.com/cb'],
    first_party: false,
    confidential: false,
    ...overrides,
  });

  it('a browser app with code flow and refresh tokens fits', () => {
    expect(grantComplaints(kind({ grant_types: ['authorization_code', 'refresh_token'] }))).toEqual([]);
  });

  it('a first-party app may use password (and refresh) without redirect URIs', () => {
    expect(grantComplaints(kind({ grant_types: ['password', 'refresh_token'], redirect_uris: [], first_party: true }))).toEqual([]);
  });

  it('a confidential backend may use client credentials', () => {
    expect(grantComplaints(kind({ grant_types: ['client_credentials'], redirect_uris: [], confidential: true }))).toEqual([]);
  });

  it.each<[string, Partial<ClientKind>, string, RegExp]>([
    ['the code flow without a redirect URI', { redirect_uris: [] }, 'redirect_uris', /at least one/],
    ['redirect URIs without the code flow', { grant_types: ['password'], first_party: true }, 'redirect_uris', /only by the authorization_code/],
    ['password for a third party', { grant_types: ['password'], redirect_uris: [] }, 'grant_types', /first-party/],
    ['client credentials for a public client', { grant_types: ['client_credentials'], redirect_uris: [] }, 'grant_types', /confidential/],
    ['refresh_token alone', { grant_types: ['refresh_token'], redirect_uris: [] }, 'grant_types', /refresh_token needs/],
    ['refresh_token with client credentials only', { grant_types: ['client_credentials', 'refresh_token'], redirect_uris: [], confidential: true }, 'grant_types', /refresh_token needs/],
  ])('refuses %s', (_name, overrides, field, message) => {
    const complaints = grantComplaints(kind(overrides));
    expect(complaints).toEqual([{ field, message: expect.stringMatching(message) }]);
  });
});

describe('the banner curl line for the password grant', () => {
  /** What a POSIX shell makes of `words`: one argument per line. */
  const shellWords = (words: string): string[] =>
    execFileSync('sh', ['-c', `for a in ${words}; do printf '%s\\n' "$a"; done`], { encoding: 'utf8', env: { PASSWORD: 'from-env', EMAIL: 'me@example.com' } })
      .split('\n')
      .slice(0, -1);

  it('names the token endpoint, the development client and the account, form-encoding the credentials', () => {
    expect(passwordGrantCommand({ baseUrl: 'http://127.0.0.1:3000/', username: 'admin@example.com', password: 'abc_DEF-123' })).toBe(
      'curl -s -X POST http://127.0.0.1:3000/oauth/token -d grant_type=password -d client_id=order-service-dev ' +
        '--data-urlencode username=admin@example.com --data-urlencode password=abc_DEF-123',
    );
  });

  it("quotes what the shell would otherwise change: the values arrive as they are", () => {
    const password = `it's $HOME; "x" \`y\``;
    const line = passwordGrantCommand({ baseUrl: 'http://127.0.0.1:3000', username: 'a+b@example.com', password });
    const words = shellWords(line.replace(/^curl /, ''));
    expect(words).toContain(`password=${password}`);
    expect(words).toContain('username=a+b@example.com');
    expect(shellWords(shellQuote('two words'))).toEqual(['two words']);
  });

  it('an unknown password or user is read from the shell ($PASSWORD, $EMAIL)', () => {
    const words = shellWords(passwordGrantCommand({ baseUrl: 'http://127.0.0.1:3000' }).replace(/^curl /, ''));
    expect(words).toContain('password=from-env');
    expect(words).toContain('username=me@example.com');
  });
});
