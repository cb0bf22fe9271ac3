/**
 * Issue 23 item 1 (docs/api.md#rate-limits): a limit is protection, not accounting, so counting
 * a request must never cost a database write. Every request below (reads, refusals, a /trpc batch,
 * answers past the limit) is counted, and afterwards no row of any table in the service's schema
 * is newer than the requests: each row version written carries its transaction's id (`xmin`), and
 * every transaction that began after the snapshot taken first has an id at or past that
 * snapshot's `xmax`. Per database, so other databases' work on the same server does not count.
 */
import { sql } from 'drizzle-orm';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { buildApp } from '../../server/app.ts';
import type { Database, Db } from '../../server/db/client.ts';
import { createUserRow, TEST_JWT } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { productInput } from '../helpers/products.ts';

const LIMIT = 5;

/** Rows of `db.execute` on either driver (postgres.js answers an array, PGlite `{ rows }`). */
async function rows<T>(db: Db, query: ReturnType<typeof sql>): Promise<T[]> {
  const result = await db.execute(query);
  return Array.isArray(result) ? (result as T[]) : (result as unknown as { rows: T[] }).rows;
}

/** The id the next transaction to write will get, modulo 2^32 as `xmin` shows it. */
async function nextTransactionId(db: Db): Promise<bigint> {
  const [row] = await rows<{ next: string }>(db, sql`select pg_snapshot_xmax(pg_current_snapshot())::text as next`);
  if (!row) throw new Error('no snapshot');
  return BigInt(row.next) % 2n ** 32n;
}

/** Per table of the service's schema, the rows written by a transaction at or after `since`. */
async function rowsWrittenSince(db: Db, since: bigint): Promise<Record<string, number>> {
  const tables = await rows<{ name: string }>(db, sql`select relname as name from pg_class where relkind = 'r' and relnamespace = 'public'::regnamespace order by relname`);
  const written: Record<string, number> = {};
  for (const { name } of tables) {
    const [row] = await rows<{ n: number | string }>(db, sql`select count(*) as n from ${sql.identifier(name)} where xmin::text::bigint >= ${since.toString()}::bigint`);
    const n = Number(row?.n ?? 0);
    if (n > 0) written[name] = n;
  }
  return written;
}

describe('no request outside /oauth writes to the database to count it (issue 23 item 1, docs/api.md#rate-limits)', () => {
  let database: Database;
  let app: FastifyInstance;
  const tokens = new TokenService(TEST_JWT);
  let productId = 0;
  let customerToken = '';

  beforeAll(async () => {
    database = await createTestDatabase();
    app = await buildApp({ database, tokens, rateLimit: { max: LIMIT, timeWindow: '1 minute' } });
    await app.ready();
    const admin = await createUserRow(database.db, tokens, 'admin');
    customerToken = (await createUserRow(database.db, tokens, 'customer')).token;
    const created = await app.inject({ method: 'POST', url: '/api/v1/products', headers: { authorization: `Bearer ${admin.token}` }, payload: productInput() });
    expect(created.statusCode).toBe(201);
    productId = (created.json() as { id: number }).id;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('reads, refusals, a /trpc batch and answers past the limit are counted, and no row is written', async () => {
    const since = await nextTransactionId(database.db);
    const statuses: number[] = [];
    const answer = async (request: InjectOptions) => {
      const res = await app.inject(request);
      expect(res.headers['ratelimit-limit']).toBe(String(LIMIT));
      statuses.push(res.statusCode);
    };
    // Anonymous product reads from one address, past its limit; then a customer's (by token).
    for (let i = 0; i < LIMIT + 2; i++) await answer({ method: 'GET', url: `/api/v1/products/${productId}`, remoteAddress: '10.23.1.1' });
    for (let i = 0; i < LIMIT + 2; i++) await answer({ method: 'GET', url: `/api/v1/products/${productId}`, headers: { authorization: `Bearer ${customerToken}` } });
    await answer({ method: 'GET', url: '/api/v1/products/999999', remoteAddress: '10.23.1.2' });
    await answer({ method: 'GET', url: '/api/v1/products', remoteAddress: '10.23.1.3', headers: { authorization: 'Bearer not.a.token' } });
    await answer({ method: 'GET', url: '/no/such/thing', remoteAddress: '10.23.1.4' });
    await answer({ method: 'GET', url: `/trpc/products.list,products.list?batch=1&input=${encodeURIComponent('{"0":{},"1":{}}')}`, remoteAddress: '10.23.1.5' });

    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 200, 200, 200, 200, 200, 429, 429, 404, 401, 404, 200]);
    expect(await rowsWrittenSince(database.db, since)).toEqual({});
  });

  it('the check sees a write: a product created after the snapshot is found', async () => {
    const admin = await createUserRow(database.db, tokens, 'admin');
    const since = await nextTransactionId(database.db);
    const created = await app.inject({ method: 'POST', url: '/api/v1/products', headers: { authorization: `Bearer ${admin.token}` }, payload: productInput() });
    expect(created.statusCode).toBe(201);
    expect(await rowsWrittenSince(database.db, since)).toMatchObject({ products: 1 });
  });
});
