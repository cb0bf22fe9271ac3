/**
 * docs/api.md#idempotency: "Across any number of service instances on one database the operation runs
 * at most once per key." Two real service processes on one PostgreSQL database; 20 concurrent
 * payments with one key, split across both. PostgreSQL only: PGlite is one process's database.
 */
import { randomBytes } from 'node:crypto';
import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { openDatabase, type Database } from '../../server/db/client.ts';
import { payments } from '../../server/modules/payments/payments.table.ts';
import { createUserRow, TEST_JWT, type TestUser } from '../helpers/app.ts';
import { onPostgres } from '../helpers/db.ts';
import { productInput } from '../helpers/products.ts';
import { callService as call, createPostgresDatabase, serviceEnv, START_TIMEOUT_MS, startService, stopService, type Service } from '../helpers/service-process.ts';

const CONCURRENT = 20;

describe.skipIf(!onPostgres)('one idempotency key across two service processes on one database (docs/api.md#idempotency)', () => {
  const services: Service[] = [];
  const tokens = new TokenService(TEST_JWT);
  let drop: (() => Promise<void>) | undefined;
  let database: Database;
  let admin: TestUser;
  let customer: TestUser;

  beforeAll(async () => {
    const created = await createPostgresDatabase();
    drop = created.drop;
    const { url } = created;
    database = await openDatabase({ url, dataDir: '' });
    admin = await createUserRow(database.db, tokens, 'admin');
    customer = await createUserRow(database.db, tokens, 'customer');

    const env = serviceEnv({ url });
    // One after the other: each compiles the service at start, and migrations run once at a time.
    for (let i = 0; i < 2; i++) services.push(await startService(env));
  }, 2 * START_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    await Promise.all(services.map(stopService));
    await database?.close();
    await drop?.();
  });

  it(`${CONCURRENT} concurrent payments with one key, half to each process: exactly one 201, the rest 200 replays of it, one payment row`, async () => {
    const [one, two] = services;
    if (!one || !two) throw new Error('services missing');
    const product = await call(one.base, 'POST', '/products', admin.token, productInput({ price: 1250, stock: 100 }));
    expect(product.status).toBe(201);
    const order = await call(two.base, 'POST', '/orders', customer.token, { items: [{ product_id: product.body.id, quantity: 2 }], address: '1 Main St, Springfield' });
    expect(order.status).toBe(201);
    expect((await call(one.base, 'POST', `/orders/${String(order.body.id)}/confirm`, customer.token)).status).toBe(200);

    const key = `pay-${randomBytes(8).toString('hex')}`;
    const body = { order_id: order.body.id, amount: order.body.total, method: 'card' };
    const answers = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) => call((i % 2 === 0 ? one : two).base, 'POST', '/payments', customer.token, body, key)),
    );

    const statuses = answers.map((a) => a.status).sort((a, b) => a - b);
    expect(statuses, JSON.stringify(answers.map((a) => a.body))).toEqual([...Array.from({ length: CONCURRENT - 1 }, () => 200), 201]);
    const created = answers.find((a) => a.status === 201);
    if (!created) throw new Error('no 201');
    for (const replay of answers.filter((a) => a.status === 200)) {
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toEqual(created.body);
      expect(replay.headers.get('location')).toBe(created.headers.get('location'));
      expect(replay.headers.get('etag')).toBe(created.headers.get('etag'));
    }
    const [rows] = await database.db.select({ n: count() }).from(payments).where(eq(payments.orderId, Number(order.body.id)));
    expect(rows?.n).toBe(1);
    const paid = await call(two.base, 'GET', `/orders/${String(order.body.id)}`, customer.token);
    expect(paid.body.status).toBe('paid');
  }, 60_000);
});
