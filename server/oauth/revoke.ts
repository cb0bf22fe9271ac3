/**
 * Token revocation, POST /oauth/revoke (RFC 7009). A refresh token is revoked with its whole
 * family (every token rotated from the same sign-in). An access token is a self-contained JWT the
 * service never looks up: revoking it answers 200 and changes nothing; it expires on its own
 * (15 minutes by default). Unknown tokens answer 200 too (section 2.2), so the endpoint tells
 * nothing about tokens the client does not hold.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authenticateClient } from './client-auth.ts';
import type { OAuthContext } from './context.ts';
import { invalidGrant, noStore } from './errors.ts';
import { readRequest, requireParams } from './params.ts';
import { revokeRefreshToken } from './refresh-tokens.ts';
import { REVOKE_PARAMETERS, RevocationRequest } from './request-schemas.ts';

/** A JWT (three dot-separated parts); refresh tokens are base64url without dots. */
const looksLikeJwt = (token: string): boolean => token.split('.').length === 3;

export async function revokeEndpoint(ctx: OAuthContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const params = requireParams(request.body, REVOKE_PARAMETERS);
  const { client } = await authenticateClient(ctx.db, request.headers.authorization, params);
  const { token } = readRequest(RevocationRequest, params);
  // token_type_hint (`refresh_token`, `access_token` or another) is only a hint (section 2.1): the
  // token's form tells which it is, so a wrong hint changes nothing.
  if (!looksLikeJwt(token)) {
    const outcome = await revokeRefreshToken(ctx.db, token, client.id);
    // Section 2.1: a token issued to another client is refused, and that client's token stays.
    if (outcome === 'other-client') throw invalidGrant('The token was issued to another client.');
  }
  return noStore(reply).code(200).send();
}
