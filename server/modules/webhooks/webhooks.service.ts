/**
 * Webhook endpoints and their deliveries (docs/webhooks.md): where events are sent, the secret
 * that signs them (shown only when made or rotated), and the attempts made. The deliveries are
 * made by the fan-out trigger on `events`, in each event's own transaction, and sent by the
 * worker (webhooks.worker.ts); here they are listed and retried by hand.
 */
import { randomBytes } from 'node:crypto';
import { and, count, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { transaction, type UnitOfWork } from '../../db/unit-of-work.ts';
import { webhookDeliveries, webhookEndpoints } from './webhooks.table.ts';
import { DomainError } from '../../errors/problems.ts';
import { eventTypes, resourceOf } from '../../events/catalogue.ts';
import { addressProblem, urlProblem, type WebhookEndpointSettings } from './webhooks.targets.ts';
import { iso, type Page } from '../common.schemas.ts';
import { listPage, newestFirst, type CursorCodec } from '../paging.ts';
import type {
  WebhookDelivery,
  WebhookDeliveryListQuery,
  WebhookDeliveryParams,
  WebhookEndpoint,
  WebhookEndpointInput,
  WebhookEndpointListQuery,
  WebhookEndpointPatch,
  WebhookEndpointWithSecret,
} from './webhooks.schemas.ts';
import { wakeWorkers } from './webhooks.signal.ts';

/** After a rotation the previous secret signs too, this long (docs/webhooks.md#rotating-the-secret). */
export const PREVIOUS_SECRET_HOURS = 24;

/** `whsec_` and the base64 of 32 random bytes: what the Standard Webhooks libraries take. */
const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

const endpointColumns = {
  id: webhookEndpoints.id,
  url: webhookEndpoints.url,
  description: webhookEndpoints.description,
  enabledEvents: webhookEndpoints.enabledEvents,
  disabled: webhookEndpoints.disabled,
  disabledReason: webhookEndpoints.disabledReason,
  createdAt: webhookEndpoints.createdAt,
  updatedAt: webhookEndpoints.updatedAt,
};
type EndpointRow = Pick<typeof webhookEndpoints.$inferSelect, keyof typeof endpointColumns>;

const secretColumns = { ...endpointColumns, secret: webhookEndpoints.secret, previousSecretExpiresAt: webhookEndpoints.previousSecretExpiresAt };
type SecretRow = Pick<typeof webhookEndpoints.$inferSelect, keyof typeof secretColumns>;

const toEndpoint = (row: EndpointRow): WebhookEndpoint => ({
  id: row.id,
  url: row.url,
  description: row.description,
  enabled_events: row.enabledEvents,
  disabled: row.disabled,
  disabled_reason: row.disabledReason,
  created_at: iso(row.createdAt),
  updated_at: iso(row.updatedAt),
});

const toEndpointWithSecret = (row: SecretRow): WebhookEndpointWithSecret => ({
  ...toEndpoint(row),
  secret: row.secret,
  previous_secret_expires_at: row.previousSecretExpiresAt === null ? null : iso(row.previousSecretExpiresAt),
});

const notFound = (id: number) => new DomainError('not-found', `Webhook endpoint ${id} does not exist.`);

const invalid = (field: string, message: string) => new DomainError('validation-error', `The webhook endpoint's ${field} is not accepted: ${message}.`, { errors: [{ field, message }] });

/** The URL rules (docs/webhooks.md#endpoint-urls), resolving the host in production: 422 naming `url`. */
async function checkUrl(url: string, settings: WebhookEndpointSettings): Promise<void> {
  const problem = urlProblem(url, settings) ?? (await addressProblem(url, settings));
  if (problem !== undefined) throw invalid('url', problem);
}

/**
 * `enabled_events` as stored: each item a declared type, a `<resource>.*` prefix of a resource
 * that has types, or `*` alone; duplicates dropped, order kept. Anything else is 422.
 */
export function enabledEventsOf(items: readonly string[]): string[] {
  const known = [...eventTypes().keys()];
  if (items.includes('*')) {
    if (items.some((item) => item !== '*')) throw invalid('enabled_events', '"*" (every type) must be the only item');
    return ['*'];
  }
  for (const [index, item] of items.entries()) {
    const matches = item.endsWith('.*') ? known.some((type) => resourceOf(type) === item.slice(0, -2)) : known.some((type) => type === item);
    if (!matches) {
      throw new DomainError('validation-error', `Unknown event type "${item}".`, {
        errors: [{ field: `enabled_events.${index}`, message: `must be an event type (GET /api/v1/events lists them), a prefix such as order.*, or *; "${item}" is none` }],
      });
    }
  }
  return [...new Set(items)];
}

/** Where a URL's host resolved to, and what is wrong with it (undefined: nothing). */
export interface ResolvedUrl {
  url: string;
  problem: string | undefined;
}

/**
 * The creation's `meta.prepare` (server/trpc/meta.ts): resolves the URL's host before an
 * Idempotency-Key's transaction begins, so neither a connection nor the key's lock is held while
 * DNS answers. A URL refused without DNS is left to the procedure.
 */
export async function resolveEndpointUrl(url: string, settings: WebhookEndpointSettings): Promise<ResolvedUrl | undefined> {
  if (urlProblem(url, settings) !== undefined) return undefined;
  return { url, problem: await addressProblem(url, settings) };
}

const isResolvedUrl = (value: unknown): value is ResolvedUrl => typeof value === 'object' && value !== null && typeof (value as { url?: unknown }).url === 'string';

/**
 * Creates an endpoint. Its URL is checked before the transaction (no lock is held while DNS
 * answers), with `resolved` when `resolveEndpointUrl` already resolved this very URL.
 */
export async function createEndpoint({
  db,
  work,
  settings,
  input,
  resolved,
}: {
  db: Db;
  work?: UnitOfWork;
  settings: WebhookEndpointSettings;
  input: WebhookEndpointInput;
  resolved?: unknown;
}): Promise<WebhookEndpointWithSecret> {
  const enabledEvents = enabledEventsOf(input.enabled_events);
  if (isResolvedUrl(resolved) && resolved.url === input.url) {
    const problem = urlProblem(input.url, settings) ?? resolved.problem;
    if (problem !== undefined) throw invalid('url', problem);
  } else {
    await checkUrl(input.url, settings);
  }
  return transaction(work ?? db, async (tx) => {
    // Creations wait for each other here (reads and deliveries do not), so two at once cannot both pass the count.
    await tx.execute(sql`lock table ${webhookEndpoints} in share row exclusive mode`);
    const [existing] = await tx.select({ n: count() }).from(webhookEndpoints);
    if ((existing?.n ?? 0) >= settings.maxEndpoints) {
      throw new DomainError('conflict', `This service already has ${settings.maxEndpoints} webhook endpoints, the most it keeps (WEBHOOK_MAX_ENDPOINTS); delete one, or have one endpoint take more event types.`);
    }
    const [row] = await tx
      .insert(webhookEndpoints)
      .values({ url: input.url, description: input.description ?? null, enabledEvents, secret: newSecret() })
      .returning(secretColumns);
    if (!row) throw new Error('webhook endpoint insert returned no row');
    return toEndpointWithSecret(row);
  });
}

export async function getEndpoint({ db, id }: { db: Db; id: number }): Promise<WebhookEndpoint> {
  const [row] = await db.select(endpointColumns).from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
  if (!row) throw notFound(id);
  return toEndpoint(row);
}

/** Newest first, like the other lists. */
const endpointOrder = newestFirst<EndpointRow>(webhookEndpoints.createdAt, webhookEndpoints.id, 'integer', (row) => row.id);

export async function listEndpoints({ db, query, cursors }: { db: Db; query: WebhookEndpointListQuery; cursors: CursorCodec }): Promise<Page<WebhookEndpoint>> {
  const binding = JSON.stringify(['webhook-endpoints']);
  return listPage({ cursors, binding, terms: endpointOrder, query }, (page) => page.rowsOf(db.select(endpointColumns).from(webhookEndpoints).$dynamic()), toEndpoint);
}

export async function patchEndpoint({ db, settings, input }: { db: Db; settings: WebhookEndpointSettings; input: WebhookEndpointPatch }): Promise<WebhookEndpoint> {
  const enabledEvents = input.enabled_events === undefined ? undefined : enabledEventsOf(input.enabled_events);
  if (input.url !== undefined) await checkUrl(input.url, settings);
  const [row] = await db
    .update(webhookEndpoints)
    .set({
      ...(input.url === undefined ? {} : { url: input.url }),
      ...(enabledEvents === undefined ? {} : { enabledEvents }),
      ...(input.description === undefined ? {} : { description: input.description }),
      ...(input.disabled === undefined ? {} : { disabled: input.disabled, disabledReason: input.disabled ? 'requested' : null }),
      updatedAt: sql`now()`,
    })
    .where(eq(webhookEndpoints.id, input.id))
    .returning(endpointColumns);
  if (!row) throw notFound(input.id);
  // Enabled again: its waiting deliveries are due now.
  if (input.disabled === false) wakeWorkers();
  return toEndpoint(row);
}

/** Deleting an endpoint deletes its deliveries (the foreign key cascades); one in flight is let finish. */
export async function deleteEndpoint({ db, id }: { db: Db; id: number }): Promise<void> {
  const deleted = await db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id)).returning({ id: webhookEndpoints.id });
  if (deleted.length === 0) throw notFound(id);
}

/**
 * A new secret; the one it replaces keeps signing for PREVIOUS_SECRET_HOURS, so receivers can
 * switch without losing a delivery. A second rotation within those hours is 409: it would drop
 * the secret a receiver may still be on (only two sign at once), breaking every delivery to it.
 */
export async function rotateSecret({ db, work, id }: { db: Db; work?: UnitOfWork; id: number }): Promise<WebhookEndpointWithSecret> {
  const rotatable = sql`(${webhookEndpoints.previousSecretExpiresAt} is null or ${webhookEndpoints.previousSecretExpiresAt} <= now())`;
  return transaction(work ?? db, async (tx) => {
    const [row] = await tx
      .update(webhookEndpoints)
      .set({
        previousSecret: sql`${webhookEndpoints.secret}`,
        previousSecretExpiresAt: sql`now() + make_interval(hours => ${PREVIOUS_SECRET_HOURS})`,
        secret: newSecret(),
        updatedAt: sql`now()`,
      })
      .where(and(eq(webhookEndpoints.id, id), rotatable))
      .returning(secretColumns);
    if (row) return toEndpointWithSecret(row);
    const [existing] = await tx.select({ until: webhookEndpoints.previousSecretExpiresAt }).from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
    if (!existing) throw notFound(id);
    throw new DomainError(
      'conflict',
      `Webhook endpoint ${id}'s secret was rotated less than ${PREVIOUS_SECRET_HOURS} hours ago; its previous secret signs until ${existing.until ? iso(existing.until) : 'soon'}. Rotate again after that (or delete the endpoint and add a new one).`,
    );
  });
}

const deliveryColumns = {
  id: webhookDeliveries.id,
  endpointId: webhookDeliveries.endpointId,
  eventId: webhookDeliveries.eventId,
  eventType: webhookDeliveries.eventType,
  state: webhookDeliveries.state,
  attempts: webhookDeliveries.attempts,
  lastStatus: webhookDeliveries.lastStatus,
  lastError: webhookDeliveries.lastError,
  lastAttemptAt: webhookDeliveries.lastAttemptAt,
  nextAttemptAt: webhookDeliveries.nextAttemptAt,
  createdAt: webhookDeliveries.createdAt,
};
type DeliveryRow = Pick<typeof webhookDeliveries.$inferSelect, keyof typeof deliveryColumns>;

const toDelivery = (row: DeliveryRow): WebhookDelivery => ({
  id: row.id,
  endpoint_id: row.endpointId,
  event_id: row.eventId,
  event_type: row.eventType,
  state: row.state,
  attempts: row.attempts,
  last_status: row.lastStatus,
  last_error: row.lastError,
  last_attempt_at: row.lastAttemptAt === null ? null : iso(row.lastAttemptAt),
  next_attempt_at: row.state === 'pending' && row.nextAttemptAt !== null ? iso(row.nextAttemptAt) : null,
  created_at: iso(row.createdAt),
});

const deliveryOrder = newestFirst<DeliveryRow>(webhookDeliveries.createdAt, webhookDeliveries.id, 'integer', (row) => row.id);

export async function listDeliveries({ db, query, cursors }: { db: Db; query: WebhookDeliveryListQuery; cursors: CursorCodec }): Promise<Page<WebhookDelivery>> {
  await getEndpoint({ db, id: query.id });
  const binding = JSON.stringify(['webhook-deliveries', query.id]);
  return listPage(
    { cursors, binding, terms: deliveryOrder, query },
    (page) => page.rowsOf(db.select(deliveryColumns).from(webhookDeliveries).$dynamic(), eq(webhookDeliveries.endpointId, query.id)),
    toDelivery,
  );
}

/**
 * Sends a delivery again now, whatever its state (a succeeded one too: the receiver asked). One
 * being sent right now (its lease running) is left to finish. A disabled endpoint sends nothing:
 * 409 until it is enabled.
 */
export async function retryDelivery({ db, work, params }: { db: Db; work?: UnitOfWork; params: WebhookDeliveryParams }): Promise<WebhookDelivery> {
  const delivery = await transaction(work ?? db, async (tx) => {
    const endpoint = await getEndpoint({ db: tx, id: params.id });
    if (endpoint.disabled) throw new DomainError('conflict', `Webhook endpoint ${params.id} is disabled; enable it (PATCH disabled: false) to send it anything.`);
    const inFlight = sql`${webhookDeliveries.state} = 'pending' and ${webhookDeliveries.lockedUntil} > now()`;
    const [row] = await tx
      .update(webhookDeliveries)
      .set({
        state: 'pending',
        nextAttemptAt: sql`case when ${inFlight} then ${webhookDeliveries.nextAttemptAt} else now() end`,
      })
      .where(and(eq(webhookDeliveries.endpointId, params.id), eq(webhookDeliveries.id, params.deliveryId)))
      .returning(deliveryColumns);
    if (!row) throw new DomainError('not-found', `Webhook endpoint ${params.id} has no delivery ${params.deliveryId}.`);
    return toDelivery(row);
  });
  wakeWorkers();
  return delivery;
}
