import { sql, type SQLWrapper } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, json, jsonb, pgTable, primaryKey, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

/**
 * A resource's own key-value data (docs/api.md#metadata): at most 50 string values, checked by the
 * schemas. jsonb, so the order list's `metadata[key]=value` filter is a containment (`@>`) a GIN
 * index answers.
 */
const metadata = () => jsonb('metadata').$type<Record<string, string>>().notNull().default({});

const timestamps = {
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
};

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
 * What a product search (`q`, docs/api.md#product-search) reads: name, SKU and description in one
 * text, a line break between them (a search term has none, so it never spans two fields). The
 * list's condition and its trigram index are written with this same expression, as the planner
 * uses an expression index only for the expression it was built on.
 */
export const productSearchText = (t: { name: SQLWrapper; sku: SQLWrapper; description: SQLWrapper }) =>
  sql`(${t.name} || chr(10) || ${t.sku} || chr(10) || coalesce(${t.description}, ''))`;

export const products = pgTable(
  'products',
  {
    id: serial('id').primaryKey(),
    sku: text('sku').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    category: text('category').notNull(),
    price: integer('price').notNull(),
    currency: text('currency').notNull().default('USD'),
    stock: integer('stock').notNull().default(0),
    archivedAt: timestamp('archived_at', { withTimezone: true, precision: 3 }),
    metadata: metadata(),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('products_sku_key').on(t.sku),
    index('products_category_idx').on(t.category),
    // Filters (docs/api.md#product-search), over live products as the list reads them: a search
    // by pg_trgm (a case-insensitive substring is found by its trigrams: PostgreSQL's extension,
    // and PGlite's, loaded where it is created), a category or the out-of-stock few in id order.
    index('products_search_trgm_idx')
      .using('gin', sql`${productSearchText(t)} gin_trgm_ops`)
      .where(sql`${t.archivedAt} is null`),
    index('products_category_id_idx').on(t.category, t.id).where(sql`${t.archivedAt} is null`),
    index('products_out_of_stock_idx').on(t.id).where(sql`${t.archivedAt} is null and ${t.stock} = 0`),
    // The list's single-field sorts over live products (the list's own filter), each ending with id
    // ascending as the list does, so `-price` is `price desc, id asc`: an index per direction
    // (`desc` as ORDER BY means it, nulls first), which a page reads in order instead of sorting
    // the whole catalogue.
    ...(['name', 'price', 'createdAt'] as const).flatMap((field) => {
      const name = `products_${field === 'createdAt' ? 'created' : field}`;
      const live = sql`${t.archivedAt} is null`;
      return [index(`${name}_idx`).on(t[field], t.id).where(live), index(`${name}_desc_idx`).on(t[field].desc().nullsFirst(), t.id).where(live)];
    }),
    check('products_stock_nonnegative', sql`${t.stock} >= 0`),
    check('products_price_nonnegative', sql`${t.price} >= 0`),
  ],
);

/**
 * The statuses an order can have (docs/api.md#order-states; the moves between them are in
 * modules/orders/orders.rules.ts). Here, beside the column, so the column is typed with them; the
 * column stays text (no database enum), so the type adds no migration.
 */
export const ORDER_STATUSES = ['draft', 'confirmed', 'paid', 'shipped', 'delivered', 'completed', 'cancelled', 'refunded'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** The statuses of the `active` list filter; partial indexes below hold just these orders. */
export const ACTIVE_STATUSES: readonly OrderStatus[] = ['confirmed', 'paid', 'shipped', 'delivered'];

/**
 * `status in ('confirmed', ...)` with the statuses written out, not bound: PostgreSQL uses a
 * partial index only for a query whose condition it can prove implies the index's, which a
 * parameter (in a prepared statement's generic plan) never does. Closed set, no client input.
 */
export const isActiveOrder = (status: SQLWrapper) => sql`${status} in (${sql.raw(ACTIVE_STATUSES.map((s) => `'${s}'`).join(', '))})`;

export const orders = pgTable(
  'orders',
  {
    id: serial('id').primaryKey(),
    customerId: integer('customer_id')
      .notNull()
      .references(() => users.id),
    address: text('address'),
    status: text('status').$type<OrderStatus>().notNull().default('draft'),
    discountCode: text('discount_code'),
    currency: text('currency').notNull().default('USD'),
    /**
     * The sum of the lines (unit price x quantity), kept by the service whenever the lines are
     * written, so the list can sort by it from an index (the representation still sums the lines).
     */
    total: bigint('total', { mode: 'number' }).notNull().default(0),
    metadata: metadata(),
    ...timestamps,
  },
  // One index per list shape (everyone's or a customer's; any status, one status, or active), each
  // in the list's order (newest first, id breaking ties), so a page is an index range however
  // many orders there are, by cursor or by page 1 (issue 12; test/db/list-plans.test.ts).
  (t) => [
    index('orders_created_idx').on(t.createdAt, t.id),
    index('orders_status_created_idx').on(t.status, t.createdAt, t.id),
    index('orders_active_created_idx').on(t.createdAt, t.id).where(isActiveOrder(t.status)),
    index('orders_customer_created_idx').on(t.customerId, t.createdAt, t.id),
    index('orders_customer_status_created_idx').on(t.customerId, t.status, t.createdAt, t.id),
    index('orders_customer_active_created_idx').on(t.customerId, t.createdAt, t.id).where(isActiveOrder(t.status)),
    // The other sorts (issue 25), everyone's and a customer's, each read in either direction.
    index('orders_updated_idx').on(t.updatedAt, t.id),
    index('orders_customer_updated_idx').on(t.customerId, t.updatedAt, t.id),
    index('orders_total_idx').on(t.total, t.id),
    index('orders_customer_total_idx').on(t.customerId, t.total, t.id),
    // `metadata @> '{"key": "value"}'`: the list's metadata filter (jsonb_path_ops: containment only, smaller).
    index('orders_metadata_idx').using('gin', t.metadata.op('jsonb_path_ops')),
  ],
);

export const orderItems = pgTable(
  'order_items',
  {
    id: serial('id').primaryKey(),
    orderId: integer('order_id')
      .notNull()
      .references(() => orders.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    productId: integer('product_id')
      .notNull()
      .references(() => products.id),
    quantity: integer('quantity').notNull(),
    unitPrice: integer('unit_price').notNull(),
  },
  (t) => [index('order_items_order_idx').on(t.orderId)],
);

export const PAYMENT_METHODS = ['card', 'bank_transfer', 'wallet'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

export const payments = pgTable(
  'payments',
  {
    id: serial('id').primaryKey(),
    orderId: integer('order_id')
      .notNull()
      .references(() => orders.id),
    // An order total can reach 100 lines x 10,000 units x 1,000,000,000 minor units: beyond integer.
    amount: bigint('amount', { mode: 'number' }).notNull(),
    currency: text('currency').notNull(),
    method: text('method').$type<PaymentMethod>().notNull(),
    status: text('status').$type<'captured'>().notNull().default('captured'),
    /** The sum of the payment's refunds, kept beside `amount` so the check below can bound it. */
    amountRefunded: bigint('amount_refunded', { mode: 'number' }).notNull().default(0),
    metadata: metadata(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    /** Its last refund (its creation until then): the payment's Last-Modified. */
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    index('payments_order_idx').on(t.orderId),
    // GET /payments, newest first (created_at, id descending): read backwards, page by page.
    index('payments_created_idx').on(t.createdAt, t.id),
    // Money is exactly-once: the database itself refuses a second captured payment of an order.
    uniqueIndex('payments_one_captured_per_order').on(t.orderId).where(sql`${t.status} = 'captured'`),
    // Never more refunded than was paid, whatever writes race (docs/api.md#refunds).
    check('payments_refunded_within_amount', sql`${t.amountRefunded} >= 0 and ${t.amountRefunded} <= ${t.amount}`),
  ],
);

/** Why money went back (docs/api.md#refunds); a refund may give none. */
export const REFUND_REASONS = ['requested_by_customer', 'duplicate', 'fraudulent', 'other'] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];

/**
 * Refunds of a payment, partial or full; their sum is the payment's `amount_refunded`, which is
 * written in the same transaction. Refunds never change and are never deleted.
 */
export const refunds = pgTable(
  'refunds',
  {
    id: serial('id').primaryKey(),
    paymentId: integer('payment_id')
      .notNull()
      .references(() => payments.id),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    currency: text('currency').notNull(),
    reason: text('reason').$type<RefundReason>(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    // A payment's refunds, newest first (its list).
    index('refunds_payment_created_idx').on(t.paymentId, t.createdAt, t.id),
    check('refunds_amount_positive', sql`${t.amount} > 0`),
  ],
);

export const FULFILLMENT_STATUSES = ['requested', 'shipped'] as const;
export type FulfillmentStatus = (typeof FULFILLMENT_STATUSES)[number];

export const fulfillments = pgTable(
  'fulfillments',
  {
    id: serial('id').primaryKey(),
    orderId: integer('order_id')
      .notNull()
      .references(() => orders.id, { onDelete: 'cascade' }),
    status: text('status').$type<FulfillmentStatus>().notNull(),
    carrier: text('carrier'),
    trackingNumber: text('tracking_number'),
    ...timestamps,
  },
  (t) => [
    index('fulfillments_order_idx').on(t.orderId),
    // At most one open (requested) fulfillment per order, whatever races.
    uniqueIndex('fulfillments_one_open_per_order').on(t.orderId).where(sql`${t.status} = 'requested'`),
  ],
);

/**
 * Events (docs/api.md#events): one row per change, written in the change's own transaction
 * (server/events/outbox.ts), so a change and its event commit or roll back together. `seq` is the
 * order rows were written in (a transaction's events share its `created_at`); it breaks ties in
 * the lists and is the position a delivery worker can claim from. `data` is `json`, not `jsonb`:
 * stored as written, so `data.object` keeps the key order of the resource's GET answer, and a
 * write does not pay for jsonb's conversion. `order_id` has no foreign key: an order's events
 * outlive a deleted order until the purge removes them (`EVENT_RETENTION_DAYS`).
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
 * Webhook endpoints (docs/webhooks.md): where events are delivered. The secret signs every
 * delivery, so it is kept as written (a hash could not sign); it is shown only when made. After a
 * rotation the previous secret signs too until `previous_secret_expires_at` (24 hours).
 * `enabled_events` holds types, `<resource>.*` prefixes or `*`: the fan-out trigger of
 * migration `webhook_fan_out` matches an event against them with one array overlap.
 */
export const webhookEndpoints = pgTable('webhook_endpoints', {
  id: serial('id').primaryKey(),
  url: text('url').notNull(),
  description: text('description'),
  enabledEvents: text('enabled_events').array().notNull(),
  secret: text('secret').notNull(),
  previousSecret: text('previous_secret'),
  previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true, precision: 3 }),
  disabled: boolean('disabled').notNull().default(false),
  /** Why it is disabled (`requested`, or `gone` after a 410); null while enabled. */
  disabledReason: text('disabled_reason', { enum: ['requested', 'gone'] }),
  ...timestamps,
});

export const WEBHOOK_DELIVERY_STATES = ['pending', 'succeeded', 'failed'] as const;
export type WebhookDeliveryState = (typeof WEBHOOK_DELIVERY_STATES)[number];

/**
 * One event to one endpoint (docs/webhooks.md#delivery): made by the trigger on `events` in the
 * event's own transaction, for every enabled endpoint whose `enabled_events` match, so no event is
 * ever missed and none is fanned out twice. A worker claims a due delivery by setting
 * `locked_until` (a lease): a process killed mid-delivery leaves it due again once the lease ends.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: serial('id').primaryKey(),
    endpointId: integer('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    // Purged after its event's retention once it has ended (server/modules/events/events.service.ts#purgeOldEvents), then its event.
    eventId: text('event_id')
      .notNull()
      .references(() => events.id, { onDelete: 'cascade' }),
    eventType: text('event_type').notNull(),
    state: text('state', { enum: WEBHOOK_DELIVERY_STATES }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /** When it is due (pending), null once it succeeded or failed for good. */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }).defaultNow(),
    /** A worker holds it until then; past it, it is due again. */
    lockedUntil: timestamp('locked_until', { withTimezone: true, precision: 3 }),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true, precision: 3 }),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    // The worker's claim: an endpoint's due deliveries, oldest due first.
    index('webhook_deliveries_due_idx').on(t.endpointId, t.nextAttemptAt).where(sql`${t.state} = 'pending'`),
    // An endpoint's list, newest first.
    index('webhook_deliveries_endpoint_created_idx').on(t.endpointId, t.createdAt, t.id),
    // The events' purge (its ended deliveries of old events).
    index('webhook_deliveries_event_idx').on(t.eventId),
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
