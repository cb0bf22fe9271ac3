import type { TokenService } from '../auth/tokens.ts';
import type { Db } from '../db/client.ts';
import type { CsrfTokens } from './csrf.ts';
import type { OAuthSettings } from './settings.ts';
import type { SignIn } from './sign-in.ts';

/** What every endpoint of the authorization server works with. */
export interface OAuthContext {
  db: Db;
  tokens: TokenService;
  settings: OAuthSettings;
  /** The issuer identifier (server/oauth/metadata.ts). */
  issuer: () => string;
  signIn: SignIn;
  csrf: CsrfTokens;
}
