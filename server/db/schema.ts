/**
 * The tables below the modules: those no module owns (the events outbox, idempotency keys, the
 * OAuth tables, sign-in failures) and the users, which the OAuth tables reference. A module keeps
 * its own tables in its folder, `server/modules/<name>/<name>.table.ts` (drizzle.config.ts reads
 * both; docs/architecture.md#adding-a-module).
 */
import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, json, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, serial } from 'drizzle-orm/pg-core';
import { metadata, timestamps } from './columns.ts';
export const users = pgTable(
  'users',
  {
    id: serial('id').primaryKey(),
    email: text('email').notNull(),
    name: text('name').notNull(),
    role: text('role', { enum: ['customer', 'admin'] }).notNull(),
    passwordHash: text('password_hash').notNull(),
    metadata: metadata(),
    ...timestamps,
  },
  (t) => [uniqueIndex('users_email_lower_key').on(sql`lower(${t.email})`)],
);

/**
 * Events (docs/api.md#events): one row per change, written in the change's own transaction
 * (server/events/outbox.ts), so a change and its event commit or roll back together. `seq` is the
 * order rows were written in (a transaction's events share its `created_at`); it breaks ties in
 * the lists and is the position a delivery worker can claim from. `data` is `json`, not `jsonb`:
 * stored as written, so `data.object` keeps the key order of the resource's GET answer, and a
 * write does not pay for jsonb's conversion. `order_id` has no foreign key: an order's events
 * outlive a deleted order until the events module's purge removes them (modules/events/events.module.ts).
 */
export const events = pgTable(
  'events',
  {
    id: text('id').primaryKey(),
    seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity().notNull(),
    type: text('type').notNull(),
    /** The order an event concerns (its own, a payment's or a fulfillment's); null for products and users. */
    orderId: integer('order_id'),
    apiVersion: text('api_version').notNull().default('v1'),
    data: json('data').$type<{ object: Record<string, unknown>; previous_attributes?: Record<string, unknown> }>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  // Each list shape in its order (newest first, seq breaking ties): all events (also the purge's
  // range), by type, one order's timeline.
  (t) => [
    index('events_created_idx').on(t.createdAt, t.seq),
    index('events_type_created_idx').on(t.type, t.createdAt, t.seq),
    index('events_order_created_idx').on(t.orderId, t.createdAt, t.seq).where(sql`${t.orderId} is not null`),
  ],
);

/**
 * Idempotency keys (docs/api.md#idempotency): one row per (caller scope, key), written in the same
 * transaction as the operation it guards, so a crash leaves both or neither. A concurrent request
 * with the same key waits on this row's lock until the first commits (then replays) or rolls back
 * (then runs itself).
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    /** Whose key: the caller's `sub`, or the client address for anonymous calls. */
    scope: text('scope').notNull(),
    key: text('key').notNull(),
    /** The procedure it was used with (`payments.create`). */
    operation: text('operation').notNull(),
    /** Hash of the canonical input; another input with the same key is 422. */
    fingerprint: text('fingerprint').notNull(),
    responseStatus: integer('response_status').notNull(),
    responseBody: text('response_body').notNull(),
    /** The headers that matter for a replay (`Location`, `ETag`). */
    responseHeaders: jsonb('response_headers').$type<Record<string, string>>().notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.key] }), index('idempotency_keys_expires_idx').on(t.expiresAt)],
);

// --- Identity: the OAuth 2.0 authorization server (docs/signing-in.md) ---

export const GRANT_TYPES = ['authorization_code', 'refresh_token', 'client_credentials', 'password'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];

const instant = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });

/** Registered OAuth clients. The secret of a confidential client is kept only as a hash. */
export const oauthClients = pgTable('oauth_clients', {
  /** The public `client_id`: random, never reused. */
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** Hash of the client secret (confidential clients only). */
  secretHash: text('secret_hash'),
  /** Exact strings; `/oauth/authorize` redirects only to one of these. */
  redirectUris: text('redirect_uris').array().notNull().default(sql`'{}'::text[]`),
  grantTypes: text('grant_types').array().$type<GrantType[]>().notNull(),
  scopes: text('scopes').array().notNull(),
  /** Our own applications: only they may use the password grant. */
  firstParty: boolean('first_party').notNull().default(false),
  confidential: boolean('confidential').notNull().default(false),
  ...timestamps,
});

/**
 * Authorization codes (RFC 6749 section 4.1, RFC 7636): single-use, 60 s, kept as a hash, bound
 * to the client, redirect URI, user and PKCE challenge. `familyId` names the refresh-token family
 * the code was exchanged for, so presenting a used code again revokes what it issued.
 */
export const oauthAuthorizationCodes = pgTable(
  'oauth_authorization_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    clientId: text('client_id')
      .notNull()
      .references(() => oauthClients.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    redirectUri: text('redirect_uri').notNull(),
    codeChallenge: text('code_challenge').notNull(),
    scope: text('scope').notNull(),
    expiresAt: instant('expires_at').notNull(),
    usedAt: instant('used_at'),
    familyId: text('family_id'),
    createdAt: instant('created_at').notNull().defaultNow(),
  },
  (t) => [index('oauth_codes_expires_idx').on(t.expiresAt)],
);

/**
 * Refresh tokens (RFC 6749 section 6, RFC 9700 section 4.14): opaque, kept as a hash, 30 days,
 * rotated on every use. Every token descends from one grant: its `familyId`. A token presented
 * after it was used (`usedAt`) revokes the whole family.
 */
export const oauthRefreshTokens = pgTable(
  'oauth_refresh_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    familyId: text('family_id').notNull(),
    clientId: text('client_id')
      .notNull()
      .references(() => oauthClients.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    scope: text('scope').notNull(),
    expiresAt: instant('expires_at').notNull(),
    usedAt: instant('used_at'),
    revokedAt: instant('revoked_at'),
    createdAt: instant('created_at').notNull().defaultNow(),
  },
  (t) => [
    index('oauth_refresh_family_idx').on(t.familyId),
    index('oauth_refresh_user_idx').on(t.userId),
    index('oauth_refresh_client_idx').on(t.clientId),
    index('oauth_refresh_expires_idx').on(t.expiresAt),
  ],
);

/**
 * Failed sign-ins per account (keyed by a hash of the normalized email, whether or not such a
 * user exists, so the table tells nothing): the basis of the sign-in backoff.
 */
export const signInFailures = pgTable('sign_in_failures', {
  accountKey: text('account_key').primaryKey(),
  /** Failures in a row, counting the attempts still being checked. */
  failures: integer('failures').notNull().default(0),
  /** Attempts counted whose password is still being checked (server/oauth/sign-in.ts). */
  checking: integer('checking').notNull().default(0),
  lastFailureAt: instant('last_failure_at').notNull().defaultNow(),
  blockedUntil: instant('blocked_until'),
});
