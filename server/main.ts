import { createHmac } from 'node:crypto';
import { TokenService } from './auth/tokens.ts';
import { buildApp } from './app.ts';
import { bootstrapAdmin, bootstrapClients, passwordGrantCommand } from './bootstrap.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { pino } from 'pino';
import { DataDirectoryLockedError, MigrationsPendingError, openDatabase } from './db/client.ts';
import { migrationLockWaitMessage } from './db/migration-lock.ts';
import { listenFailure, shutDown } from './http/lifecycle.ts';

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}

const config = readConfig();
// The app's logger exists only once the database is open: until then a log of the same format and
// level, for a start that waits for the migration lock (docs/operations.md#migrations).
const startLog = pino({ level: config.logLevel });
const database = await openDatabase({
  url: config.databaseUrl,
  dataDir: config.dataDir,
  poolSize: config.databasePoolSize,
  timeouts: config.databaseTimeouts,
  migrate: config.migrateOnStart,
  onMigrationLockWait: (wait) => startLog.warn({ holderPid: wait.holderPid, waitedMs: Math.round(wait.waitedMs) }, migrationLockWaitMessage(wait)),
}).catch(
  (error: unknown) => {
    // Another process on this PGlite directory, or a database not migrated yet while start must
    // not migrate it: say so plainly and stop, no stack trace.
    if (error instanceof DataDirectoryLockedError || error instanceof MigrationsPendingError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  },
);
const tokens = new TokenService({ ...config.jwt, jwks: config.jwks });
const app = await buildApp({
  database,
  tokens,
  bodyLimit: config.bodyLimit,
  http: config.httpTimeouts,
  trustProxy: config.trustProxy,
  ...(config.tls ? { tls: config.tls } : {}),
  corsOrigins: config.corsOrigins,
  idempotency: {
    ttlHours: config.idempotencyTtlHours,
    // Shared by every instance (they share JWT_SECRET), and not the signing key itself.
    fingerprintKey: createHmac('sha256', config.jwt.secret).update('idempotency-fingerprint').digest('base64url'),
  },
  // Cursors: every instance agrees; the codec keys its HMAC with a label, not the secret itself.
  cursorSecret: config.jwt.secret,
  // Every module's settings, as read from the environment (server/modules/module.ts).
  settings: config.settings,
  metrics: config.metrics,
  rateLimit: { max: config.rateLimit.max, timeWindow: config.rateLimit.window, redisUrl: config.redisUrl },
  oauth: {
    issuer: config.publicUrl,
    refreshTokenTtlDays: config.oauth.refreshTokenTtlDays,
    rateLimit: { max: config.oauth.rateLimitMax, timeWindow: '1 minute' },
    signUpEnabled: config.oauth.signUpEnabled,
    // CSRF tokens and sign-in account keys: every instance agrees, and it is not the signing key itself.
    secretKey: createHmac('sha256', config.jwt.secret).update('oauth').digest('base64url'),
  },
  logger: {
    level: config.logLevel,
    redact: ['req.headers.authorization', 'req.headers.cookie'],
  },
});
// SIGTERM/SIGINT: the graceful stop (server/http/lifecycle.ts), set up before the start, so a signal
// during it stops the process gracefully too instead of killing it.
let startDone: () => void = () => {};
const started = new Promise<void>((resolve) => (startDone = resolve));
let stopping = false;
async function stop(signal: NodeJS.Signals): Promise<void> {
  if (stopping) return;
  stopping = true;
  app.lifecycle.startDraining();
  app.log.info({ signal, delayMs: config.shutdown.delayMs }, 'shutting down: readiness answers 503, then the drain');
  // Closing under a listen() or a bootstrap write would fail them: a stop during the start waits.
  await started;
  // The last resort, for a close that hangs in our own code: the drain itself is bounded.
  const force = setTimeout(() => {
    app.log.error('shutdown did not finish in time; exiting');
    process.exit(1);
  }, config.shutdown.delayMs + config.shutdown.timeoutMs + 10_000);
  force.unref();
  const { cut } = await shutDown(app, { delayMs: config.shutdown.delayMs, drainTimeoutMs: config.shutdown.timeoutMs });
  if (cut > 0) app.log.warn({ cut }, 'the drain timed out: connections with a request in flight were cut');
  app.log.info('stopped');
  process.exit(0);
}
process.on('SIGTERM', (signal) => void stop(signal));
process.on('SIGINT', (signal) => void stop(signal));

const bootstrap = await bootstrapAdmin(database.db, config);
try {
  await app.listen({ host: config.host, port: config.port });
} catch (error) {
  // A taken port (an instance still draining after a restart) is said in one line, not a stack
  // (docs/operations.md#health-readiness-and-stopping); the database closes before the exit.
  const message = listenFailure(error, { port: config.port, metricsPort: config.metrics.port });
  if (message === undefined) throw error;
  console.error(message);
  await app.close().catch(() => undefined);
  process.exit(1);
}

const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : config.port;
const base = config.publicUrl ?? `${config.tls ? 'https' : 'http'}://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
// The docs page's client redirects under this base, so it is made sure of only now.
const clients = await bootstrapClients(database.db, config, base);
if (config.env === 'development') {
  const lines = [
    '',
    `order-service ${database.kind === 'pglite' ? `(embedded PGlite${config.databaseUrl === 'memory://' ? ', in memory' : ` in ${config.dataDir}`})` : '(PostgreSQL)'}`,
    `  API:   ${base}/api/v1`,
    `  Docs:  ${base}/api/docs`,
    `  tRPC:  ${base}/trpc`,
  ];
  if (bootstrap.admin) {
    const token = await tokens.mint({ sub: String(bootstrap.admin.id), role: 'admin', name: bootstrap.admin.name }, 3600);
    lines.push(`  Admin: ${bootstrap.admin.email}${bootstrap.generatedPassword ? ` / password ${bootstrap.generatedPassword} (shown once)` : ''}`);
    lines.push(`  Admin access token (1 hour; restart for a new one):`, `    export TOKEN=${token}`);
  }
  if (clients.dev) {
    const password = bootstrap.generatedPassword;
    lines.push(
      `  OAuth client (first-party, public; password, authorization_code + PKCE, refresh_token): ${clients.dev.client_id}`,
      `  Sign in with the password grant${password === undefined ? ` (set PASSWORD${bootstrap.admin ? '' : ' and EMAIL'} first)` : ''}:`,
      `    ${passwordGrantCommand({ baseUrl: base, ...(bootstrap.admin ? { username: bootstrap.admin.email } : {}), ...(password === undefined ? {} : { password }) })}`,
    );
  }
  lines.push('');
  console.log(lines.join('\n'));
}
// Readiness answers 200 from now on (unless a stop began meanwhile).
app.lifecycle.serving();
startDone();
