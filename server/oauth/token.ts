/**
 * The token endpoint, POST /oauth/token (RFC 6749 sections 3.2, 4 and 5): one function per
 * grant. Every answer is JSON with `Cache-Control: no-store`; access tokens are the JWTs the
 * service verifies (docs/api.md#access-tokens), refresh tokens opaque and rotating.
 */
import { eq } from 'drizzle-orm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { decodeJwt } from 'jose';
import type { z } from 'zod';
import { scopeForPerson } from '../auth/policy.ts';
import type { Role } from '../auth/tokens.ts';
import type { Db } from '../db/client.ts';
import { transaction } from '../db/unit-of-work.ts';
import { GRANT_TYPES, users, type GrantType } from '../db/schema.ts';
import { authenticateClient, UNKNOWN_CLIENT, type OAuthClient } from './client-auth.ts';
import { lockCode, markCodeUsed } from './codes.ts';
import type { OAuthContext } from './context.ts';
import { invalidClient, invalidGrant, invalidScope, noStore, OAuthError, unauthorizedClient } from './errors.ts';
import { issueForSignIn, lockClient } from './issue.ts';
import { readRequest, requireParams, required, type Params } from './params.ts';
import { verifierMatches } from './pkce.ts';
import { issueRefreshToken, lockRefreshToken, markUsed, newFamilyId, revokeFamily } from './refresh-tokens.ts';
import { TOKEN_PARAMETERS, tokenGrants, type TokenGrants } from './request-schemas.ts';
import { grantScope, parseScope, scopeTokens } from './scope.ts';
import { NOTHING_USABLE, waitMessage, WRONG_CREDENTIALS } from './sign-in.ts';

/** RFC 6749 section 5.1. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: string;
}

type Grant = (ctx: OAuthContext, client: OAuthClient, params: Params, request: FastifyRequest) => Promise<TokenResponse>;

/**
 * The parameters of `grantType` as its request schema reads them (request-schemas.ts), checked
 * where the grant always checked them: after the client is authenticated. `scope` is checked by
 * grantScope (scope.ts), whose refusal names what may be granted.
 */
const readGrant = <Type extends GrantType>(grantType: Type, params: Params): z.output<TokenGrants[Type]> => readRequest(tokenGrants()[grantType], params, ['scope']);

/** What a grant found in its transaction: a user's tokens to issue, or why it refuses. */
type Outcome = { refused: string } | { user: { id: number; role: Role; name: string }; scope: string; refreshToken: string | undefined; family: string };

/**
 * `sid` names the sign-in's refresh-token family in the access token, so a live stream held with
 * it ends when the family is revoked (docs/api.md#live-updates).
 */
async function mintResponse(ctx: OAuthContext, subject: { sub: string; role: Role; name: string; sid?: string }, scope: string, refreshToken?: string): Promise<TokenResponse> {
  const accessToken = await ctx.tokens.mint({ ...subject, scope });
  const { exp = 0, iat = 0 } = decodeJwt(accessToken);
  return { access_token: accessToken, token_type: 'Bearer', expires_in: exp - iat, ...(refreshToken ? { refresh_token: refreshToken } : {}), scope };
}

async function respond(ctx: OAuthContext, outcome: Outcome): Promise<TokenResponse> {
  if ('refused' in outcome) throw invalidGrant(outcome.refused);
  const { user, scope, refreshToken, family } = outcome;
  return mintResponse(ctx, { sub: String(user.id), role: user.role, name: user.name, sid: family }, scope, refreshToken);
}

/** A refresh token comes with a user's tokens when the client may use the refresh_token grant. */
const refreshes = (client: OAuthClient): boolean => client.grantTypes.includes('refresh_token');

async function userClaims(tx: Db, id: number): Promise<{ id: number; role: Role; name: string } | undefined> {
  const [row] = await tx.select({ id: users.id, role: users.role, name: users.name }).from(users).where(eq(users.id, id));
  return row;
}

/** RFC 6749 section 4.1.3 with RFC 7636 section 4.5: the code, its redirect URI and PKCE verifier. */
const authorizationCode: Grant = async (ctx, client, params, request) => {
  const { code, redirect_uri: redirectUri, code_verifier: verifier } = readGrant('authorization_code', params);
  const outcome = await transaction(ctx.db, async (tx): Promise<Outcome> => {
    if (!(await lockClient(tx, client.id))) throw invalidClient(UNKNOWN_CLIENT, request.headers.authorization !== undefined);
    const row = await lockCode(tx, code);
    if (!row || row.clientId !== client.id) return { refused: 'The authorization code is invalid or was issued to another client.' };
    if (row.used) {
      // Two parties hold the code: what it issued is revoked too (RFC 6749 section 4.1.2).
      if (row.familyId !== null) await revokeFamily(tx, row.familyId);
      return { refused: 'The authorization code was already used; the tokens issued for it are revoked.' };
    }
    if (row.expired) return { refused: 'The authorization code has expired.' };
    if (row.redirectUri !== redirectUri) return { refused: 'The redirect_uri differs from the one of the authorization request.' };
    if (!verifierMatches(verifier, row.codeChallenge)) return { refused: 'The code_verifier does not match the code_challenge of the authorization request.' };
    const user = await userClaims(tx, row.userId);
    if (!user) return { refused: 'The user of this authorization code no longer exists.' };
    const familyId = newFamilyId();
    await markCodeUsed(tx, code, familyId);
    const refreshToken = refreshes(client)
      ? await issueRefreshToken(tx, { familyId, clientId: client.id, userId: user.id, scope: row.scope, ttlDays: ctx.settings.refreshTokenTtlDays })
      : undefined;
    return { user, scope: row.scope, refreshToken, family: familyId };
  });
  return respond(ctx, outcome);
};

/**
 * RFC 6749 section 6, rotated (RFC 9700 section 4.14.2): the presented token is used up and a new
 * one of its family issued, in one transaction holding the token's row lock; a used token
 * presented again revokes the family. The scope may only narrow; the new refresh token keeps the
 * scope originally granted.
 */
const refreshToken: Grant = async (ctx, client, params, request) => {
  const { refresh_token: token, scope } = readGrant('refresh_token', params);
  const requested = parseScope(scope);
  const outcome = await transaction(ctx.db, async (tx): Promise<Outcome> => {
    if (!(await lockClient(tx, client.id))) throw invalidClient(UNKNOWN_CLIENT, request.headers.authorization !== undefined);
    const row = await lockRefreshToken(tx, token);
    if (!row || row.clientId !== client.id) return { refused: 'The refresh token is invalid or was issued to another client.' };
    if (row.revoked) return { refused: 'The refresh token has been revoked.' };
    if (row.used) {
      await revokeFamily(tx, row.familyId);
      return { refused: 'The refresh token was already used; every token issued with it is revoked. Sign in again.' };
    }
    if (row.expired) return { refused: 'The refresh token has expired. Sign in again.' };
    const scope = grantScope(requested, scopeTokens(row.scope), 'the scope originally granted');
    const user = await userClaims(tx, row.userId);
    if (!user) return { refused: 'The user of this refresh token no longer exists.' };
    await markUsed(tx, token);
    const next = await issueRefreshToken(tx, { familyId: row.familyId, clientId: client.id, userId: user.id, scope: row.scope, ttlDays: ctx.settings.refreshTokenTtlDays });
    return { user, scope, refreshToken: next, family: row.familyId };
  });
  return respond(ctx, outcome);
};

/** RFC 6749 section 4.4: a confidential client acting for itself (`role: service`, `sub` its id). */
const clientCredentials: Grant = async (ctx, client, params) => {
  if (!client.confidential) throw unauthorizedClient('Only confidential clients may use the client_credentials grant.');
  const { scope: asked } = readGrant('client_credentials', params);
  const scope = grantScope(parseScope(asked), client.scopes, "the client's registered scopes");
  return mintResponse(ctx, { sub: client.id, role: 'service', name: client.name }, scope);
};

/** RFC 6749 section 4.3, for our own (first-party) applications only. */
const password: Grant = async (ctx, client, params, request) => {
  if (!client.firstParty) throw unauthorizedClient('The password grant is only for first-party clients; use the authorization code flow.');
  const { username, password: secret, scope: asked } = readGrant('password', params);
  const scope = grantScope(parseScope(asked), client.scopes, "the client's registered scopes");
  const result = await ctx.signIn.signIn(username, secret, request.ip);
  if (!result.ok) {
    if (result.retryAfterSeconds === undefined) throw invalidGrant(WRONG_CREDENTIALS);
    throw new OAuthError('invalid_grant', waitMessage(result.retryAfterSeconds), { headers: { 'retry-after': String(result.retryAfterSeconds) } });
  }
  const outcome = await issueForSignIn(ctx.db, result, client.id, async (tx, user) => {
    // Only what the person's role can use (docs/signing-in.md#scopes); nothing usable refuses the grant.
    const granted = scopeForPerson(scope, user.role);
    if (granted === '') throw invalidScope(NOTHING_USABLE);
    const familyId = newFamilyId();
    const refreshToken = refreshes(client)
      ? await issueRefreshToken(tx, { familyId, clientId: client.id, userId: user.id, scope: granted, ttlDays: ctx.settings.refreshTokenTtlDays })
      : undefined;
    return { scope: granted, refreshToken, family: familyId };
  });
  if (!outcome.ok) {
    // Deleted meanwhile; a user whose password changed meanwhile signed in with a wrong one now.
    if (outcome.refused === 'client') throw invalidClient(UNKNOWN_CLIENT, request.headers.authorization !== undefined);
    throw invalidGrant(WRONG_CREDENTIALS);
  }
  return respond(ctx, { user: outcome.user, scope: outcome.issued.scope, refreshToken: outcome.issued.refreshToken, family: outcome.issued.family });
};

const grants: Record<GrantType, Grant> = {
  authorization_code: authorizationCode,
  refresh_token: refreshToken,
  client_credentials: clientCredentials,
  password,
};

const isGrantType = (value: string): value is GrantType => (GRANT_TYPES as readonly string[]).includes(value);

export async function tokenEndpoint(ctx: OAuthContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const params = requireParams(request.body, TOKEN_PARAMETERS);
  const grantType = required(params, 'grant_type');
  if (!isGrantType(grantType)) {
    throw new OAuthError('unsupported_grant_type', `The grant_type must be one of ${GRANT_TYPES.join(', ')}.`);
  }
  const { client } = await authenticateClient(ctx.db, request.headers.authorization, params);
  if (!client.grantTypes.includes(grantType)) throw unauthorizedClient(`This client is not registered for the ${grantType} grant.`);
  const body = await grants[grantType](ctx, client, params, request);
  return noStore(reply).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(body));
}
