/**
 * Every shape of the order list is answered from an index, in the list's order, never by a
 * sequential scan or a sort of every match (issue 12: lists that stay flat to a million orders).
 *
 * On PostgreSQL, with 30,000 seeded orders and fresh statistics: the statements the service runs
 * for each shape (everyone's or a customer's; any status, one status, `active`; page 1, a page by
 * number, after and before a cursor) are captured as they execute, then prepared and explained
 * both as a custom plan and as the generic plan a prepared statement settles on after five runs.
 * The payments list (everyone's, newest first) likewise, on a payment for each paid order; the
 * products (id order, all and one category, each single-field sort) and users lists on 30,000
 * rows of each.
 */
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedOrders } from '../../scripts/bench/seed-orders.ts';
import type { Db } from '../../server/db/client.ts';
import * as schema from '../../server/db/schema.ts';
import { listOrders } from '../../server/modules/orders/orders.list.ts';
import { listPayments } from '../../server/modules/payments/payments.service.ts';
import { listProducts } from '../../server/modules/products/products.service.ts';
import { listUsers } from '../../server/modules/users/users.service.ts';
import { CursorCodec } from '../../server/lib/cursors.ts';
import type { OrderListQuery } from '../../server/modules/orders/orders.schemas.ts';
import type { ProductListQuery } from '../../server/modules/products/products.schemas.ts';
import { testCallerIdentity } from '../../server/testing.ts';
import { copyTemplateDatabase, onPostgres } from '../helpers/db.ts';

interface Captured {
  query: string;
  params: unknown[];
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];

describe.runIf(onPostgres)('list plans at 30,000 orders (PostgreSQL)', () => {
  let drop: () => Promise<void>;
  let sql: postgres.Sql;
  let db: Db;
  let customerId: number;
  const captured: Captured[] = [];
  const cursors = new CursorCodec('list-plans');

  beforeAll(async () => {
    const copy = await copyTemplateDatabase();
    drop = copy.drop;
    sql = postgres(copy.url, { max: 2, onnotice: () => {} });
    const products = await sql<{ id: number }[]>`
      insert into products (sku, name, category, price, currency, stock)
      select 'PLAN-' || n, 'Product ' || n, 'plans', 100 * n, 'USD', 1000 from generate_series(1, 10) as n
      returning id`;
    const seeded = await seedOrders(sql, { orders: 30_000, customers: 30, productIds: products.map((p) => p.id), tag: 'plans' });
    customerId = seeded.customerIds[0] as number;
    // A payment for each order paid or later, a minute after the order.
    await sql`
      insert into payments (order_id, amount, currency, method, created_at)
      select id, 1000, currency, 'card', created_at + interval '1 minute'
      from orders where status in ('paid', 'shipped', 'delivered')`;
    await sql`analyze payments`;
    // A catalogue of 30,000 products in 30 categories, and 30,000 more users.
    await sql`
      insert into products (sku, name, category, price, currency, stock)
      select 'CAT-' || n, 'Catalogue ' || n, 'cat-' || (n % 30), 100 + n % 977, 'USD', 10 from generate_series(1, 30000) as n`;
    await sql`
      insert into users (email, name, role, password_hash)
      select 'plan-user-' || n || '@example.com', 'Plan user ' || n, 'customer', 'not-a-password-hash' from generate_series(1, 30000) as n`;
    await sql`analyze products`;
    await sql`analyze users`;
    db = drizzle(sql, { schema, logger: { logQuery: (query, params) => captured.push({ query, params }) } }) as unknown as Db;
  }, 120_000);

  afterAll(async () => {
    await sql?.end();
    await drop?.();
  });

  /** Runs one list request and answers the statements it ran. */
  async function statementsOf(role: 'admin' | 'customer', query: Partial<OrderListQuery>) {
    const caller = testCallerIdentity(role === 'admin' ? { role: 'admin', userId: 1 } : { role: 'customer', userId: customerId });
    const from = captured.length;
    const page = await listOrders({ db, caller, query: { limit: 20, ...query }, cursors });
    expect(page.data.length).toBeGreaterThan(0);
    return { page, ran: captured.slice(from) };
  }

  async function explain(statement: Captured, mode: 'force_custom_plan' | 'force_generic_plan'): Promise<PlanNode> {
    const reserved = await sql.reserve();
    try {
      await reserved.unsafe(`set plan_cache_mode = ${mode}`);
      await reserved.unsafe(`prepare shape as ${statement.query}`);
      // EXPLAIN, a utility statement, takes no bound parameters: the values go in as typed literals.
      const [prepared] = await reserved<{ types: string[] }[]>`select parameter_types::text[] as types from pg_prepared_statements where name = 'shape'`;
      const literal = (value: unknown) => (typeof value === 'number' ? String(value) : `'${String(value).replace(/'/g, "''")}'`);
      const args = statement.params.map((value, i) => `${literal(value)}::${String(prepared?.types[i])}`).join(', ');
      const [row] = await reserved.unsafe(`explain (format json) execute shape${args ? `(${args})` : ''}`);
      const plan = (row?.['QUERY PLAN'] as { Plan: PlanNode }[] | undefined)?.[0]?.Plan;
      if (!plan) throw new Error('no plan');
      return plan;
    } finally {
      await reserved.unsafe('deallocate all');
      await reserved.unsafe('reset plan_cache_mode');
      reserved.release();
    }
  }

  /**
   * Each shape and the indexes made for it (drizzle/0003_list_indexes.sql). One active status
   * (`paid`, a third of the orders) may also be read from the active partial index, filtered:
   * the planner's choice for a custom plan, which knows the status is one of them.
   */
  const shapes: [string, 'admin' | 'customer', string | undefined, string[]][] = [
    ['everyone’s orders', 'admin', undefined, ['orders_created_idx']],
    ['everyone’s, one status', 'admin', 'paid', ['orders_status_created_idx', 'orders_active_created_idx']],
    ['everyone’s, active', 'admin', 'active', ['orders_active_created_idx']],
    ['a customer’s orders', 'customer', undefined, ['orders_customer_created_idx']],
    ['a customer’s, one status', 'customer', 'paid', ['orders_customer_status_created_idx', 'orders_customer_active_created_idx']],
    ['a customer’s, active', 'customer', 'active', ['orders_customer_active_created_idx']],
  ];

  it.each(shapes)('%s: every page kind reads its index in order (custom and generic plans)', async (_name, role, status, indexes) => {
    const filter = status === undefined ? {} : { status };
    const first = await statementsOf(role, filter);
    const deep = await statementsOf(role, { ...filter, page: 5 });
    const after = await statementsOf(role, { ...filter, cursor: String(deep.page.next_cursor) });
    const before = await statementsOf(role, { ...filter, cursor: String(after.page.prev_cursor) });
    expect(before.page.data.map((o) => o.id)).toEqual(deep.page.data.map((o) => o.id));

    // Page 1 and pages by cursor: the shape's own index read in the list's order, stopping after the page.
    for (const { ran } of [first, after, before]) {
      const statement = ran.find((s) => /from "orders"/.test(s.query));
      expect(statement, 'the list statement ran').toBeDefined();
      for (const mode of ['force_custom_plan', 'force_generic_plan'] as const) {
        const plan = nodes(await explain(statement as Captured, mode));
        const described = plan.map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`).join(' > ');
        expect(plan.filter((n) => n['Node Type'] === 'Seq Scan'), `${mode}: ${described}`).toEqual([]);
        expect(plan.filter((n) => n['Node Type'] === 'Sort' || n['Node Type'] === 'Incremental Sort'), `${mode}: ${described}`).toEqual([]);
        expect(plan.some((n) => /^Index (Only )?Scan/.test(n['Node Type']) && indexes.includes(String(n['Index Name']))), `${mode}: ${described}`).toBe(true);
      }
    }
    // A page by number reads and skips every row before it (that is what cursors are for): the
    // planner may then sort a customer's matches, but never scans the table.
    const byNumber = deep.ran.find((s) => /from "orders"/.test(s.query));
    for (const mode of ['force_custom_plan', 'force_generic_plan'] as const) {
      const plan = nodes(await explain(byNumber as Captured, mode));
      expect(plan.filter((n) => n['Node Type'] === 'Seq Scan'), mode).toEqual([]);
    }
    // The page's lines: one index lookup per order, not a scan of every line.
    const lines = first.ran.find((s) => /from "order_items"/.test(s.query));
    expect(lines).toBeDefined();
    const plan = nodes(await explain(lines as Captured, 'force_generic_plan'));
    expect(plan.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
  });

  /**
   * The sorts and filters of issue 25: each sort, everyone's and a customer's (`customer_id` for
   * an admin is the customer's shape), reads its own index in order on page 1 and by cursor both
   * ways; a creation range with the default sort is a range of the created index.
   */
  const sortShapes: [string, 'admin' | 'customer', Partial<OrderListQuery>, string[]][] = [
    ['everyone’s, sort=created_at', 'admin', { sort: 'created_at' }, ['orders_created_idx']],
    ['everyone’s, sort=updated_at', 'admin', { sort: 'updated_at' }, ['orders_updated_idx']],
    ['everyone’s, sort=-updated_at', 'admin', { sort: '-updated_at' }, ['orders_updated_idx']],
    ['everyone’s, sort=total', 'admin', { sort: 'total' }, ['orders_total_idx']],
    ['everyone’s, sort=-total', 'admin', { sort: '-total' }, ['orders_total_idx']],
    ['a customer’s, sort=-updated_at', 'customer', { sort: '-updated_at' }, ['orders_customer_updated_idx']],
    ['a customer’s, sort=total', 'customer', { sort: 'total' }, ['orders_customer_total_idx']],
    ['a customer’s, sort=-total', 'customer', { sort: '-total' }, ['orders_customer_total_idx']],
    ['everyone’s, a creation range', 'admin', { created_gte: '2000-01-01T00:00:00Z', created_lt: '2100-01-01T00:00:00Z' }, ['orders_created_idx']],
    ['a customer’s, a creation range', 'customer', { created_gte: '2000-01-01T00:00:00Z' }, ['orders_customer_created_idx']],
  ];

  it.each(sortShapes)('%s: page 1 and pages by cursor read the index in order (custom and generic plans)', async (_name, role, filter, indexes) => {
    const first = await statementsOf(role, filter);
    const after = await statementsOf(role, { ...filter, cursor: String(first.page.next_cursor) });
    const before = await statementsOf(role, { ...filter, cursor: String(after.page.prev_cursor) });
    expect(before.page.data.map((o) => o.id)).toEqual(first.page.data.map((o) => o.id));
    for (const [i, { ran }] of [first, after, before].entries()) {
      const statement = ran.find((s) => /from "orders"/.test(s.query)) as Captured;
      for (const mode of ['force_custom_plan', 'force_generic_plan'] as const) {
        const plan = nodes(await explain(statement, mode));
        const described = plan.map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`).join(' > ');
        expect(plan.filter((n) => n['Node Type'] === 'Seq Scan'), `${mode}: ${described}`).toEqual([]);
        // The page back before a cursor, to page 1, is a page's worth of a customer's rows: the
        // planner may fetch that range of the shape's index by bitmap and sort it (as for products).
        const sortedRange = i === 2 && plan.some((n) => n['Node Type'] === 'Bitmap Index Scan' && indexes.includes(String(n['Index Name'])));
        if (!sortedRange) {
          expect(plan.filter((n) => n['Node Type'] === 'Sort' || n['Node Type'] === 'Incremental Sort'), `${mode}: ${described}`).toEqual([]);
          expect(plan.some((n) => /^Index (Only )?Scan/.test(n['Node Type']) && indexes.includes(String(n['Index Name']))), `${mode}: ${described}`).toBe(true);
        }
      }
    }
  });

  it('metadata[key]=value reads the GIN index (containment), never the table, alone or with any sort (custom and generic plans)', async () => {
    // The seed gives order n the metadata {"erp_id": "ERP-<n>"}: one order matches.
    for (const sort of [undefined, '-total', 'updated_at'] as const) {
      const { page, ran } = await statementsOf('admin', { metadata: { erp_id: 'ERP-42' }, ...(sort ? { sort } : {}) });
      expect(page.data.map((o) => o.metadata)).toEqual([{ erp_id: 'ERP-42' }]);
      const statement = ran.find((s) => /from "orders"/.test(s.query)) as Captured;
      for (const mode of ['force_custom_plan', 'force_generic_plan'] as const) {
        const plan = nodes(await explain(statement, mode));
        const described = plan.map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`).join(' > ');
        expect(plan.filter((n) => n['Node Type'] === 'Seq Scan'), `${mode}: ${described}`).toEqual([]);
        expect(plan.some((n) => n['Node Type'] === 'Bitmap Index Scan' && n['Index Name'] === 'orders_metadata_idx'), `${mode}: ${described}`).toBe(true);
      }
    }
  });

  it('payments, newest first: page 1 and pages by cursor read payments_created_idx backwards (custom and generic plans)', async () => {
    const admin = testCallerIdentity({ role: 'admin', userId: 1 });
    const run = async (query: { cursor?: string }) => {
      const from = captured.length;
      const page = await listPayments({ db, caller: admin, query: { limit: 20, ...query }, cursors });
      expect(page.data.length).toBe(20);
      return { page, statement: captured.slice(from).find((s) => /from "payments"/.test(s.query)) as Captured };
    };
    const first = await run({});
    const after = await run({ cursor: String(first.page.next_cursor) });
    const before = await run({ cursor: String(after.page.prev_cursor) });
    expect(before.page.data.map((p) => p.id)).toEqual(first.page.data.map((p) => p.id));
    for (const { statement } of [first, after, before]) {
      for (const mode of ['force_custom_plan', 'force_generic_plan'] as const) {
        const plan = nodes(await explain(statement, mode));
        const described = plan.map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`).join(' > ');
        expect(plan.filter((n) => n['Node Type'] === 'Seq Scan'), `${mode}: ${described}`).toEqual([]);
        expect(plan.filter((n) => n['Node Type'] === 'Sort' || n['Node Type'] === 'Incremental Sort'), `${mode}: ${described}`).toEqual([]);
        expect(plan.some((n) => /^Index (Only )?Scan/.test(n['Node Type']) && n['Index Name'] === 'payments_created_idx'), `${mode}: ${described}`).toBe(true);
      }
    }
  });

  /** Page 1 and both cursor directions of a list, each statement explained in both plan modes. */
  async function expectIndexedPages(
    table: string,
    run: (cursor?: string) => Promise<{ next_cursor: string | null; prev_cursor: string | null; data: { id: number }[] }>,
    /**
     * `sortedBefore`: the page before a cursor may sort what its index range holds. Back to page 1,
     * that is a page's worth of rows, which the planner may fetch by bitmap and sort when the
     * column is not in the table's physical order (a price): no sort of the whole list.
     */
    expected: { indexes: string[]; sorted: boolean; sortedBefore?: boolean; indexesBefore?: string[] },
  ) {
    const pages: { ids: number[]; statement: Captured }[] = [];
    const load = async (cursor?: string) => {
      const from = captured.length;
      const page = await run(cursor);
      expect(page.data.length).toBe(20);
      pages.push({ ids: page.data.map((row) => row.id), statement: captured.slice(from).find((st) => st.query.includes(`from "${table}"`)) as Captured });
      return page;
    };
    const first = await load();
    const second = await load(String(first.next_cursor));
    await load(String(second.prev_cursor));
    expect(pages[2]?.ids).toEqual(pages[0]?.ids);
    for (const [i, { statement }] of pages.entries()) {
      for (const mode of ['force_custom_plan', 'force_generic_plan'] as const) {
        const plan = nodes(await explain(statement, mode));
        const described = plan.map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`).join(' > ');
        expect(plan.filter((n) => n['Node Type'] === 'Seq Scan'), `${mode}: ${described}`).toEqual([]);
        const indexes = (i === 2 && expected.indexesBefore) || expected.indexes;
        expect(plan.some((n) => /^(Index|Index Only|Bitmap Index) Scan/.test(n['Node Type']) && indexes.includes(String(n['Index Name']))), `${mode}: ${described}`).toBe(true);
        if (!expected.sorted && !(i === 2 && expected.sortedBefore)) expect(plan.filter((n) => /Sort/.test(n['Node Type'])), `${mode}: ${described}`).toEqual([]);
      }
    }
  }

  it('products in id order read the primary key in order; one category reads an index, never the table (custom and generic plans)', async () => {
    await expectIndexedPages('products', (cursor) => listProducts({ db, query: { limit: 20, ...(cursor ? { cursor } : {}) }, cursors }), { indexes: ['products_pkey'], sorted: false });
    // A category (1,000 of 30,000): its index then a sort of its matches, or the primary key in
    // order filtered by the category, as the planner weighs them.
    await expectIndexedPages('products', (cursor) => listProducts({ db, query: { limit: 20, category: 'cat-7', ...(cursor ? { cursor } : {}) }, cursors }), {
      indexes: ['products_category_idx', 'products_pkey'],
      sorted: true,
    });
  });

  it('products sorted by one field read that field\'s index in order, never the table nor a sort of the catalogue (custom and generic plans)', async () => {
    // `-price` is `price desc, id asc` (every sort ends with id ascending): its own index. Page 1
    // and the page after it read their index in order; the page back before a cursor reads one of
    // the field's two indexes (see `sortedBefore`).
    for (const field of ['name', 'price', 'created_at']) {
      const index = `products_${field === 'created_at' ? 'created' : field}`;
      for (const [sort, own] of [[field, `${index}_idx`], [`-${field}`, `${index}_desc_idx`]] as const) {
        await expectIndexedPages('products', (cursor) => listProducts({ db, query: { limit: 20, sort, ...(cursor ? { cursor } : {}) }, cursors }), {
          indexes: [own],
          sorted: false,
          sortedBefore: true,
          indexesBefore: [`${index}_idx`, `${index}_desc_idx`],
        });
      }
    }
  });

  it('product filters read their indexes, never the table (custom and generic plans)', async () => {
    // The catalogue grown to 100,000 (docs/performance.md's size), a few out of stock (1 in 100):
    // what `in_stock=false` finds by its partial index.
    await sql`
      insert into products (sku, name, category, price, currency, stock)
      select 'CAT-' || n, 'Catalogue ' || n, 'cat-' || (n % 30), 100 + n % 977, 'USD', 10 from generate_series(30001, 100000) as n`;
    await sql`update products set stock = 0 where sku like 'CAT-%' and substr(sku, 5)::int % 100 = 0`;
    await sql`analyze products`;
    const page = (query: Omit<Partial<ProductListQuery>, 'cursor'>) => (cursor?: string) =>
      listProducts({ db, query: { limit: 20, ...query, ...(cursor ? { cursor } : {}) }, cursors });
    // A rare text (11 of 100,000 SKUs contain "-2999", most of them last in id order): the trigram
    // index, then a sort of its few matches; never the primary key walked to the end.
    for (const query of [{ q: '-2999' }, { q: 'catalogue 2999', sort: '-price' }, { q: '-2999', in_stock: true, price_gte: 100 }]) {
      const from = captured.length;
      expect((await page(query)()).data.length).toBeGreaterThan(0);
      const statement = captured.slice(from).find((st) => st.query.includes('from "products"')) as Captured;
      for (const mode of ['force_custom_plan', 'force_generic_plan'] as const) {
        const plan = nodes(await explain(statement, mode));
        const described = plan.map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`).join(' > ');
        expect(plan.some((n) => n['Node Type'] === 'Bitmap Index Scan' && n['Index Name'] === 'products_search_trgm_idx'), `${JSON.stringify(query)} ${mode}: ${described}`).toBe(true);
        expect(plan.filter((n) => n['Node Type'] === 'Seq Scan'), `${mode}: ${described}`).toEqual([]);
      }
    }
    // Paged by cursor (111 contain "-123"): each page the trigram index's matches, sorted, or the
    // primary key's range past the cursor when the sampled statistics make it look narrower.
    await expectIndexedPages('products', page({ q: '-123' }), { indexes: ['products_search_trgm_idx', 'products_pkey'], sorted: true });
    // A price range (about 1,100 products, spread over the catalogue): the price index's range,
    // or the primary key in order while the page fills early, as the planner weighs them.
    await expectIndexedPages('products', page({ price_gte: 500, price_lte: 510 }), { indexes: ['products_price_idx', 'products_price_desc_idx', 'products_pkey'], sorted: true });
    // Out of stock (1,000): their own partial index, in id order.
    await expectIndexedPages('products', page({ in_stock: false }), { indexes: ['products_out_of_stock_idx'], sorted: false });
    // In stock (most of them): the primary key in order, filtered.
    await expectIndexedPages('products', page({ in_stock: true }), { indexes: ['products_pkey'], sorted: false });
  });

  it('users in id order read the primary key in order (custom and generic plans)', async () => {
    await expectIndexedPages('users', (cursor) => listUsers({ db, query: { limit: 20, ...(cursor ? { cursor } : {}) }, cursors }), { indexes: ['users_pkey'], sorted: false });
  });
});
