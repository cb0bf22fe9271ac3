/**
 * What a registered OAuth client may be (RFC 6749, RFC 8252), as pure functions: the redirect
 * URIs the authorization endpoint may send a browser to, and which grant types fit together with
 * the client's kind. The schemas turn each complaint into a 422 naming the field.
 */
import type { GrantType } from '../../db/schema.ts';

/** Hosts plain `http` may redirect to: the user's own machine (RFC 8252 section 7.3). */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

// RFC 3986 characters only (unreserved, reserved, and percent escapes): no spaces, quotes,
// backslashes or non-ASCII text, which browsers would re-interpret before following the redirect.
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/;
const BAD_PERCENT_ESCAPE = /%(?![0-9A-Fa-f]{2})/;
// A private-use scheme names a domain its app controls, in reverse order (RFC 8252 section 7.1):
// `com.example.app`. The dot is what tells it apart from `javascript:`, `data:`, `file:`...
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+$/;

/**
 * Why `uri` cannot be a redirect URI, or undefined when it can: an absolute URI without a
 * fragment (RFC 6749 section 3.1.2); `https`, `http` only to a loopback host, or a private-use
 * scheme of a native app (RFC 8252); no user credentials in it.
 */
export function redirectUriProblem(uri: string): string | undefined {
  if (!URI_CHARACTERS.test(uri) || BAD_PERCENT_ESCAPE.test(uri)) {
    return 'must be an absolute URI of RFC 3986 characters (percent-encode anything else)';
  }
  if (uri.includes('#')) return 'must not contain a fragment (RFC 6749 section 3.1.2)';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'https' || scheme === 'http') {
    // The WHATWG parser accepts `https:host` too; a redirect URI is written out in full.
    if (!/^https?:\/\//i.test(uri)) return `must start with ${scheme}://`;
    if (scheme === 'http' && !LOOPBACK_HOSTS.has(url.hostname)) {
      return 'must use https; plain http is allowed only for a loopback host (localhost, 127.0.0.1, [::1])';
    }
  } else if (!PRIVATE_USE_SCHEME.test(scheme)) {
    return 'must use https, http on a loopback host, or a private-use scheme such as com.example.app (RFC 8252)';
  }
  if (url.username !== '' || url.password !== '') return 'must not contain user credentials';
  return undefined;
}

/** What the grant rules look at. */
export interface ClientKind {
  grant_types: readonly GrantType[];
  redirect_uris: readonly string[];
  first_party: boolean;
  confidential: boolean;
}

export interface GrantComplaint {
  field: 'grant_types' | 'redirect_uris';
  message: string;
}

/**
 * Grant types that do not fit the client: the code flow needs somewhere to redirect (and nothing
 * else does), the password grant is for our own apps, client credentials need a secret to
 * authenticate with (RFC 6749 section 4.4), and a refresh token needs a grant that issues one.
 */
export function grantComplaints(client: ClientKind): GrantComplaint[] {
  const grants = new Set(client.grant_types);
  const complaints: GrantComplaint[] = [];
  if (grants.has('authorization_code') && client.redirect_uris.length === 0) {
    complaints.push({ field: 'redirect_uris', message: 'must name at least one URI for the authorization_code grant' });
  }
  if (!grants.has('authorization_code') && client.redirect_uris.length > 0) {
    complaints.push({ field: 'redirect_uris', message: 'are used only by the authorization_code grant; leave them out' });
  }
  if (grants.has('password') && !client.first_party) {
    complaints.push({ field: 'grant_types', message: 'password is allowed only for first-party clients (first_party: true)' });
  }
  if (grants.has('client_credentials') && !client.confidential) {
    complaints.push({ field: 'grant_types', message: 'client_credentials needs a confidential client (confidential: true; RFC 6749 section 4.4)' });
  }
  if (grants.has('refresh_token') && !grants.has('authorization_code') && !grants.has('password')) {
    complaints.push({ field: 'grant_types', message: 'refresh_token needs authorization_code or password, the grants that issue refresh tokens' });
  }
  return complaints;
}
