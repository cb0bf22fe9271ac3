/**
 * Mints an access token with the service's own TokenService, for scripts that drive a running
 * service (scripts/schemathesis.sh). The service looks nothing up: a token signed with the same
 * JWT_SECRET, issuer and audience is accepted (docs/api.md#access-tokens).
 *
 *   JWT_SECRET=... npx tsx scripts/mint-token.ts <sub> <customer|admin> [ttl seconds]
 *
 * JWT_ISSUER and JWT_AUDIENCE default as in the service. Prints the token on stdout.
 */
import { TokenService, type Role } from '../server/auth/tokens.ts';

const [sub, role, ttl] = process.argv.slice(2);
const secret = process.env.JWT_SECRET ?? '';
const roles: readonly Role[] = ['customer', 'admin'];
const isRole = (value: string | undefined): value is Role => roles.some((r) => r === value);

if (!sub || !/^[1-9][0-9]*$/.test(sub) || !isRole(role)) {
  console.error('usage: JWT_SECRET=... tsx scripts/mint-token.ts <user id> <customer|admin> [ttl seconds]');
  process.exit(2);
}
if (secret.length < 32) {
  console.error('JWT_SECRET must be set and at least 32 bytes');
  process.exit(2);
}
const ttlSeconds = ttl === undefined ? 3600 : Number(ttl);
if (!Number.isSafeInteger(ttlSeconds) || ttlSeconds <= 0) {
  console.error('ttl must be a positive integer (seconds)');
  process.exit(2);
}

const tokens = new TokenService({
  secret,
  issuer: process.env.JWT_ISSUER ?? 'order-service',
  audience: process.env.JWT_AUDIENCE ?? 'order-service-api',
  accessTokenTtlSeconds: ttlSeconds,
});
process.stdout.write(`${await tokens.mint({ sub, role }, ttlSeconds)}\n`);
