/**
 * The benchmark's baseline (issue 12): what a careful hand-written server does for the measured
 * operations, with none of the service's layers (tRPC, drizzle, Zod, the REST facade,
 * @fastify/rate-limit). Bare Fastify + postgres.js tagged templates + jose, the same SQL statements
 * the services issue (read off server/modules/*\/*.service.ts and server/trpc/idempotency.ts), the
 * same JSON (fields and order), the same headers (ETag as server/lib/etag.ts computes it: of the
 * bytes sent; Last-Modified, Cache-Control, Content-Type, X-Request-Id, the security headers).
 * No rate limiting (issue 23): the service's limiter counts in memory, a cost only the service
 * pays, so it belongs in the service's column.
 *
 * It serves only the benchmark's cases and their happy paths; anything else is a short problem.
 * Run by scripts/bench/run.ts with DATABASE_URL, JWT_SECRET, PORT (and JWT_ISSUER/JWT_AUDIENCE).
 *
 * Kept by hand on purpose: if a service's SQL changes, this file should change with it, so the
 * ratio keeps comparing the same database work.
 */
import { createHmac, hash, randomUUID, webcrypto } from 'node:crypto';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { jwtVerify } from 'jose';
import postgres from 'postgres';

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined || value === '') throw new Error(`raw-server: ${name} is required`);
  return value;
};

const databaseUrl = env('DATABASE_URL');
// Imported once, as the service does (server/auth/tokens.ts): jose would import bytes on every verify.
const key = await webcrypto.subtle.importKey('raw', new TextEncoder().encode(env('JWT_SECRET')), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
const issuer = env('JWT_ISSUER', 'order-service');
const audience = env('JWT_AUDIENCE', 'order-service-api');
const port = Number(env('PORT'));
const API = '/api/v1';

// The service's pool: 10 connections (DATABASE_POOL_SIZE default), its session settings
// (server/db/client.ts defaultDatabaseTimeouts).
const sql = postgres(databaseUrl, {
  max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
  onnotice: () => {},
  idle_timeout: 60,
  connection: {
    application_name: 'order-service-raw',
    statement_timeout: 10_000,
    lock_timeout: 3_000,
    idle_in_transaction_session_timeout: 30_000,
  },
});

// --- what the service computes the same way --------------------------------------------------

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
};
const ARRAY_INDEX = /^(?:0|[1-9]\d*)$/;
const isArrayIndex = (key: string): boolean => ARRAY_INDEX.test(key) && Number(key) < 2 ** 32 - 1;
const sortedKeys = (object: object): string[] => {
  const keys = Object.keys(object).sort();
  if (!keys.some(isArrayIndex)) return keys;
  return [...keys.filter(isArrayIndex).sort((a, b) => Number(a) - Number(b)), ...keys.filter((key) => !isArrayIndex(key))];
};
const write = (key: string, input: unknown): string | undefined => {
  let value = input;
  if ((typeof value === 'object' && value !== null) || typeof value === 'bigint') {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') value = (toJSON as (key: string) => unknown).call(value, key);
  }
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return JSON.stringify(value);
  if (typeof value !== 'object') return undefined;
  if (value === null) return 'null';
  if (value instanceof Number || value instanceof String || value instanceof Boolean || value instanceof BigInt) return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((element, index) => write(String(index), element) ?? 'null').join(',')}]`;
  const record = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const member of isPlainObject(value) ? sortedKeys(value) : Object.keys(value)) {
    const text = write(member, record[member]);
    if (text !== undefined) parts.push(`${JSON.stringify(member)}:${text}`);
  }
  return `{${parts.join(',')}}`;
};

/** server/lib/etag.ts's, copied rather than imported: the baseline depends on no service code. */
const canonicalJson = (value: unknown): string => write('', value) as string;
const bytesTag = (text: string): string => `"${hash('sha1', text, 'base64url')}"`;

const CACHE = { public: 'public, max-age=60', private: 'private, max-age=0, must-revalidate', noStore: 'no-store' } as const;
const REQUEST_ID = /^[\w.:-]{1,128}$/;

interface Caller {
  sub: string;
  role: string;
  userId: number | undefined;
}

class Problem extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Verified tokens by their text, until they expire, the least recently used dropped beyond 4096:
 * what the service does (server/auth/verified-tokens.ts), so neither verifies a token twice.
 */
const verified = new Map<string, { caller: Caller; exp: number }>();

/** jose HS256 with the checks server/auth/tokens.ts makes (algorithm, issuer, audience, required claims, sub). */
async function authenticate(request: FastifyRequest): Promise<Caller> {
  const header = request.headers.authorization;
  const token = header?.startsWith('Bearer ') ? header.slice(7).trim() : undefined;
  if (!token) throw new Problem(401, 'missing token');
  const known = verified.get(token);
  if (known !== undefined) {
    verified.delete(token);
    if (known.exp > Math.floor(Date.now() / 1000)) {
      verified.set(token, known);
      return known.caller;
    }
  }
  let payload;
  try {
    ({ payload } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer, audience, requiredClaims: ['exp', 'iat', 'sub'] }));
  } catch {
    throw new Problem(401, 'invalid token');
  }
  const { sub, role, exp } = payload;
  if (typeof sub !== 'string' || typeof role !== 'string' || exp === undefined) throw new Problem(401, 'invalid token');
  const userId = /^[1-9][0-9]{0,9}$/.test(sub) ? Number(sub) : undefined;
  const caller = { sub, role, userId: role === 'customer' || role === 'admin' ? userId : undefined };
  if (verified.size >= 4096) verified.delete(verified.keys().next().value as string);
  verified.set(token, { caller, exp });
  return caller;
}

/** Sends a representation (an item or a list page) as the facade does: the body in schema field order, its validators (the tag of its bytes), cache policy. */
function send(reply: FastifyReply, status: number, cacheControl: string, body: unknown, lastModified?: string): FastifyReply {
  const text = JSON.stringify(body);
  reply.code(status).header('cache-control', cacheControl).header('etag', bytesTag(text));
  if (lastModified !== undefined) reply.header('last-modified', new Date(lastModified).toUTCString());
  return reply.header('content-type', 'application/json; charset=utf-8').send(text);
}

// The list cursors of server/modules/paging.ts, written out: base64url JSON of the position and
// an HMAC (keyed from the same secret) over it and the list's binding; next and prev as the
// service makes them for a page by number.
const cursorKey = createHmac('sha256', env('JWT_SECRET')).update('order-service list cursors').digest();

function cursor(binding: string, direction: 'a' | 'b', page: number, key: (string | number)[]): string {
  const body = Buffer.from(JSON.stringify([direction, page, key])).toString('base64url');
  return `${body}.${createHmac('sha256', cursorKey).update(`v1\n${binding}\n${body}`).digest().subarray(0, 16).toString('base64url')}`;
}

interface ListPage<T> {
  data: T[];
  page: number;
  limit: number;
  has_more: boolean;
  next_cursor: string | null;
  prev_cursor: string | null;
}

function listPage<R, T>(binding: string, rows: R[], page: number, limit: number, keyOf: (row: R) => (string | number)[], map: (row: R) => T): ListPage<T> {
  const shown = rows.slice(0, limit);
  const first = shown[0];
  const last = shown.at(-1);
  const next = rows.length > limit && last !== undefined ? cursor(binding, 'a', page + 1, keyOf(last)) : null;
  const prev = page > 1 && first !== undefined ? cursor(binding, 'b', page - 1, keyOf(first)) : null;
  return { data: shown.map(map), page, limit, has_more: next !== null, next_cursor: next, prev_cursor: prev };
}

function linkHeader(request: FastifyRequest, page: ListPage<unknown>): string | undefined {
  const [path = '', search = ''] = request.url.split('?');
  const links: string[] = [];
  const at = (value: string) => {
    const params = new URLSearchParams(search);
    params.delete('page');
    params.set('cursor', value);
    params.set('limit', String(page.limit));
    return `<${path}?${params.toString()}>`;
  };
  if (page.next_cursor !== null) links.push(`${at(page.next_cursor)}; rel="next"`);
  if (page.prev_cursor !== null) links.push(`${at(page.prev_cursor)}; rel="prev"`);
  return links.length > 0 ? links.join(', ') : undefined;
}

function intParam(value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^\d+$/.test(value)) throw new Problem(400, 'not an integer');
  const n = Number(value);
  if (n < min || n > max) throw new Problem(422, 'out of range');
  return n;
}

// --- products ----------------------------------------------------------------------------------

interface ProductRow {
  id: number;
  sku: string;
  name: string;
  description: string | null;
  category: string;
  price: number;
  currency: string;
  stock: number;
  metadata: Record<string, string>;
  archived_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const toProduct = (r: ProductRow) => ({
  id: r.id,
  sku: r.sku,
  name: r.name,
  description: r.description,
  category: r.category,
  price: r.price,
  currency: r.currency,
  stock: r.stock,
  metadata: r.metadata,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

// --- orders ------------------------------------------------------------------------------------

interface OrderRow {
  id: number;
  customer_id: number;
  address: string | null;
  status: string;
  discount_code: string | null;
  currency: string;
  metadata: Record<string, string>;
  created_at: Date;
  updated_at: Date;
}

interface ItemRow {
  id: number;
  order_id: number;
  position: number;
  product_id: number;
  quantity: number;
  unit_price: number;
}

/** The `_links` each status allows (server/modules/orders/orders.rules.ts's table, written out). */
function orderLinks(id: number, status: string): Record<string, { href: string; method: string }> {
  const self = `${API}/orders/${id}`;
  const links: Record<string, { href: string; method: string }> = { self: { href: self, method: 'GET' } };
  if (status === 'draft') links.confirm = { href: `${self}/confirm`, method: 'POST' };
  if (status === 'draft' || status === 'confirmed' || status === 'paid') links.cancel = { href: `${self}/cancel`, method: 'POST' };
  if (status === 'confirmed') links.pay = { href: `${API}/payments`, method: 'POST' };
  if (status === 'paid') links['send-to-fulfillment'] = { href: `${self}/send-to-fulfillment`, method: 'POST' };
  if (status === 'paid' || status === 'shipped' || status === 'delivered' || status === 'completed') {
    links.fulfillments = { href: `${self}/fulfillments`, method: 'GET' };
  }
  // The link order notes declare on every order (server/modules/notes/notes.router.ts).
  links.notes = { href: `${self}/notes`, method: 'GET' };
  return links;
}

function toOrder(row: OrderRow, items: ItemRow[]) {
  const lines = [...items]
    .sort((a, b) => a.position - b.position)
    .map((i) => ({ product_id: i.product_id, quantity: i.quantity, unit_price: i.unit_price, line_total: i.unit_price * i.quantity }));
  return {
    id: row.id,
    customer_id: row.customer_id,
    items: lines,
    address: row.address,
    status: row.status,
    discount_code: row.discount_code,
    currency: row.currency,
    total: lines.reduce((sum, line) => sum + line.line_total, 0),
    metadata: row.metadata,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    _links: orderLinks(row.id, row.status),
  };
}

/** Customers see their own orders only (someone else's looks missing). */
const mayRead = (caller: Caller, row: OrderRow): boolean => caller.role !== 'customer' || caller.userId === row.customer_id;

type Tx = postgres.TransactionSql;

interface ItemSpec {
  product_id: number;
  quantity: number;
}

function readItems(body: unknown): ItemSpec[] {
  const items = isPlainObject(body) ? body.items : undefined;
  if (!Array.isArray(items) || items.length > 100) throw new Problem(422, 'items');
  return items.map((item: unknown) => {
    if (!isPlainObject(item) || !Number.isInteger(item.product_id) || !Number.isInteger(item.quantity)) throw new Problem(422, 'item');
    return { product_id: Number(item.product_id), quantity: Number(item.quantity) };
  });
}

// --- the server --------------------------------------------------------------------------------

const app = Fastify({
  logger: false,
  genReqId: (request) => {
    const incoming = request.headers['x-request-id'];
    return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  },
});

app.addHook('onRequest', async (request, reply) => {
  reply.header('x-request-id', request.id);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
});

app.setErrorHandler((error, _request, reply) => {
  const status = error instanceof Problem ? error.status : 500;
  if (status === 500) console.error(error);
  return reply
    .code(status)
    .header('content-type', 'application/problem+json')
    .send(JSON.stringify({ type: 'about:blank', status, title: error instanceof Error ? error.message : 'error' }));
});

app.get('/api/health', async (_request, reply) => {
  await sql`select 1`;
  return reply.header('cache-control', 'no-store').send({ status: 'ok' });
});

app.get<{ Params: { id: string } }>(`${API}/products/:id`, async (request, reply) => {
  const id = intParam(request.params.id, 0, 1, 2_147_483_647);
  const [row] = await sql<ProductRow[]>`
    select id, sku, name, description, category, price, currency, stock, metadata, archived_at, created_at, updated_at
    from products where products.id = ${id}`;
  if (!row) throw new Problem(404, 'not found');
  if (row.archived_at) throw new Problem(410, 'gone');
  const product = toProduct(row);
  return send(reply, 200, CACHE.public, product, product.updated_at);
});

app.get<{ Querystring: Record<string, string | undefined> }>(`${API}/products`, async (request, reply) => {
  const { category } = request.query;
  const page = intParam(request.query.page, 1, 1, 1_000_000);
  const limit = intParam(request.query.limit, 20, 1, 100);
  // listProducts: live products, the category filter, a total order by id, one extra row for has_more.
  const rows = await sql<ProductRow[]>`
    select id, sku, name, description, category, price, currency, stock, metadata, archived_at, created_at, updated_at
    from products
    where (products.archived_at is null ${category === undefined ? sql`` : sql`and products.category = ${category}`})
    order by products.id asc limit ${limit + 1} offset ${(page - 1) * limit}`;
  const binding = JSON.stringify(['products', category ?? null, '']);
  const body = listPage(binding, rows, page, limit, (r) => [r.id], toProduct);
  const link = linkHeader(request, body);
  if (link) reply.header('link', link);
  return send(reply, 200, CACHE.public, body);
});

app.get<{ Params: { id: string } }>(`${API}/orders/:id`, async (request, reply) => {
  const caller = await authenticate(request);
  const id = intParam(request.params.id, 0, 1, 2_147_483_647);
  // getOrder -> loadOrder: the order, then its lines in position order; visibility after.
  const [row] = await sql<OrderRow[]>`
    select id, customer_id, address, status, discount_code, currency, metadata, created_at, updated_at from orders where orders.id = ${id}`;
  if (!row) throw new Problem(404, 'not found');
  const items = await sql<ItemRow[]>`
    select id, order_id, position, product_id, quantity, unit_price from order_items
    where order_items.order_id = ${id} order by order_items.position asc`;
  if (!mayRead(caller, row)) throw new Problem(404, 'not found');
  const order = toOrder(row, items);
  return send(reply, 200, CACHE.private, order, order.updated_at);
});

app.get<{ Querystring: Record<string, string | undefined> }>(`${API}/orders`, async (request, reply) => {
  const caller = await authenticate(request);
  const page = intParam(request.query.page, 1, 1, 1_000_000);
  const limit = intParam(request.query.limit, 20, 1, 100);
  const own = caller.role === 'customer' ? caller.userId : undefined;
  // listOrders: newest first, the page's orders, then all their lines in one query.
  const rows = await sql<OrderRow[]>`
    select id, customer_id, address, status, discount_code, currency, metadata, created_at, updated_at from orders
    ${own === undefined ? sql`` : sql`where orders.customer_id = ${own}`}
    order by orders.created_at desc, orders.id desc limit ${limit + 1} offset ${(page - 1) * limit}`;
  const ids = rows.slice(0, limit).map((r) => r.id);
  const items = ids.length
    ? await sql<ItemRow[]>`select id, order_id, position, product_id, quantity, unit_price from order_items where order_items.order_id in ${sql(ids)}`
    : [];
  const byOrder = new Map<number, ItemRow[]>();
  for (const item of items) byOrder.set(item.order_id, [...(byOrder.get(item.order_id) ?? []), item]);
  const body = listPage('orders:any:', rows, page, limit, (r) => [r.created_at.toISOString(), r.id], (r) => toOrder(r, byOrder.get(r.id) ?? []));
  const link = linkHeader(request, body);
  if (link) reply.header('link', link);
  return send(reply, 200, CACHE.private, body);
});

app.post<{ Body: unknown }>(`${API}/orders`, async (request, reply) => {
  const caller = await authenticate(request);
  if (caller.role !== 'customer' || caller.userId === undefined) throw new Problem(403, 'customers only here');
  const customerId = caller.userId;
  const specs = readItems(request.body);
  const body = isPlainObject(request.body) ? request.body : {};
  const address = typeof body.address === 'string' ? body.address : null;
  const currency = typeof body.currency === 'string' ? body.currency : 'USD';
  const order = await sql.begin(async (tx: Tx) => {
    // resolveCustomer -> lockUser, priceItems, the insert, writeItems (delete, then insert).
    const [user] = await tx`select id from users where users.id = ${customerId} for key share`;
    if (!user) throw new Problem(401, 'unknown user');
    const wanted = [...new Set(specs.map((s) => s.product_id))];
    const found = wanted.length ? await tx<{ id: number; price: number; currency: string; archived_at: Date | null }[]>`
      select id, price, currency, archived_at from products where products.id in ${tx(wanted)}` : [];
    const byId = new Map(found.map((p) => [p.id, p]));
    const priced = specs.map((s, position) => {
      const product = byId.get(s.product_id);
      if (!product || product.archived_at || product.currency !== currency) throw new Problem(422, 'bad item');
      return { product_id: s.product_id, quantity: s.quantity, unit_price: product.price, position };
    });
    const total = priced.reduce((sum, p) => sum + p.unit_price * p.quantity, 0);
    const [row] = await tx<OrderRow[]>`
      insert into orders (customer_id, address, status, discount_code, currency, total)
      values (${customerId}, ${address}, 'draft', ${null}, ${currency}, ${total})
      returning id, customer_id, address, status, discount_code, currency, metadata, created_at, updated_at`;
    if (!row) throw new Error('insert returned no row');
    await tx`delete from order_items where order_items.order_id = ${row.id}`;
    // One multi-row insert, as drizzle's `.values([...])`.
    const values = priced.map((p) => ({ order_id: row.id, position: p.position, product_id: p.product_id, quantity: p.quantity, unit_price: p.unit_price }));
    const items: ItemRow[] = values.length
      ? await tx<ItemRow[]>`
          insert into order_items ${tx(values)}
          returning id, order_id, position, product_id, quantity, unit_price`
      : [];
    return toOrder(row, items);
  });
  reply.header('location', `${API}/orders/${order.id}`);
  return send(reply, 201, CACHE.noStore, order, order.updated_at);
});

interface PaymentRow {
  id: number;
  order_id: number;
  amount: string | number;
  currency: string;
  method: string;
  status: string;
  amount_refunded: string | number;
  metadata: Record<string, string>;
  created_at: Date;
  updated_at: Date;
}

app.post<{ Body: unknown }>(`${API}/payments`, async (request, reply) => {
  const caller = await authenticate(request);
  const body = isPlainObject(request.body) ? request.body : {};
  const orderId = Number(body.order_id);
  const amount = Number(body.amount);
  const method = body.method;
  if (!Number.isInteger(orderId) || !Number.isInteger(amount) || (method !== 'card' && method !== 'bank_transfer' && method !== 'wallet')) {
    throw new Problem(422, 'bad payment');
  }
  const idempotencyKey = request.headers['idempotency-key'];
  if (typeof idempotencyKey !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(idempotencyKey)) throw new Problem(400, 'Idempotency-Key required here');
  const scope = `user:${caller.sub}`;
  const fingerprint = hash('sha256', canonicalJson(request.body), 'base64url');
  // server/trpc/idempotency.ts: claim the key, run the operation (its transaction a savepoint),
  // store the output, all in one transaction. Replays are not a measured case.
  const payment = await sql.begin(async (tx: Tx) => {
    await tx.unsafe('set local lock_timeout = 10000');
    await tx.unsafe('set local statement_timeout = 15000');
    const claimed = await tx`
      insert into idempotency_keys (scope, key, operation, fingerprint, response_status, response_body, expires_at)
      values (${scope}, ${idempotencyKey}, 'payments.create', ${fingerprint}, 0, '', now() + make_interval(hours => ${24}))
      on conflict do nothing returning key`;
    if (claimed.length === 0) throw new Problem(409, 'key already used (replay is not part of the baseline)');
    await tx`set local lock_timeout to default`;
    await tx`set local statement_timeout to default`;
    const result = await tx.savepoint(async (sp) => {
      const [order] = await sp<OrderRow[]>`
        select id, customer_id, address, status, discount_code, currency, metadata, created_at, updated_at
        from orders where orders.id = ${orderId} for update`;
      if (!order) throw new Problem(404, 'not found');
      const items = await sp<ItemRow[]>`
        select id, order_id, position, product_id, quantity, unit_price from order_items
        where order_items.order_id = ${orderId} order by order_items.position asc`;
      if (!mayRead(caller, order)) throw new Problem(404, 'not found');
      if (order.status !== 'confirmed') throw new Problem(409, 'not payable');
      const total = items.reduce((sum, i) => sum + i.unit_price * i.quantity, 0);
      if (amount !== total) throw new Problem(422, 'amount');
      const [row] = await sp<PaymentRow[]>`
        insert into payments (order_id, amount, currency, method, status)
        values (${order.id}, ${amount}, ${order.currency}, ${method}, 'captured')
        returning id, order_id, amount, amount_refunded, currency, method, status, metadata, created_at, updated_at`;
      if (!row) throw new Error('payment insert returned no row');
      // transition -> saveOrder: every writable field and updated_at, the stored row back.
      await sp`
        update orders set customer_id = ${order.customer_id}, address = ${order.address}, status = 'paid',
          discount_code = ${order.discount_code}, currency = ${order.currency}, total = ${total}, updated_at = ${new Date()}
        where orders.id = ${order.id}
        returning id, customer_id, address, status, discount_code, currency, metadata, created_at, updated_at`;
      return {
        id: row.id,
        order_id: row.order_id,
        amount: Number(row.amount),
        amount_refunded: Number(row.amount_refunded),
        currency: row.currency,
        method: row.method,
        status: row.status,
        metadata: row.metadata,
        created_at: row.created_at.toISOString(),
        updated_at: row.updated_at.toISOString(),
      };
    });
    await tx`
      update idempotency_keys set response_status = 201, response_body = ${JSON.stringify(result)}
      where idempotency_keys.scope = ${scope} and idempotency_keys.key = ${idempotencyKey}`;
    return result;
  });
  reply.header('location', `${API}/payments/${payment.id}`);
  return send(reply, 201, CACHE.noStore, payment, payment.updated_at);
});

await app.listen({ host: '127.0.0.1', port });

async function stop(): Promise<void> {
  await app.close();
  await sql.end({ timeout: 5 });
  process.exit(0);
}
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
