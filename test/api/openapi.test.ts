/**
 * The OpenAPI document says what the service does: it is a valid OpenAPI 3.1 document, and every
 * operation in it, called for real, answers a documented status with a body that matches the
 * documented schema. The walk iterates the served document; an operation without an entry in
 * `walks` fails, so a new endpoint cannot be added without being walked here.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestUser } from '../helpers/app.ts';
import { createClient, publicClientInput } from '../helpers/clients.ts';
import { createOrder as createOrderAs, type OrderBody, type OrderInputBody } from '../helpers/orders.ts';
import { shipmentInput, shipOrder, type FulfillmentBody } from '../helpers/fulfillments.ts';
import { paymentInput, payOrder } from '../helpers/payments.ts';
import { createProduct as createProductAs, productInput, type ProductBody } from '../helpers/products.ts';
import { userInput } from '../helpers/users.ts';

type JsonSchema = Record<string, unknown>;

interface MediaType {
  schema?: JsonSchema;
}

interface ResponseObject {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, MediaType>;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: JsonSchema;
}

interface Operation {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, MediaType> };
  responses: Record<string, ResponseObject>;
  servers?: { url: string }[];
  security?: Record<string, unknown>[];
}

interface OpenApiDocument {
  openapi: string;
  servers?: { url: string }[];
  paths: Record<string, Record<string, unknown> & { servers?: { url: string }[] }>;
  components: { schemas?: Record<string, JsonSchema> };
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface DocumentedOperation {
  method: Uppercase<(typeof HTTP_METHODS)[number]>;
  /** Path as written in the document (`/products/{id}`). */
  path: string;
  /** Server URL that applies (operation, then path item, then document level). */
  server: string;
  operationId: string;
  operation: Operation;
}

// One app and the served document, loaded before the tests are collected so that each
// documented operation gets tests of its own.
const t = await createTestApp();
afterAll(async () => {
  await t.close();
});
const served = await t.request({ method: 'GET', url: '/api/openapi.json' });
const doc = served.json<OpenApiDocument>();

const operations: DocumentedOperation[] = Object.entries(doc.paths).flatMap(([path, item]) =>
  HTTP_METHODS.filter((m) => item[m] !== undefined).map((m) => {
    const operation = item[m] as Operation;
    return {
      method: m.toUpperCase() as DocumentedOperation['method'],
      path,
      server: operation.servers?.[0]?.url ?? item.servers?.[0]?.url ?? doc.servers?.[0]?.url ?? '',
      operationId: operation.operationId ?? `(no operationId: ${m.toUpperCase()} ${path})`,
      operation,
    };
  }),
);

// ---------------------------------------------------------------------------------------------
// JSON Schema validation against the document's own schemas.

const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addFormat('date-time', (value: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value) && !Number.isNaN(Date.parse(value)));
ajv.addFormat('email', /^[^\s@]+@[^\s@]+\.[^\s@]+$/);

const COMPONENT_REF = '#/components/schemas/';
const componentUri = (name: string) => `urn:openapi:components:schemas:${encodeURIComponent(name)}`;

/** `#/components/schemas/X` becomes the URI under which X is registered with Ajv. */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => {
      if (key === '$ref' && typeof inner === 'string' && inner.startsWith(COMPONENT_REF)) {
        const name = decodeURIComponent(inner.slice(COMPONENT_REF.length)).replace(/~1/g, '/').replace(/~0/g, '~');
        return [key, componentUri(name)];
      }
      return [key, rewriteRefs(inner)];
    }),
  );
}

for (const [name, schema] of Object.entries(doc.components.schemas ?? {})) {
  ajv.addSchema(rewriteRefs(schema) as JsonSchema, componentUri(name));
}

/** The Ajv errors of `value` against a documented schema; `[]` when it validates. */
function schemaErrors(schema: JsonSchema | undefined, value: unknown): unknown[] {
  if (schema === undefined) return ['no schema documented'];
  const validate = ajv.compile(rewriteRefs(schema) as JsonSchema);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

// ---------------------------------------------------------------------------------------------
// How to call each operation: a table keyed by operationId. A documented operation without an
// entry fails below.

interface Call {
  params?: Record<string, string | number>;
  query?: Record<string, string | number>;
  body?: unknown;
  /** Content-Type of `body`; default application/json. */
  contentType?: string;
  token?: string;
  headers?: Record<string, string>;
}

interface FailingCall extends Call {
  /** What the contract says this request answers. */
  status: number;
}

interface Walk {
  /** Prepares what the request needs and returns a request that should succeed. */
  success(): Promise<Call>;
  /** A request that should fail with `status`. */
  failure(): Promise<FailingCall>;
}

interface Representation extends Record<string, unknown> {
  id: number;
}

const createProduct = (): Promise<ProductBody> => createProductAs(t);

async function read(url: string, token?: string): Promise<Representation> {
  const res = await t.request({ method: 'GET', url, token });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Representation>();
}

/** A GET representation as a PUT body: `id` travels in the path. */
function withoutId(representation: Representation): Record<string, unknown> {
  return Object.fromEntries(Object.entries(representation).filter(([key]) => key !== 'id'));
}

/** A draft of `customer`'s with one item of a new product; `changes` may break the body on purpose. */
async function createOrder(customer: TestUser, changes: Partial<OrderInputBody> = {}): Promise<OrderBody> {
  const product = await createProduct();
  return createOrderAs(t, { items: [{ product_id: product.id, quantity: 1 }], address: '1 Main Street', ...changes }, customer.token);
}

const UNKNOWN_ID = 999_999;

/** `customer`'s order moved on to confirmed, or to paid through POST /payments. */
async function orderIn(status: 'confirmed' | 'paid', customer: TestUser): Promise<OrderBody> {
  const order = await createOrder(customer);
  expect((await t.request({ method: 'POST', url: `/api/v1/orders/${order.id}/confirm`, token: customer.token })).statusCode).toBe(200);
  if (status === 'paid') await payOrder(t, order, customer.token);
  return order;
}

/** A paid order of a new customer's, shipped by the admin: it has one shipped fulfillment. */
async function shippedOrder(): Promise<{ order: OrderBody; fulfillment: FulfillmentBody; customer: TestUser }> {
  const customer = await t.createUser();
  const order = await orderIn('paid', customer);
  return { order, fulfillment: await shipOrder(t, order.id, t.admin.token), customer };
}

const walks: Record<string, Walk> = {
  'products-create': {
    success: async () => ({ body: productInput(), token: t.admin.token }),
    failure: async () => ({ body: productInput({ price: -1 }), token: t.admin.token, status: 422 }),
  },
  'products-list': {
    success: async () => {
      await createProduct();
      return { query: { limit: 5, sort: '-price,name', page: 1 } };
    },
    failure: async () => ({ query: { limit: 500 }, status: 422 }),
  },
  'products-get': {
    success: async () => ({ params: { id: (await createProduct()).id } }),
    failure: async () => ({ params: { id: UNKNOWN_ID }, status: 404 }),
  },
  'products-replace': {
    success: async () => {
      const product = await read(`/api/v1/products/${(await createProduct()).id}`);
      return { params: { id: product.id }, body: { ...withoutId(product), name: 'Renamed product' }, token: t.admin.token };
    },
    failure: async () => {
      const product = await read(`/api/v1/products/${(await createProduct()).id}`);
      return { params: { id: product.id }, body: withoutId(product), status: 401 };
    },
  },
  'products-delete': {
    success: async () => ({ params: { id: (await createProduct()).id }, token: t.admin.token }),
    failure: async () => ({ params: { id: UNKNOWN_ID }, token: t.admin.token, status: 404 }),
  },
  'users-create': {
    success: async () => ({ body: userInput() }),
    failure: async () => ({ body: userInput({ email: 'not-an-email' }), status: 422 }),
  },
  'users-list': {
    success: async () => ({ query: { page: 1, limit: 10 }, token: t.admin.token }),
    failure: async () => ({ status: 401 }),
  },
  'users-get': {
    success: async () => {
      const user = await t.createUser();
      return { params: { id: user.id }, token: user.token };
    },
    failure: async () => ({ params: { id: UNKNOWN_ID }, token: t.admin.token, status: 404 }),
  },
  'users-replace': {
    success: async () => {
      const user = await t.createUser();
      const representation = await read(`/api/v1/users/${user.id}`, user.token);
      return { params: { id: user.id }, body: { ...withoutId(representation), name: 'Renamed user' }, token: user.token };
    },
    failure: async () => {
      const user = await t.createUser();
      const representation = await read(`/api/v1/users/${user.id}`, user.token);
      return { params: { id: user.id }, body: { ...withoutId(representation), email: 'not-an-email' }, token: user.token, status: 422 };
    },
  },
  'users-delete': {
    success: async () => ({ params: { id: (await t.createUser()).id }, token: t.admin.token }),
    failure: async () => ({ params: { id: (await t.createUser()).id }, status: 401 }),
  },
  'orders-create': {
    success: async () => {
      const product = await createProduct();
      return { body: { items: [{ product_id: product.id, quantity: 2 }], address: '1 Main Street' }, token: (await t.createUser()).token };
    },
    failure: async () => {
      const product = await createProduct();
      return { body: { items: [{ product_id: product.id, quantity: 0 }] }, token: (await t.createUser()).token, status: 422 };
    },
  },
  'orders-list': {
    success: async () => {
      const customer = await t.createUser();
      await createOrder(customer);
      return { query: { status: 'draft', page: 1, limit: 10 }, token: customer.token };
    },
    failure: async () => ({ status: 401 }),
  },
  'orders-get': {
    success: async () => {
      const customer = await t.createUser();
      return { params: { id: (await createOrder(customer)).id }, token: customer.token };
    },
    // Another customer's order is 404, never 403 (CONTRACT 5).
    failure: async () => ({ params: { id: (await createOrder(await t.createUser())).id }, token: (await t.createUser()).token, status: 404 }),
  },
  'orders-replace': {
    success: async () => {
      const customer = await t.createUser();
      const order = await createOrder(customer);
      return { params: { id: order.id }, body: { ...withoutId(order), address: '2 Side Street' }, token: customer.token };
    },
    failure: async () => {
      const customer = await t.createUser();
      const order = await createOrder(customer);
      return { params: { id: order.id }, body: { ...withoutId(order), address: 'x'.repeat(501) }, token: customer.token, status: 422 };
    },
  },
  'orders-patch': {
    success: async () => {
      const customer = await t.createUser();
      const order = await createOrder(customer);
      return { params: { id: order.id }, body: { address: '3 Patch Lane' }, contentType: 'application/merge-patch+json', token: customer.token };
    },
    failure: async () => {
      const customer = await t.createUser();
      const order = await createOrder(customer);
      return { params: { id: order.id }, body: { address: 'x'.repeat(501) }, contentType: 'application/merge-patch+json', token: customer.token, status: 422 };
    },
  },
  'orders-delete': {
    success: async () => {
      const customer = await t.createUser();
      return { params: { id: (await createOrder(customer)).id }, token: customer.token };
    },
    failure: async () => ({ params: { id: UNKNOWN_ID }, token: t.admin.token, status: 404 }),
  },
  'orders-confirm': {
    success: async () => {
      const customer = await t.createUser();
      return { params: { id: (await createOrder(customer)).id }, token: customer.token };
    },
    // Confirming needs an address (CONTRACT 3: 422 names the missing field).
    failure: async () => {
      const customer = await t.createUser();
      return { params: { id: (await createOrder(customer, { address: null })).id }, token: customer.token, status: 422 };
    },
  },
  'orders-cancel': {
    success: async () => {
      const customer = await t.createUser();
      return { params: { id: (await createOrder(customer)).id }, token: customer.token };
    },
    failure: async () => ({ params: { id: (await createOrder(await t.createUser())).id }, status: 401 }),
  },
  'payments-create': {
    success: async () => {
      const customer = await t.createUser();
      return { body: paymentInput(await orderIn('confirmed', customer)), token: customer.token };
    },
    // The amount must equal the order's total (CONTRACT 2).
    failure: async () => {
      const customer = await t.createUser();
      const order = await orderIn('confirmed', customer);
      return { body: paymentInput(order, { amount: order.total + 1 }), token: customer.token, status: 422 };
    },
  },
  'payments-get': {
    success: async () => {
      const customer = await t.createUser();
      return { params: { id: (await payOrder(t, await orderIn('confirmed', customer), customer.token)).id }, token: customer.token };
    },
    failure: async () => {
      const customer = await t.createUser();
      const payment = await payOrder(t, await orderIn('confirmed', customer), customer.token);
      return { params: { id: payment.id }, token: (await t.createUser()).token, status: 404 };
    },
  },
  'payments-list': {
    success: async () => {
      const customer = await t.createUser();
      const payment = await payOrder(t, await orderIn('confirmed', customer), customer.token);
      return { query: { order_id: payment.order_id, page: 1, limit: 10 }, token: customer.token };
    },
    failure: async () => ({ status: 401 }),
  },
  'fulfillments-request': {
    success: async () => ({ params: { id: (await orderIn('paid', await t.createUser())).id }, token: t.admin.token }),
    // Only a paid order goes to fulfillment (CONTRACT 2).
    failure: async () => ({ params: { id: (await orderIn('confirmed', await t.createUser())).id }, token: t.admin.token, status: 409 }),
  },
  'fulfillments-create': {
    success: async () => ({ params: { id: (await orderIn('paid', await t.createUser())).id }, body: shipmentInput(), token: t.admin.token }),
    failure: async () => ({ params: { id: (await orderIn('paid', await t.createUser())).id }, body: shipmentInput({ carrier: '' }), token: t.admin.token, status: 422 }),
  },
  'fulfillments-get': {
    success: async () => {
      const { order, fulfillment, customer } = await shippedOrder();
      return { params: { id: order.id, fulfillmentId: fulfillment.id }, token: customer.token };
    },
    // Another customer's order's fulfillment is 404, never 403 (CONTRACT 5).
    failure: async () => {
      const { order, fulfillment } = await shippedOrder();
      return { params: { id: order.id, fulfillmentId: fulfillment.id }, token: (await t.createUser()).token, status: 404 };
    },
  },
  'fulfillments-list': {
    success: async () => {
      const { order, customer } = await shippedOrder();
      return { params: { id: order.id }, query: { page: 1, limit: 10 }, token: customer.token };
    },
    failure: async () => ({ params: { id: (await shippedOrder()).order.id }, token: (await t.createUser()).token, status: 404 }),
  },
  // A public client: its 201 (no secret) is what GET at its Location answers.
  'clients-create': {
    success: async () => ({ body: publicClientInput(), token: t.admin.token }),
    failure: async () => ({ body: publicClientInput({ redirect_uris: ['http://app.example.com/cb'] }), token: t.admin.token, status: 422 }),
  },
  'clients-list': {
    success: async () => {
      await createClient(t);
      return { query: { page: 1, limit: 10 }, token: t.admin.token };
    },
    failure: async () => ({ token: (await t.createUser()).token, status: 403 }),
  },
  'clients-get': {
    success: async () => ({ params: { client_id: (await createClient(t)).client_id }, token: t.admin.token }),
    failure: async () => ({ params: { client_id: 'Hq3cY1n0x9K7d2mWv8Jt4A' }, token: t.admin.token, status: 404 }),
  },
  'clients-delete': {
    success: async () => ({ params: { client_id: (await createClient(t)).client_id }, token: t.admin.token }),
    failure: async () => ({ params: { client_id: (await createClient(t)).client_id }, token: (await t.createUser()).token, status: 403 }),
  },
  health: {
    success: async () => ({}),
    failure: async () => ({ headers: { accept: 'text/html' }, status: 406 }),
  },
};

/**
 * POSTs that act on a resource instead of creating one, with the success status the contract
 * gives them (CONTRACT 2 and 3). Every other POST creates: 201 with Location.
 */
const ACTION_POSTS: Record<string, number> = {
  '/orders/{id}/confirm': 200,
  '/orders/{id}/cancel': 200,
  '/orders/{id}/send-to-fulfillment': 202,
};
const createsResource = (op: DocumentedOperation) => op.method === 'POST' && ACTION_POSTS[op.path] === undefined;
const answersLocation = (op: DocumentedOperation) => createsResource(op) || op.path.endsWith('/send-to-fulfillment');

/** GET operations that have no validator to revalidate (CONTRACT 1: health is live, `no-store`). */
const NOT_CONDITIONAL = new Set(['health']);

// ---------------------------------------------------------------------------------------------

function urlFor(op: DocumentedOperation, call: Call): string {
  const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const value = call.params?.[name];
    expect(value, `path parameter {${name}} of ${op.operationId} has no value in its walk`).toBeDefined();
    return encodeURIComponent(String(value));
  });
  const query = new URLSearchParams(Object.entries(call.query ?? {}).map(([k, v]): [string, string] => [k, String(v)])).toString();
  return `${op.server}${path}${query ? `?${query}` : ''}`;
}

/** The call only uses what the document declares, with values its schemas accept. */
function expectCallMatchesDocument(op: DocumentedOperation, call: Call): void {
  const parameters = op.operation.parameters ?? [];
  for (const [name, value] of Object.entries(call.query ?? {})) {
    const parameter = parameters.find((p) => p.in === 'query' && p.name === name);
    expect(parameter, `query parameter ${name} is not documented on ${op.operationId}`).toBeDefined();
    expect(schemaErrors(parameter?.schema, value), `query parameter ${name}`).toEqual([]);
  }
  for (const parameter of parameters.filter((p) => p.in === 'path')) {
    expect(schemaErrors(parameter.schema, call.params?.[parameter.name]), `path parameter ${parameter.name}`).toEqual([]);
  }
  for (const parameter of parameters.filter((p) => p.required && p.in === 'query')) {
    expect(call.query?.[parameter.name], `required query parameter ${parameter.name}`).toBeDefined();
  }
  if (op.operation.requestBody) {
    const contentType = call.contentType ?? 'application/json';
    const media = op.operation.requestBody.content[contentType];
    expect(media, `${op.operationId} documents no ${contentType} request body`).toBeDefined();
    if (op.operation.requestBody.required) expect(call.body, `${op.operationId} needs a body`).toBeDefined();
    if (call.body !== undefined) expect(schemaErrors(media?.schema, call.body), `request body of ${op.operationId}`).toEqual([]);
  } else {
    expect(call.body, `${op.operationId} documents no request body`).toBeUndefined();
  }
}

async function send(op: DocumentedOperation, call: Call): Promise<LightMyRequestResponse> {
  const body = call.body === undefined ? {} : { payload: JSON.stringify(call.body), headers: { 'content-type': call.contentType ?? 'application/json', ...call.headers } };
  return t.request({ method: op.method, url: urlFor(op, call), token: call.token, headers: call.headers, ...body });
}

const mediaTypeOf = (res: LightMyRequestResponse) => (String(res.headers['content-type'] ?? '').split(';')[0] ?? '').trim().toLowerCase();

/** The status is documented, and the body matches the schema documented for it. */
function expectDocumentedResponse(op: DocumentedOperation, res: LightMyRequestResponse): ResponseObject | undefined {
  const status = String(res.statusCode);
  const documented = op.operation.responses[status];
  expect(documented, `${op.method} ${op.path} answered ${status}, documented: ${Object.keys(op.operation.responses).join(', ')}; body ${res.body}`).toBeDefined();
  if (!documented) return undefined;
  if (!documented.content) {
    expect(res.body, `${status} documents no body`).toBe('');
    return documented;
  }
  const mediaType = mediaTypeOf(res);
  const media = documented.content[mediaType];
  expect(media, `${status} answered ${mediaType}, documented: ${Object.keys(documented.content).join(', ')}`).toBeDefined();
  expect(schemaErrors(media?.schema, res.json()), `${op.method} ${op.path} ${status} body ${res.body}`).toEqual([]);
  return documented;
}

/** A creating POST's 200 that replays a stored result (Idempotency-Key) besides its own 201/202. */
const isReplay = (op: DocumentedOperation, code: string) => code === '200' && op.operation.responses[code]?.headers?.['Idempotent-Replayed'] !== undefined;
/** The success status of a first request: a replay's 200 is the same operation's answer repeated. */
const successCodes = (op: DocumentedOperation) => Object.keys(op.operation.responses).filter((code) => /^2\d\d$/.test(code) && !isReplay(op, code));

// ---------------------------------------------------------------------------------------------

describe('GET /api/openapi.json serves a valid OpenAPI 3.1 document', () => {
  it('answers 200 application/json', () => {
    expect(served.statusCode).toBe(200);
    expect(mediaTypeOf(served)).toBe('application/json');
  });

  it('validates as OpenAPI 3.1', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    const validator = new Validator();
    const result = await validator.validate(served.json<Record<string, unknown>>());
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents operations under the canonical /api/v1 base (health under /api)', () => {
    expect(operations.length).toBeGreaterThan(0);
    for (const op of operations) {
      const expected = op.path === '/health' ? '/api' : '/api/v1';
      expect(op.server, `${op.method} ${op.path}`).toBe(expected);
    }
  });

  it('every operation has a unique operationId', () => {
    const ids = operations.map((op) => op.operation.operationId);
    for (const id of ids) expect(id).toEqual(expect.any(String));
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('the document states the statuses the contract fixes (CONTRACT 4 and 5)', () => {
  it('every operation documents exactly one success (2xx) status', () => {
    for (const op of operations) expect(successCodes(op), `${op.method} ${op.path}`).toHaveLength(1);
  });

  it('every POST that creates documents 201 with a Location header', () => {
    for (const op of operations.filter(createsResource)) {
      const created = op.operation.responses['201'];
      expect(created, `${op.method} ${op.path} documents no 201`).toBeDefined();
      expect(Object.keys(created?.headers ?? {}).map((h) => h.toLowerCase()), `${op.method} ${op.path} 201 headers`).toContain('location');
    }
  });

  it('every POST answering 201 or 202 documents Idempotency-Key, the 200 replay with Idempotent-Replayed, and 409/422 key problems (CONTRACT 8)', () => {
    const creating = operations.filter((o) => o.method === 'POST' && ['201', '202'].some((code) => o.operation.responses[code]));
    expect(creating.length).toBeGreaterThanOrEqual(3);
    for (const op of creating) {
      const name = `${op.method} ${op.path}`;
      const parameter = (op.operation.parameters ?? []).find((p) => 'name' in p && p.name === 'Idempotency-Key');
      expect(parameter, `${name} declares no Idempotency-Key`).toMatchObject({ in: 'header', required: false, schema: { maxLength: 255 } });
      const first = op.operation.responses['201'] ?? op.operation.responses['202'];
      expect(isReplay(op, '200'), `${name} documents no replay`).toBe(true);
      expect(op.operation.responses['200']?.content, name).toEqual(first?.content);
      expect(op.operation.responses['409']?.description, name).toContain('idempotency-key-in-use');
      expect(op.operation.responses['422']?.description, name).toContain('idempotency-key-mismatch');
    }
  });

  it('every action POST documents the status the contract gives it', () => {
    for (const op of operations.filter((o) => o.method === 'POST' && !createsResource(o))) {
      expect(successCodes(op), `${op.method} ${op.path}`).toEqual([String(ACTION_POSTS[op.path])]);
    }
  });

  it('every DELETE documents 204 with no body', () => {
    for (const op of operations.filter((o) => o.method === 'DELETE')) {
      const done = op.operation.responses['204'];
      expect(done, `${op.method} ${op.path} documents no 204`).toBeDefined();
      expect(done?.content, `${op.method} ${op.path} 204 has content`).toBeUndefined();
    }
  });

  it('every GET of a resource or list documents 304 Not Modified', () => {
    for (const op of operations.filter((o) => o.method === 'GET' && !NOT_CONDITIONAL.has(o.operationId))) {
      expect(op.operation.responses['304'], `${op.method} ${op.path} documents no 304`).toBeDefined();
    }
  });

  it('every problem response is documented as application/problem+json with the Problem schema', () => {
    for (const op of operations) {
      for (const [code, response] of Object.entries(op.operation.responses)) {
        if (!/^[45]\d\d$/.test(code) || op.operationId === 'health') continue;
        expect(Object.keys(response.content ?? {}), `${op.method} ${op.path} ${code}`).toEqual(['application/problem+json']);
        expect(response.content?.['application/problem+json']?.schema, `${op.method} ${op.path} ${code}`).toEqual({ $ref: '#/components/schemas/Problem' });
      }
    }
  });

});

/** A representation to send back with PUT, per documented PUT path, and the token allowed to. */
const representationsForPut: Record<string, () => Promise<{ representation: Representation; token: string }>> = {
  '/products/{id}': async () => ({ representation: await read(`/api/v1/products/${(await createProduct()).id}`), token: t.admin.token }),
  '/users/{id}': async () => {
    const user = await t.createUser();
    return { representation: await read(`/api/v1/users/${user.id}`, user.token), token: user.token };
  },
  '/orders/{id}': async () => {
    const customer = await t.createUser();
    const order = await createOrder(customer);
    return { representation: await read(`/api/v1/orders/${order.id}`, customer.token), token: customer.token };
  },
};

describe('a PUT body schema accepts the representation a GET returns, read-only fields included (GET-modify-PUT, CONTRACT 1)', () => {
  for (const op of operations.filter((o) => o.method === 'PUT')) {
    it(`PUT ${op.path}: the service takes the GET representation back, and the documented body schema accepts it`, async () => {
      const prepare = representationsForPut[op.path];
      if (!prepare) throw new Error(`no representation to send back to PUT ${op.path}: add one`);
      const { representation, token } = await prepare();
      const res = await send(op, { params: { id: representation.id }, body: representation, token });
      expect(res.statusCode, res.body).toBe(200);
      const schema = op.operation.requestBody?.content['application/json']?.schema;
      expect(schemaErrors(schema, representation), `PUT ${op.path} body schema refuses the GET representation`).toEqual([]);
    });
  }
});

describe('every documented operation answers as documented when called for real', () => {
  for (const op of operations) {
    describe(`${op.method} ${op.server}${op.path} (${op.operationId})`, () => {
      it('has an entry in the walk table (add one when adding an operation)', () => {
        expect(walks[op.operationId], `no walk for ${op.operationId}`).toBeDefined();
      });

      it('a request that should succeed answers the documented success status with a body matching its schema', async () => {
        const walk = walks[op.operationId];
        if (!walk) throw new Error(`no walk for ${op.operationId}`);
        const call = await walk.success();
        expectCallMatchesDocument(op, call);
        const res = await send(op, call);
        expect(successCodes(op)).toEqual([String(res.statusCode)]);
        const documented = expectDocumentedResponse(op, res);

        if (answersLocation(op)) {
          const location = res.headers.location;
          expect(location, 'a POST that creates answers a Location header').toEqual(expect.stringMatching(/^\/api\/v1\//));
          expect(Object.keys(documented?.headers ?? {}).map((h) => h.toLowerCase())).toContain('location');
          const created = await t.request({ method: 'GET', url: String(location), token: t.admin.token });
          expect(created.statusCode).toBe(200);
          expect(created.json()).toEqual(res.json());
        }

        for (const name of Object.keys(documented?.headers ?? {})) {
          if (name.toLowerCase() === 'link') continue; // only when there is another page
          expect(res.headers[name.toLowerCase()], `documented header ${name} is missing`).toBeDefined();
        }

        if (op.method === 'GET' && !NOT_CONDITIONAL.has(op.operationId)) {
          const etag = res.headers.etag;
          expect(etag, 'a GET answers an ETag').toEqual(expect.any(String));
          const again = await send(op, { ...call, headers: { ...call.headers, 'if-none-match': String(etag) } });
          expect(again.statusCode).toBe(304);
          expectDocumentedResponse(op, again);
        }
      });

      it('a request that should fail answers a documented status with a body matching the documented problem schema', async () => {
        const walk = walks[op.operationId];
        if (!walk) throw new Error(`no walk for ${op.operationId}`);
        const { status, ...call } = await walk.failure();
        const res = await send(op, call);
        expect(res.statusCode, res.body).toBe(status);
        expect(mediaTypeOf(res)).toBe('application/problem+json');
        expectDocumentedResponse(op, res);
      });
    });
  }
});
