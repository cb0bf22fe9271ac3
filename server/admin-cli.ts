/**
 * `npm run admin -- create|reset-password|token` (docs/operations.md#admin-accounts-and-tokens):
 * the operator's way to an admin account and an admin access token on the configured database,
 * with no admin signed in (a lost password, a new deploy). Accounts are made and changed through
 * the users procedures (`createCaller`), so the API's rules hold: the email and password rules,
 * the unique email, scrypt hashing, the `user.*` events, and a new password ending the user's
 * OAuth grants. Tokens are minted by the service's own TokenService with its configured secret.
 *
 * Refused input (usage, a bad value, a database without this version's migrations) is one line on
 * stderr and exit 2, before anything changes; a failure (the database unreachable) one line and
 * exit 1. Never a stack.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { TRPCError } from '@trpc/server';
import { PERSON_SCOPES, scopeForPerson } from './auth/policy.ts';
import { isScope } from './auth/scopes.ts';
import { MAX_ACCESS_TOKEN_TTL_SECONDS, TokenService, type UserCaller } from './auth/tokens.ts';
import { ConfigError, loadConfig, loadDatabaseConfig } from './config.ts';
import { DataDirectoryLockedError, MigrationsPendingError, openDatabase, type Database } from './db/client.ts';
import { DomainError } from './errors/problems.ts';
import { toDomainError } from './errors/to-domain-error.ts';
import { findUserByEmail } from './modules/users/users.service.ts';
import { Email } from './modules/users/users.schemas.ts';
import { createCaller } from './router.ts';
import { createContextInner } from './trpc/context.ts';

export const USAGE = [
  'usage: npm run admin -- <command> [options]',
  '  create --email <email> --name <name> [--password-stdin]   make an admin; prints a generated password once',
  '  reset-password --email <email> [--password-stdin]         set a new password; ends the user\'s sign-ins',
  '  token --email <email> [--scopes <a,b>] [--ttl <seconds>] [--allow-customer]   mint an access token',
].join('\n');

/** Where the command reads and writes: the process's own streams, or a test's. */
export interface AdminIo {
  env: NodeJS.ProcessEnv;
  /** All of standard input, read only for `--password-stdin`. */
  readStdin: () => Promise<string>;
  /** The secret alone (a password, a token), so `$(npm run --silent admin -- ...)` captures it. */
  stdout: (line: string) => void;
  /** What was done, and every refusal. */
  stderr: (line: string) => void;
}

/** Input refused before anything changed: exit 2. */
class Refusal extends Error {}

/**
 * The operator at the server's console: an admin who is no user (ids start at 1), so no rule
 * about one's own account applies; an admin changing someone else's password needs no current
 * one (docs/api.md#users).
 */
const operator: UserCaller = Object.freeze({ sub: 'admin-command', userId: 0, role: 'admin', name: 'admin command', scopes: 'all' });

/** Default and bounds of `token --ttl`: an hour, as the development banner's, at most what the service accepts. */
const DEFAULT_TOKEN_TTL_SECONDS = 3600;

const options = {
  email: { type: 'string' },
  name: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  scopes: { type: 'string' },
  ttl: { type: 'string' },
  'allow-customer': { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

/** Which options each command takes; any other is refused, not ignored. */
const ALLOWED: Record<string, readonly (keyof typeof options)[]> = {
  create: ['email', 'name', 'password-stdin'],
  'reset-password': ['email', 'password-stdin'],
  token: ['email', 'scopes', 'ttl', 'allow-customer'],
};

/** Runs one admin command; answers the exit code (0 done, 1 failed, 2 refused). */
export async function runAdminCommand(argv: readonly string[], io: AdminIo): Promise<number> {
  try {
    const { values, positionals } = parse(argv);
    if (values.help) {
      io.stderr(USAGE);
      return 0;
    }
    const [command, ...extra] = positionals;
    if (command === undefined) throw new Refusal(`no command given\n${USAGE}`);
    const allowed = ALLOWED[command];
    if (allowed === undefined) throw new Refusal(`unknown command "${command}" (create, reset-password or token)`);
    if (extra.length > 0) throw new Refusal(`unexpected argument "${extra[0]}"`);
    for (const name of Object.keys(values)) {
      if (!allowed.includes(name as keyof typeof options)) throw new Refusal(`${command} takes no --${name}`);
    }
    const email = checkedEmail(values.email);
    if (command === 'create') return await create(io, { email, name: required(values.name, 'name'), fromStdin: values['password-stdin'] === true });
    if (command === 'reset-password') return await resetPassword(io, { email, fromStdin: values['password-stdin'] === true });
    return await token(io, { email, scopes: values.scopes, ttl: values.ttl, allowCustomer: values['allow-customer'] === true });
  } catch (error) {
    const { message, code } = describe(error);
    io.stderr(`admin: ${message}`);
    return code;
  }
}

function parse(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    // node:util's own messages name the option ("Unknown option '--emial'"); their advice about `--` does not apply.
    throw new Refusal((error instanceof Error ? error.message : String(error)).split('. ')[0] ?? 'invalid arguments');
  }
}

function required(value: string | undefined, name: string): string {
  if (value === undefined || value.trim() === '') throw new Refusal(`--${name} is required`);
  return value;
}

/** The users API's own email rule (users.schemas.ts), checked before the database is opened. */
function checkedEmail(value: string | undefined): string {
  const email = required(value, 'email');
  const parsed = Email.safeParse(email);
  if (!parsed.success) throw new Refusal(`--email ${parsed.error.issues[0]?.message ?? 'is not an email address'}`);
  return email;
}

/** A new password: read from stdin (its one line, the line end dropped), else generated (144 random bits). */
async function newPassword(io: AdminIo, fromStdin: boolean): Promise<{ password: string; generated: boolean }> {
  if (!fromStdin) return { password: randomBytes(18).toString('base64url'), generated: true };
  const text = (await io.readStdin()).replace(/\r?\n$/, '');
  if (text.includes('\n')) throw new Refusal('--password-stdin reads one line: standard input holds several');
  return { password: text, generated: false };
}

async function create(io: AdminIo, input: { email: string; name: string; fromStdin: boolean }): Promise<number> {
  const { password, generated } = await newPassword(io, input.fromStdin);
  return withDatabase(io, async (database) => {
    const users = createCaller(createContextInner({ db: database.db, caller: operator })).users;
    const user = await users.create({ email: input.email, name: input.name, password, role: 'admin' });
    io.stderr(`Created admin ${user.email} (user ${user.id})${generated ? '; its password, shown once, is on standard output.' : ' with the password read from standard input.'}`);
    if (generated) io.stdout(password);
    return 0;
  });
}

async function resetPassword(io: AdminIo, input: { email: string; fromStdin: boolean }): Promise<number> {
  const { password, generated } = await newPassword(io, input.fromStdin);
  return withDatabase(io, async (database) => {
    const found = await findUserByEmail({ db: database.db, email: input.email });
    if (!found) throw new Refusal(`no user has the email ${input.email}`);
    const users = createCaller(createContextInner({ db: database.db, caller: operator })).users;
    // A new password ends every sign-in of the user (their refresh tokens and pending codes), as through the API.
    const user = await users.patch({ id: found.id, format: 'merge-patch', document: { password } });
    io.stderr(
      `New password for ${user.role} ${user.email} (user ${user.id}); their sign-ins are ended` +
        `${generated ? '. The password, shown once, is on standard output.' : ', the password read from standard input.'}`,
    );
    if (generated) io.stdout(password);
    return 0;
  });
}

async function token(io: AdminIo, input: { email: string; scopes: string | undefined; ttl: string | undefined; allowCustomer: boolean }): Promise<number> {
  const ttl = input.ttl === undefined ? DEFAULT_TOKEN_TTL_SECONDS : Number(input.ttl);
  if (!(/^[1-9][0-9]*$/.test(input.ttl ?? '1') && Number.isSafeInteger(ttl) && ttl <= MAX_ACCESS_TOKEN_TTL_SECONDS)) {
    throw new Refusal(`--ttl must be whole seconds from 1 to ${MAX_ACCESS_TOKEN_TTL_SECONDS}`);
  }
  const asked = askedScopes(input.scopes);
  // The signing settings before the database: a configuration the service would refuse mints nothing.
  const config = loadConfig(io.env);
  const tokens = new TokenService({ ...config.jwt, jwks: undefined });
  return withDatabase(io, async (database) => {
    const user = await findUserByEmail({ db: database.db, email: input.email });
    if (!user) throw new Refusal(`no user has the email ${input.email}`);
    if (user.role !== 'admin' && !input.allowCustomer) {
      throw new Refusal(`${user.email} is a ${user.role}, not an admin: add --allow-customer to mint a customer's token`);
    }
    const scope = scopeFor(asked, user.role);
    const minted = await tokens.mint({ sub: String(user.id), role: user.role, name: user.name, scope }, ttl);
    io.stderr(`Access token for ${user.role} ${user.email} (user ${user.id}), ${ttl} s, scope: ${scope}`);
    io.stdout(minted);
    return 0;
  });
}

/** The scopes `--scopes` names (comma or space separated), each a scope of the service (docs/api.md#scopes). */
function askedScopes(asked: string | undefined): string[] | undefined {
  if (asked === undefined) return undefined;
  const names = [...new Set(asked.split(/[\s,]+/).filter(Boolean))];
  if (names.length === 0) throw new Refusal('--scopes names no scope');
  const unknown = names.find((name) => !isScope(name));
  if (unknown !== undefined) throw new Refusal(`--scopes: unknown scope "${unknown}"`);
  return names;
}

/** The token's `scope` claim: the scopes asked for, each one the role can use, else every scope the role can use. */
function scopeFor(asked: string[] | undefined, role: 'customer' | 'admin'): string {
  if (asked === undefined) return PERSON_SCOPES[role].join(' ');
  const unusable = asked.find((name) => scopeForPerson(name, role) === '');
  if (unusable !== undefined) throw new Refusal(`--scopes: a ${role} cannot use "${unusable}"`);
  return asked.join(' ');
}

/**
 * The configured database (DATABASE_URL, else PGlite under DATA_DIR, as `npm start`), as it is:
 * nothing is migrated, and a database without this version's migrations is refused.
 */
async function withDatabase(io: AdminIo, work: (database: Database) => Promise<number>): Promise<number> {
  const config = loadDatabaseConfig(io.env);
  if (config.databaseUrl === 'memory://') throw new Refusal('DATABASE_URL=memory:// keeps nothing between processes: name the service\'s database');
  // Opening an absent PGlite directory would create an empty database there.
  if (config.databaseUrl === undefined && !existsSync(join(config.dataDir, 'pgdata'))) {
    throw new Refusal(`no database in ${config.dataDir} (DATA_DIR): start the service once, or run npm run migrate, first`);
  }
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: 1,
    migrate: false,
    timeouts: { connectTimeoutMs: config.connectTimeoutMs },
  });
  try {
    return await work(database);
  } finally {
    await database.close();
  }
}

/** The one line and exit code of anything thrown. */
function describe(error: unknown): { message: string; code: number } {
  if (error instanceof Refusal) return { message: error.message, code: 2 };
  if (error instanceof ConfigError) return { message: `invalid configuration: ${error.problems.join('; ')}`, code: 2 };
  if (error instanceof MigrationsPendingError) {
    return { message: `the database lacks ${error.pending} of this version's migrations: run npm run migrate first (nothing was changed)`, code: 2 };
  }
  if (error instanceof DataDirectoryLockedError) return { message: error.message, code: 2 };
  let failure = error;
  if (error instanceof TRPCError || error instanceof DomainError) {
    // A procedure's refusal, as the API would answer it: the problem's detail and its field errors.
    const domain = toDomainError(error);
    if (domain.status < 500) {
      const fields = domain.errors?.map((e) => `${e.field}: ${e.message}`).join('; ');
      return { message: fields ? `${domain.message} (${fields})` : domain.message, code: 2 };
    }
    failure = domain.cause ?? error;
  }
  // The innermost cause says what happened (drizzle wraps a driver's error as "Failed query: ...").
  while (failure instanceof Error && failure.cause instanceof Error) failure = failure.cause;
  const message = failure instanceof Error ? failure.message : String(failure);
  return { message: `failed: ${message.split('\n')[0] ?? ''}`, code: 1 };
}
