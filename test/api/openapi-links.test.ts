/**
 * The OpenAPI document's links (OpenAPI 3.1 `links` on success responses) say the multi-step
 * flows a client walks, and schemathesis's stateful phase follows them: an order from creation to
 * shipment, a resource from creation to deletion, a sign-in to its renewal and revocation. Every
 * link names an operation of the document and fills only what that operation takes, from members
 * its source answer has; and following the links from real answers, with nothing but what they
 * carry, walks each flow for real.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_PASSWORD, type TestUser } from '../helpers/app.ts';
import { publicClientInput } from '../helpers/clients.ts';
import { shipmentInput } from '../helpers/fulfillments.ts';
import { insertClient } from '../helpers/oauth.ts';
import { createProduct, freshCategory, productInput } from '../helpers/products.ts';
import { userInput } from '../helpers/users.ts';

type Json = Record<string, unknown>;

interface Link {
  operationId: string;
  description?: string;
  parameters?: Record<string, string>;
  requestBody?: Record<string, unknown>;
}

interface Operation {
  operationId: string;
  parameters?: ({ name: string; in: string; required?: boolean; schema?: Json } | { $ref: string })[];
  requestBody?: { content: Record<string, { schema?: Json }> };
  responses: Record<string, { content?: Record<string, { schema?: Json }>; links?: Record<string, Link> }>;
}

interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json>; parameters?: Record<string, Json> };
}

const t = await createTestApp();
afterAll(async () => {
  await t.close();
});
const doc = (await t.request({ method: 'GET', url: '/api/openapi.json' })).json<Document>();

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;
interface Located {
  method: string;
  path: string;
  operation: Operation;
}
const byId = new Map<string, Located>(
  Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => [(item[m] as Operation).operationId, { method: m.toUpperCase(), path, operation: item[m] as Operation }] as const),
  ),
);

/** Every link of the document: its source operation and status, its name and definition. */
const links = [...byId.values()].flatMap(({ operation }) =>
  Object.entries(operation.responses).flatMap(([status, response]) =>
    Object.entries(response.links ?? {}).map(([name, link]) => ({ source: operation.operationId, status, name, link })),
  ),
);

const linkedFrom = (operationId: string, status: string): string[] =>
  Object.values(byId.get(operationId)?.operation.responses[status]?.links ?? {}).map((link) => link.operationId);

const SCHEMA_REF = '#/components/schemas/';
function deref(schema: Json | undefined): Json | undefined {
  let current = schema;
  while (current && typeof current.$ref === 'string') current = doc.components.schemas[current.$ref.slice(SCHEMA_REF.length)];
  return current;
}

/**
 * The only runtime expressions the document uses: a JSON pointer into the answer's body
 * (`$response.body#/id`, `$response.body#/data/0/id`). A link's body holds them among constants
 * (`grant_type: refresh_token`, `quantity: 1`).
 */
const BODY_POINTER = /^\$response\.body#\/([a-z_]+(\/[a-z0-9_]+)*)$/;
const isExpression = (value: unknown): value is string => typeof value === 'string' && value.startsWith('$');
function evaluate(expression: string, body: unknown): unknown {
  const pointer = BODY_POINTER.exec(expression)?.[1];
  if (pointer === undefined) throw new Error(`unsupported runtime expression ${expression}`);
  return pointer.split('/').reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], body);
}
/** A link's request body with every expression evaluated against the answer. */
function evaluateBody(template: unknown, body: unknown): unknown {
  if (isExpression(template)) return evaluate(template, body);
  if (Array.isArray(template)) return template.map((item) => evaluateBody(item, body));
  if (typeof template === 'object' && template !== null) return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, evaluateBody(v, body)]));
  return template;
}
/** Every expression in a link's request body. */
const expressionsIn = (template: unknown): string[] =>
  isExpression(template) ? [template] : typeof template === 'object' && template !== null ? Object.values(template).flatMap(expressionsIn) : [];

const FORM = 'application/x-www-form-urlencoded';

interface Step {
  operationId: string;
  res: LightMyRequestResponse;
}

/** Calls `operationId` with path parameters and body members (JSON, or a form where it is the first media type). */
function call(operationId: string, options: { params?: Json; body?: Json; token?: string; headers?: Record<string, string> }): Promise<LightMyRequestResponse> {
  const target = byId.get(operationId);
  if (!target) throw new Error(`no operation ${operationId}`);
  const url = target.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(String(options.params?.[name])));
  const contentType = Object.keys(target.operation.requestBody?.content ?? {})[0];
  const payload =
    options.body === undefined
      ? undefined
      : contentType === FORM
        ? new URLSearchParams(Object.entries(options.body).map(([k, v]): [string, string] => [k, String(v)])).toString()
        : JSON.stringify(options.body);
  return t.request({
    method: target.method as 'GET',
    url,
    token: options.token,
    headers: { ...(payload === undefined ? {} : { 'content-type': contentType ?? 'application/json' }), ...options.headers },
    ...(payload === undefined ? {} : { payload }),
  });
}

/** Follows the link `name` of `from`'s answer: its parameters and body from that answer, `extra` beside them. */
async function follow(from: Step, name: string, extra: { body?: Json; token?: string; headers?: Record<string, string> } = {}): Promise<Step> {
  const link = byId.get(from.operationId)?.operation.responses[String(from.res.statusCode)]?.links?.[name];
  expect(link, `${from.operationId} ${from.res.statusCode} has no link ${name}`).toBeDefined();
  if (!link) throw new Error('unreachable');
  const answer = from.res.json<Json>();
  const params = Object.fromEntries(Object.entries(link.parameters ?? {}).map(([key, expression]) => [key, evaluate(expression, answer)]));
  const linked = evaluateBody(link.requestBody ?? {}, answer) as Json;
  const body = link.requestBody || extra.body ? { ...extra.body, ...linked } : undefined;
  const res = await call(link.operationId, { params, ...(body ? { body } : {}), token: extra.token, headers: extra.headers });
  return { operationId: link.operationId, res };
}

async function start(operationId: string, options: Parameters<typeof call>[1], status: number): Promise<Step> {
  const res = await call(operationId, options);
  expect(res.statusCode, res.body).toBe(status);
  return { operationId, res };
}

const expectStatus = (step: Step, status: number) => expect(step.res.statusCode, `${step.operationId}: ${step.res.body}`).toBe(status);

async function draftOrder(customer: TestUser): Promise<Step> {
  const product = await createProduct(t);
  return start('orders-create', { body: { items: [{ product_id: product.id, quantity: 2 }], address: '1 Main Street' }, token: customer.token }, 201);
}

/** A password grant of a first-party public client: an access token and a refresh token. */
async function signIn(): Promise<{ step: Step; clientId: string }> {
  const { client } = await insertClient(t.db);
  const user = await t.createUser();
  const step = await start('oauth-token', { body: { grant_type: 'password', client_id: client.client_id, username: user.email, password: TEST_PASSWORD } }, 200);
  return { step, clientId: client.client_id };
}

describe('the document links the flows a client walks', () => {
  it('links each step of an order, a resource and a sign-in to the next', () => {
    const expected: [string, string, string[]][] = [
      ['products-list', '200', ['orders-create']],
      ['orders-create', '201', ['orders-get', 'orders-replace', 'orders-patch', 'orders-delete', 'orders-confirm', 'orders-cancel']],
      ['orders-confirm', '200', ['payments-create']],
      ['payments-create', '201', ['payments-get', 'orders-get', 'fulfillments-request', 'fulfillments-create']],
      ['fulfillments-request', '202', ['fulfillments-get', 'fulfillments-create']],
      ['fulfillments-create', '201', ['fulfillments-get']],
      ['products-create', '201', ['products-get', 'products-replace', 'products-delete']],
      ['users-create', '201', ['users-get', 'users-replace', 'users-delete', 'orders-create']],
      ['clients-create', '201', ['clients-get', 'clients-delete']],
      ['oauth-token', '200', ['oauth-token', 'oauth-revoke']],
    ];
    for (const [source, status, targets] of expected) expect(linkedFrom(source, status), `${source} ${status}`).toEqual(expect.arrayContaining(targets));
  });

  it('every link names an operation of the document and fills only its path parameters and body members, from members of the answer', () => {
    expect(links.length).toBeGreaterThan(20);
    for (const { source, status, name, link } of links) {
      const where = `${source} ${status} -> ${name}`;
      const target = byId.get(link.operationId);
      expect(target, `${where}: no operation ${link.operationId}`).toBeDefined();
      expect(link.description, where).toEqual(expect.stringMatching(/\S/));
      const answer = deref(byId.get(source)?.operation.responses[status]?.content?.['application/json']?.schema);
      const members = Object.keys((answer?.properties ?? {}) as Json);
      const pathParams = (target?.operation.parameters ?? []).filter((p): p is { name: string; in: string } => 'in' in p && p.in === 'path').map((p) => p.name);
      expect(Object.keys(link.parameters ?? {}).sort(), `${where}: path parameters`).toEqual([...pathParams].sort());
      for (const expression of [...Object.values(link.parameters ?? {}), ...expressionsIn(link.requestBody)]) {
        const member = BODY_POINTER.exec(expression)?.[1]?.split('/')[0];
        expect(member, `${where}: ${expression} points into no member of the answer's body`).toBeDefined();
        expect(members, `${where}: the answer has no member ${member}`).toContain(member);
      }
      if (link.requestBody) {
        const media = Object.values(target?.operation.requestBody?.content ?? {})[0];
        const variants = [deref(media?.schema), ...((deref(media?.schema)?.oneOf as Json[] | undefined) ?? []).map(deref)];
        const bodyMembers = new Set(variants.flatMap((v) => Object.keys((v?.properties ?? {}) as Json)));
        for (const member of Object.keys(link.requestBody)) expect([...bodyMembers], `${where}: the target's body has no member ${member}`).toContain(member);
      }
    }
  });
});

describe('following the links from real answers walks each flow', () => {
  it('an order: create, confirm, pay (its total), send to fulfillment, ship, read the shipment', async () => {
    const customer = await t.createUser();
    const created = await draftOrder(customer);
    const confirmed = await follow(created, 'orders-confirm', { token: customer.token });
    expectStatus(confirmed, 200);
    const paid = await follow(confirmed, 'payments-create', { body: { method: 'card' }, token: customer.token });
    expectStatus(paid, 201);
    const order = await follow(paid, 'orders-get', { token: customer.token });
    expectStatus(order, 200);
    expect(order.res.json()).toMatchObject({ status: 'paid' });
    const requested = await follow(paid, 'fulfillments-request', { token: t.admin.token });
    expectStatus(requested, 202);
    const shipped = await follow(requested, 'fulfillments-create', { body: shipmentInput(), token: t.admin.token });
    expectStatus(shipped, 201);
    const shipment = await follow(shipped, 'fulfillments-get', { token: customer.token });
    expectStatus(shipment, 200);
    expect(shipment.res.json()).toMatchObject({ status: 'shipped', id: requested.res.json<Json>().id });
  });

  it("an order from the catalogue: list the products, order the page's first", async () => {
    const customer = await t.createUser();
    const product = await createProduct(t, { category: freshCategory() });
    // A category of its own, so that the page's first product is this one.
    const page: Step = { operationId: 'products-list', res: await t.request({ method: 'GET', url: `/api/v1/products?category=${product.category}` }) };
    expectStatus(page, 200);
    const ordered = await follow(page, 'orders-create', { body: { address: '1 Main Street' }, token: customer.token });
    expectStatus(ordered, 201);
    expect(ordered.res.json()).toMatchObject({ items: [{ product_id: product.id, quantity: 1 }] });
  });

  it('an order: create, read, patch, delete; then it is gone', async () => {
    const customer = await t.createUser();
    const created = await draftOrder(customer);
    expectStatus(await follow(created, 'orders-get', { token: customer.token }), 200);
    const patched = await follow(created, 'orders-patch', { body: { address: '2 Side Street' }, token: customer.token, headers: { 'content-type': 'application/merge-patch+json' } });
    expectStatus(patched, 200);
    expect(patched.res.json()).toMatchObject({ address: '2 Side Street' });
    expectStatus(await follow(created, 'orders-delete', { token: customer.token }), 204);
    expectStatus(await follow(created, 'orders-get', { token: customer.token }), 404);
  });

  it('a product, a user (and an order for them, as an admin) and an OAuth client: create, read, delete', async () => {
    const product = await start('products-create', { body: productInput(), token: t.admin.token }, 201);
    expectStatus(await follow(product, 'products-get'), 200);
    expectStatus(await follow(product, 'products-delete', { token: t.admin.token }), 204);
    expectStatus(await follow(product, 'products-get'), 410);

    const user = await start('users-create', { body: userInput() }, 201);
    expectStatus(await follow(user, 'users-get', { token: t.admin.token }), 200);
    const item = await createProduct(t);
    const ordered = await follow(user, 'orders-create', { body: { items: [{ product_id: item.id, quantity: 1 }] }, token: t.admin.token });
    expectStatus(ordered, 201);
    expect(ordered.res.json()).toMatchObject({ customer_id: user.res.json<Json>().id });
    expectStatus(await follow(ordered, 'orders-delete', { token: t.admin.token }), 204);
    expectStatus(await follow(user, 'users-delete', { token: t.admin.token }), 204);

    const client = await start('clients-create', { body: publicClientInput(), token: t.admin.token }, 201);
    expectStatus(await follow(client, 'clients-get', { token: t.admin.token }), 200);
    expectStatus(await follow(client, 'clients-delete', { token: t.admin.token }), 204);
    expectStatus(await follow(client, 'clients-get', { token: t.admin.token }), 404);
  });

  it('a sign-in: renew with the refresh token, revoke the new one; it no longer renews', async () => {
    const { step, clientId } = await signIn();
    const renewed = await follow(step, 'oauth-token', { body: { client_id: clientId } });
    expectStatus(renewed, 200);
    expectStatus(await follow(renewed, 'oauth-revoke', { body: { client_id: clientId } }), 200);
    const again = await follow(renewed, 'oauth-token', { body: { client_id: clientId } });
    expectStatus(again, 400);
    expect(again.res.json()).toMatchObject({ error: 'invalid_grant' });
  });
});
