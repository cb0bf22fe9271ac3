/**
 * What the files of test/operations/ build their calls from: the test app and the set-ups their
 * operations share (a product, an order in a status, a paid payment, a webhook delivery, an OAuth
 * client...). Each test file that collects those files builds one context around its own app, so
 * every request a module's entries prepare lands on the app that sends it.
 */
import { expect } from 'vitest';
import { API_PREFIX } from '../../server/lib/api-paths.ts';
import type { TestApp, TestUser } from './app.ts';
import { shipOrder, type FulfillmentBody } from './fulfillments.ts';
import { insertClient } from './oauth.ts';
import { advanceOrder, createOrder as createOrderAs, createOrderScene, draftOrder, orderAction, type OrderBody, type OrderInputBody, type OrderScene } from './orders.ts';
import { payOrder, type PaymentBody } from './payments.ts';
import { createProduct as createProductAs, type ProductBody } from './products.ts';
import { WEBHOOK_ENDPOINTS } from './webhooks.ts';

/** An id no resource has. */
export const UNKNOWN_ID = 999_999;

/** A GET representation: a resource's members, its `id` among them. */
export interface Representation extends Record<string, unknown> {
  id: number;
}

/** Who sends a keyed request in test/api/idempotency.test.ts: a token, or nobody (anonymous) from an address. */
export interface Actor {
  token?: string;
  remoteAddress?: string;
}

/** A GET representation as a PUT body: `id` travels in the path. */
function withoutId(representation: Representation): Record<string, unknown> {
  return Object.fromEntries(Object.entries(representation).filter(([key]) => key !== 'id'));
}

/** `Authorization: Basic` of a client id and secret (RFC 6749 section 2.3.1). */
const basic = (id: string, secret: string): string => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** A path of the REST facade, whole. */
const api = (path: string): string => API_PREFIX + path;

/** A webhook endpoint input; no worker runs in these tests, so nothing is sent to it. */
const endpointInput = (enabledEvents: string[] = ['product.created']) => ({ url: 'http://127.0.0.1:9/hooks', enabled_events: enabledEvents });

/** The set-ups of `t`'s app, and the plain helpers beside them, as test/operations/ files receive them. */
export function operationsContext(t: TestApp) {
  const createProduct = (): Promise<ProductBody> => createProductAs(t);

  async function read(url: string, token?: string): Promise<Representation> {
    const res = await t.request({ method: 'GET', url, token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Representation>();
  }

  /** A draft of `customer`'s with one item of a new product; `changes` may break the body on purpose. */
  async function createOrder(customer: TestUser, changes: Partial<OrderInputBody> = {}): Promise<OrderBody> {
    const product = await createProduct();
    return createOrderAs(t, { items: [{ product_id: product.id, quantity: 1 }], address: '1 Main Street', ...changes }, customer.token);
  }

  /** `customer`'s order moved on to confirmed, or to paid through POST /payments. */
  async function orderIn(status: 'confirmed' | 'paid', customer: TestUser): Promise<OrderBody> {
    const order = await createOrder(customer);
    expect((await t.request({ method: 'POST', url: `/api/v1/orders/${order.id}/confirm`, token: customer.token })).statusCode).toBe(200);
    if (status === 'paid') await payOrder(t, order, customer.token);
    return order;
  }

  /** A paid order of a new customer's, with its payment. */
  async function paidPayment(): Promise<{ order: OrderBody; payment: PaymentBody; customer: TestUser }> {
    const customer = await t.createUser();
    const order = await orderIn('confirmed', customer);
    return { order, payment: await payOrder(t, order, customer.token), customer };
  }

  /** A paid order of a new customer's, shipped by the admin: it has one shipped fulfillment. */
  async function shippedOrder(): Promise<{ order: OrderBody; fulfillment: FulfillmentBody; customer: TestUser }> {
    const customer = await t.createUser();
    const order = await orderIn('paid', customer);
    return { order, fulfillment: await shipOrder(t, order.id, t.admin.token), customer };
  }

  /** An archived product: GET is 410 from now on. */
  async function archivedProduct(): Promise<ProductBody> {
    const product = await createProduct();
    expect((await t.request({ method: 'DELETE', url: `/api/v1/products/${product.id}`, token: t.admin.token })).statusCode).toBe(204);
    return product;
  }

  /** A confidential client of the client credentials grant, with its Basic header. */
  async function confidentialClient(): Promise<{ id: string; secret: string; authorization: string }> {
    const { client, secret } = await insertClient(t.db, { confidential: true, grantTypes: ['client_credentials'] });
    if (secret === undefined) throw new Error('a confidential client has a secret');
    return { id: client.client_id, secret, authorization: basic(client.client_id, secret) };
  }

  /** A first-party public client (every grant but client credentials). */
  const publicClient = async (): Promise<string> => (await insertClient(t.db)).client.client_id;

  /** Deletes every webhook endpoint: the tests make many, and WEBHOOK_MAX_ENDPOINTS (16) bounds them. */
  async function deleteEndpoints(): Promise<void> {
    for (const endpoint of (await read(`${WEBHOOK_ENDPOINTS}?limit=100`, t.admin.token)).data as { id: number }[]) {
      expect((await t.request({ method: 'DELETE', url: `${WEBHOOK_ENDPOINTS}/${endpoint.id}`, token: t.admin.token })).statusCode).toBe(204);
    }
  }

  /** A new webhook endpoint (room made first when the limit is near). */
  async function webhookEndpoint(enabledEvents?: string[]): Promise<{ id: number }> {
    if (((await read(`${WEBHOOK_ENDPOINTS}?limit=100`, t.admin.token)).data as unknown[]).length >= 12) await deleteEndpoints();
    const res = await t.request({ method: 'POST', url: WEBHOOK_ENDPOINTS, payload: endpointInput(enabledEvents), token: t.admin.token });
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ id: number }>();
  }

  /** An endpoint with one delivery (of a new product's product.created). */
  async function webhookDelivery(): Promise<{ endpoint: number; delivery: number }> {
    const endpoint = await webhookEndpoint();
    await createProduct();
    const [delivery] = (await read(`${WEBHOOK_ENDPOINTS}/${endpoint.id}/deliveries`, t.admin.token)).data as { id: number }[];
    if (delivery === undefined) throw new Error('a new product is delivered to an endpoint taking product.created');
    return { endpoint: endpoint.id, delivery: delivery.id };
  }

  // The idempotency cases' orders are drafts of the scene's mug (550): made once, when first needed.
  let sceneMade: Promise<OrderScene> | undefined;
  const scene = (): Promise<OrderScene> => (sceneMade ??= createOrderScene(t));
  /** The customer behind each token `customerActor` handed out. */
  const customerOf = new Map<string, TestUser>();

  /** A new customer as an actor; `ownerOf` gives the customer back. */
  async function customerActor(): Promise<Actor> {
    const user = await t.createUser('customer');
    customerOf.set(user.token, user);
    return { token: user.token };
  }

  function ownerOf(actor: Actor): TestUser {
    const user = actor.token === undefined ? undefined : customerOf.get(actor.token);
    if (!user) throw new Error('actor is not a scene customer');
    return user;
  }

  /** Two admins: keys are scoped by the caller, so equal keys of theirs must not collide. */
  const adminActors = async (): Promise<[Actor, Actor]> => [{ token: t.admin.token }, { token: (await t.createUser('admin')).token }];

  /** A draft of `owner`'s: one mug of the scene. */
  async function draftOf(owner: TestUser): Promise<OrderBody> {
    const made = await scene();
    return draftOrder(t, made, { owner, items: [{ product_id: made.mug.id, quantity: 1 }] });
  }

  async function confirmedOrder(owner: TestUser): Promise<OrderBody> {
    const draft = await draftOf(owner);
    expect((await orderAction(t, draft.id, 'confirm', owner.token)).statusCode).toBe(200);
    return { ...draft, status: 'confirmed' };
  }

  /** A new customer's draft of one mug, paid. */
  async function paidOrder(): Promise<OrderBody> {
    const owner = await t.createUser('customer');
    return advanceOrder(t, await draftOf(owner), 'paid', owner);
  }

  return {
    t,
    UNKNOWN_ID,
    api,
    createProduct,
    read,
    withoutId,
    createOrder,
    orderIn,
    paidPayment,
    shippedOrder,
    archivedProduct,
    basic,
    confidentialClient,
    publicClient,
    endpointInput,
    deleteEndpoints,
    webhookEndpoint,
    webhookDelivery,
    scene,
    customerActor,
    ownerOf,
    adminActors,
    draftOf,
    confirmedOrder,
    paidOrder,
  };
}

export type OperationsContext = ReturnType<typeof operationsContext>;
