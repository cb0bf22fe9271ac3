/**
 * Many orders at once, in SQL (`generate_series`), for the list benchmark (`npm run bench --
 * --orders N`) and the query-plan test: in seconds where the REST API would take hours.
 *
 * `customers` new customers share the orders round-robin; statuses follow a fixed mix (most
 * orders finished, a tenth draft) drawn by a hash of the order's number, so every customer has
 * every status; creation times step back 20 s an order from now, three orders sharing each
 * instant (ties the id must break); each order gets two lines of the products given (its
 * `total` their sum) and the metadata `{"erp_id": "ERP-<n>"}` (`<n>` its number in this seed,
 * 1 the newest), for the metadata filter.
 */
import type { Sql } from 'postgres';

export interface SeedOrdersOptions {
  orders: number;
  customers: number;
  /** Existing products the lines name (at least one). */
  productIds: number[];
  /** Distinguishes this seed's customers' e-mail addresses from any earlier seed's. */
  tag: string;
}

export interface SeededOrders {
  customerIds: number[];
  /** Seconds spent, in SQL, on users, orders and lines, their indexes and keys, and VACUUM ANALYZE. */
  seconds: number;
}

/** Of every 20 orders: 2 draft, 2 confirmed, 6 paid, 2 shipped, 4 delivered, 3 completed, 1 cancelled. */
const STATUS_MIX = ['draft', 'draft', 'confirmed', 'confirmed', 'paid', 'paid', 'paid', 'paid', 'paid', 'paid', 'shipped', 'shipped', 'delivered', 'delivered', 'delivered', 'delivered', 'completed', 'completed', 'completed', 'cancelled'];

export async function seedOrders(sql: Sql, options: SeedOrdersOptions): Promise<SeededOrders> {
  const started = performance.now();
  if (options.productIds.length === 0) throw new Error('seedOrders needs at least one product');
  const customers = await sql<{ id: number }[]>`
    insert into users (email, name, role, password_hash)
    select 'seed-' || ${options.tag} || '-' || n || '@example.com', 'Seeded customer ' || n, 'customer', 'not-a-password-hash'
    from generate_series(1, ${options.customers}::int) as n
    returning id`;
  const customerIds = customers.map((row) => row.id).sort((a, b) => a - b);
  await sql.begin(async (tx) => {
    // Millions of rows into seven indexes and through two foreign-key triggers a row are slower
    // than building the indexes afresh and checking each key once, by a join, at the end: the
    // secondary indexes and the foreign keys go for the inserts, remade from their own definitions.
    const indexes = await tx<{ name: string; definition: string }[]>`
      select indexname as name, indexdef as definition from pg_indexes
      where schemaname = current_schema() and tablename in ('orders', 'order_items')
        and indexname not in (select conname from pg_constraint where contype in ('p', 'u'))`;
    const foreignKeys = await tx<{ table: string; name: string; definition: string }[]>`
      select conrelid::regclass::text as table, conname as name, pg_get_constraintdef(oid) as definition from pg_constraint
      where contype = 'f' and conrelid in ('orders'::regclass, 'order_items'::regclass)`;
    for (const index of indexes) await tx.unsafe(`drop index "${index.name}"`);
    for (const key of foreignKeys) await tx.unsafe(`alter table ${key.table} drop constraint "${key.name}"`);
    const ordersStart = (await tx<{ next: number }[]>`select coalesce(max(id), 0) + 1 as next from orders`)[0]?.next ?? 1;
    await tx`
      insert into orders (id, customer_id, address, status, currency, total, metadata, created_at, updated_at)
      select ${ordersStart}::int + n - 1,
             (${customerIds}::int[])[1 + n % ${customerIds.length}::int],
             n || ' Seed Street',
             (${STATUS_MIX}::text[])[1 + abs(hashint4(n)) % ${STATUS_MIX.length}::int],
             'USD',
             -- The sum of the two lines below, each (1 + id % 3) x 100 x (1 + id % 50).
             2 * (1 + (${ordersStart}::int + n - 1) % 3) * 100 * (1 + (${ordersStart}::int + n - 1) % 50),
             jsonb_build_object('erp_id', 'ERP-' || n),
             now() - make_interval(secs => (n - n % 3) * 20),
             now() - make_interval(secs => (n - n % 3) * 20)
      from generate_series(1, ${options.orders}::int) as n`;
    await tx`
      insert into order_items (order_id, position, product_id, quantity, unit_price)
      select o.id, line, (${options.productIds}::int[])[1 + (o.id + line) % ${options.productIds.length}::int], 1 + o.id % 3, 100 * (1 + o.id % 50)
      from orders o cross join generate_series(0, 1) as line
      where o.id >= ${ordersStart}`;
    await tx`set local maintenance_work_mem = '256MB'`;
    // The ids were given: the sequence goes on after them.
    await tx`select setval(pg_get_serial_sequence('orders', 'id'), (select max(id) from orders))`;
    for (const index of indexes) await tx.unsafe(index.definition);
    for (const key of foreignKeys) await tx.unsafe(`alter table ${key.table} add constraint "${key.name}" ${key.definition}`);
  });
  // As a table at rest would be: statistics, and the visibility map that index-only scans read.
  await sql`vacuum (analyze) users, orders, order_items`;
  return { customerIds, seconds: (performance.now() - started) / 1000 };
}
