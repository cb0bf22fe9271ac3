/**
 * The OAuth 2.0 authorization server (docs/signing-in.md) as one Fastify plugin: metadata, the
 * authorization endpoint and its sign-in form, the token and revocation endpoints, the stricter
 * rate limit, and the background purge. Form bodies (application/x-www-form-urlencoded) are
 * parsed inside this plugin only: the JSON API keeps refusing them with 415.
 */
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { TokenService } from '../auth/tokens.ts';
import type { Db } from '../db/client.ts';
import { DomainError, logFailure } from '../errors/problems.ts';
import { toDomainError } from '../errors/to-domain-error.ts';
import { handleError } from '../http/problem-reply.ts';
import { authorizeErrorPage, authorizeForm, authorizeSubmit } from './authorize.ts';
import type { OAuthContext } from './context.ts';
import { CsrfTokens } from './csrf.ts';
import { sendOAuthError } from './errors.ts';
import { parseForm } from './params.ts';
import { issuerOf, METADATA_PATH, registerMetadata } from './metadata.ts';
import { purgeExpiredGrants } from './purge.ts';
import { startPurge } from '../db/purge.ts';
import { oauthRateLimit } from './rate-limit.ts';
import { revokeEndpoint } from './revoke.ts';
import { purposeKey, resolveOAuthSettings, type OAuthOptions } from './settings.ts';
import { SignIn } from './sign-in.ts';
import { tokenEndpoint } from './token.ts';

export type { OAuthOptions } from './settings.ts';

export interface OAuthDeps {
  db: Db;
  tokens: TokenService;
  /** The service serves HTTPS itself (the derived issuer is then https://). */
  tls: boolean;
  options?: OAuthOptions | undefined;
}

export const AUTHORIZE_PATH = '/oauth/authorize';
export const TOKEN_PATH = '/oauth/token';
export const REVOKE_PATH = '/oauth/revoke';

const FORM = 'application/x-www-form-urlencoded';

/** The methods each path serves; any other answers 405 with `Allow`. */
const SERVED = new Map<string, string[]>([
  [AUTHORIZE_PATH, ['GET', 'HEAD', 'POST']],
  [TOKEN_PATH, ['POST']],
  [REVOKE_PATH, ['POST']],
  [METADATA_PATH, ['GET', 'HEAD']],
]);

/** Errors on the token and revocation endpoints are OAuth JSON, on the authorization endpoint a page. */
function answerError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.routeOptions.url;
  if (path === TOKEN_PATH || path === REVOKE_PATH) return sendOAuthError(request, reply, error);
  if (path === AUTHORIZE_PATH) {
    const domain = toDomainError(error);
    logFailure(request.log, domain, { reqId: request.id }, 'request failed');
    return authorizeErrorPage(reply.headers(domain.headers), domain.status, domain.status >= 500 ? 'Signing in is not possible right now. Try again in a moment.' : domain.message);
  }
  return handleError(error, request, reply);
}

export async function registerOAuth(app: FastifyInstance, deps: OAuthDeps): Promise<void> {
  const settings = resolveOAuthSettings(deps.options);
  const ctx: OAuthContext = {
    db: deps.db,
    tokens: deps.tokens,
    settings,
    issuer: issuerOf(app, settings.issuer, deps.tls),
    signIn: new SignIn(deps.db, purposeKey(settings.secretKey, 'sign-in-account'), settings.backoff, settings.accountBackoff),
    csrf: new CsrfTokens(purposeKey(settings.secretKey, 'csrf'), settings.formTtlSeconds),
  };
  const limited = oauthRateLimit(app, settings.rateLimit);

  const stopPurge = startPurge(app.log, settings.purgeIntervalMs, 'expired OAuth codes, refresh tokens and sign-in failures', () =>
    purgeExpiredGrants(deps.db, settings),
  );
  // preClose: before the app's onClose hook closes the database.
  app.addHook('preClose', async () => {
    await stopPurge();
  });

  await app.register(async (oauth) => {
    await oauth.register(formbody, { parser: parseForm });
    oauth.setErrorHandler(answerError);

    registerMetadata(oauth, ctx.issuer, { signUp: settings.signUpEnabled });
    oauth.get(AUTHORIZE_PATH, (request, reply) => authorizeForm(ctx, request, reply));
    oauth.post(AUTHORIZE_PATH, { config: { accepts: FORM }, onRequest: limited }, (request, reply) => authorizeSubmit(ctx, request, reply));
    const tokenConfig = { accepts: `${FORM}, application/json` };
    oauth.post(TOKEN_PATH, { config: tokenConfig, onRequest: limited }, (request, reply) => tokenEndpoint(ctx, request, reply));
    oauth.post(REVOKE_PATH, { config: tokenConfig, onRequest: limited }, (request, reply) => revokeEndpoint(ctx, request, reply));

    for (const [url, methods] of SERVED) {
      const allow = [...methods, 'OPTIONS'].join(', ');
      const missing = oauth.supportedMethods.filter((method) => !methods.includes(method)) as HTTPMethods[];
      oauth.route({
        method: missing,
        url,
        handler: async (request, reply) => {
          if (request.method === 'OPTIONS') return reply.code(204).header('allow', allow).send();
          throw new DomainError('method-not-allowed', `${request.method} is not supported on ${url}. Allowed: ${allow}.`, { headers: { allow } });
        },
      });
    }
  });
}
