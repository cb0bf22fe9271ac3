/**
 * The database's side of writing an event, without the service (docs/performance.md#events):
 * pgbench runs transactions that write one order event as the outbox does, in variants that leave
 * out one part each, interleaved, and this prints each variant's transactions per second and
 * PostgreSQL's CPU per transaction (./postgres-cpu.ts).
 *
 *   DATABASE_URL=postgres://...  (a scratch database, migrated: `npm run migrate`; its events are truncated)
 *   CLIENTS=4 SECONDS=8 ROUNDS=3 npx tsx scripts/bench/events-pgbench.ts
 *
 * Needs pgbench (PostgreSQL's server package) and PostgreSQL on this machine.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { postgresCpuNs } from './postgres-cpu.ts';

const url = process.env.DATABASE_URL;
if (!url?.startsWith('postgres')) throw new Error('DATABASE_URL: a migrated scratch PostgreSQL database');
const clients = Number(process.env.CLIENTS ?? 4);
const seconds = Number(process.env.SECONDS ?? 8);
const rounds = Number(process.env.ROUNDS ?? 3);
const pgbench = ['17', '16', '15'].map((v) => `/usr/lib/postgresql/${v}/bin/pgbench`).find((path) => existsSync(path));
if (!pgbench) throw new Error('pgbench not found under /usr/lib/postgresql/<version>/bin');

// An order's representation, about the size the service writes for order.created.
const data = JSON.stringify({
  object: {
    id: 123456,
    customer_id: 42,
    status: 'pending',
    currency: 'EUR',
    total: 12345,
    shipping_address: '12 Example Street, London N1 9GU',
    items: [1, 2, 3].map((i) => ({ id: i, product_id: 1000 + i, quantity: 2, unit_price: 1000, line_total: 2000 })),
    metadata: {},
    version: 1,
    created_at: '2026-11-26T21:00:00.000Z',
    updated_at: '2026-11-26T21:00:00.000Z',
  },
});
const row = `('evt_' || md5(:r::text || random()::text), 'order.created', :r, '${data}'::text::json)`;
const insert = `INSERT INTO events (id, type, order_id, data) VALUES ${row}`;
const notifying = `WITH inserted AS (${insert} RETURNING id) SELECT pg_notify('order_service_events', id) FROM inserted`;

interface Variant {
  name: string;
  trigger: boolean;
  /** The script after BEGIN. */
  body: string[];
}
const variants: Variant[] = [
  { name: 'row and its indexes', trigger: false, body: [`${insert};`, 'COMMIT;'] },
  { name: '+ fan-out trigger', trigger: true, body: [`${insert};`, 'COMMIT;'] },
  { name: '+ NOTIFY in the transaction (ships)', trigger: true, body: [`${notifying};`, 'COMMIT;'] },
  { name: '+ NOTIFY after the commit', trigger: true, body: [`${insert};`, 'COMMIT;', "SELECT pg_notify('order_service_events', 'evt_sent_after_commit');"] },
];

const dir = mkdtempSync(join(tmpdir(), 'events-pgbench-'));
function script(variant: Variant): string {
  const file = join(dir, `${variants.indexOf(variant)}.sql`);
  writeFileSync(file, ['\\set r random(1, 1000000000)', 'BEGIN;', ...variant.body, ''].join('\n'));
  return file;
}

const sql = postgres(url, { max: 1, onnotice: () => {} });

/**
 * Waits until pgbench's backends have exited and been reaped: one read while they exit would
 * count a backend neither as live nor among the postmaster's children.
 */
async function backendsGone(): Promise<void> {
  for (;;) {
    const [row] = await sql<{ others: number }[]>`select count(*)::int as others from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
    if (row?.others === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
}
const target = new URL(url);
const env = { ...process.env, PGPASSWORD: decodeURIComponent(target.password) };
const args = ['-h', target.hostname, '-p', target.port || '5432', '-U', decodeURIComponent(target.username), '-n', '-M', 'prepared', '-c', String(clients), '-j', String(Math.min(2, clients)), '-T', String(seconds)];
const results = new Map<string, { tps: number[]; us: number[] }>();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
try {
  for (let round = 1; round <= rounds; round += 1) {
    for (const variant of variants) {
      await sql`truncate events cascade`;
      await sql.unsafe(`alter table events ${variant.trigger ? 'enable' : 'disable'} trigger events_webhook_fan_out`);
      const before = postgresCpuNs();
      const out = execFileSync(pgbench, [...args, '-f', script(variant), target.pathname.slice(1)], { env, encoding: 'utf8' });
      await backendsGone();
      const cpuNs = postgresCpuNs() - before;
      const done = Number(/number of transactions actually processed: (\d+)/.exec(out)?.[1]);
      const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1]);
      const us = cpuNs / 1000 / done;
      const entry = results.get(variant.name) ?? { tps: [], us: [] };
      entry.tps.push(tps);
      entry.us.push(us);
      results.set(variant.name, entry);
      console.log(`round ${round}  ${variant.name.padEnd(38)} ${tps.toFixed(0).padStart(6)} tx/s  postgres ${us.toFixed(0).padStart(4)} µs/tx`);
    }
  }
  console.log(`\nmedians, ${clients} clients:`);
  for (const [name, { tps, us }] of results) console.log(`  ${name.padEnd(38)} ${median(tps).toFixed(0).padStart(6)} tx/s  postgres ${median(us).toFixed(0).padStart(4)} µs/tx`);
} finally {
  await sql`alter table events enable trigger events_webhook_fan_out`;
  await sql`truncate events cascade`;
  await sql.end();
}
