/**
 * Authorization server metadata (RFC 8414) at `/.well-known/oauth-authorization-server`, and the
 * issuer identifier it names: `PUBLIC_URL`, else the address the service listens on.
 */
import type { FastifyInstance } from 'fastify';
import { SCOPES } from '../auth/policy.ts';
import { GRANT_TYPES } from '../db/schema.ts';
import { CLIENT_AUTH_METHODS } from './client-auth.ts';

export const METADATA_PATH = '/.well-known/oauth-authorization-server';

/**
 * The issuer: the configured public URL (without a trailing slash), or `http(s)://host:port` of
 * the listening socket, fixed from the first request after the service listens (a wildcard
 * address stands for the loopback one). Never taken from a request's Host header, which the
 * client chooses.
 */
export function issuerOf(app: FastifyInstance, configured: string | undefined, tls: boolean): () => string {
  if (configured !== undefined) {
    const fixed = configured.replace(/\/+$/, '');
    return () => fixed;
  }
  let derived: string | undefined;
  return () => {
    if (derived !== undefined) return derived;
    const address = app.server.address();
    if (address === null || typeof address === 'string') return `${tls ? 'https' : 'http'}://localhost`;
    const host = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
    derived = `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
    return derived;
  };
}

export function endpoints(issuer: string) {
  return {
    authorization: `${issuer}/oauth/authorize`,
    token: `${issuer}/oauth/token`,
    revocation: `${issuer}/oauth/revoke`,
  };
}

export function metadataDocument(issuer: string, options: { signUp: boolean }) {
  const urls = endpoints(issuer);
  return {
    issuer,
    authorization_endpoint: urls.authorization,
    token_endpoint: urls.token,
    revocation_endpoint: urls.revocation,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...GRANT_TYPES],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    // RFC 9207: the authorization response names its issuer (`iss`), against mix-up attacks.
    authorization_response_iss_parameter_supported: true,
    // OpenID Connect's "Initiating User Registration": `prompt=create` opens the sign-up form.
    ...(options.signUp ? { prompt_values_supported: ['create'] } : {}),
    service_documentation: `${issuer}/api/docs`,
  };
}

export function registerMetadata(app: FastifyInstance, issuer: () => string, options: { signUp: boolean }): void {
  app.get(METADATA_PATH, async (_request, reply) =>
    reply
      .header('content-type', 'application/json; charset=utf-8')
      // Metadata changes only with a deployment: clients may keep it a few minutes.
      .header('cache-control', 'public, max-age=300')
      .send(JSON.stringify(metadataDocument(issuer(), options))),
  );
}
