/**
 * `Database.listen` outlasts an outage (docs/api.md#live-updates): postgres.js makes its LISTEN
 * connection again when it is lost, and LISTENs again once the database is back, calling
 * `onListen` so the caller (the live updates, the webhook worker) reads what it missed. Its
 * attempts are spaced by a random, growing back-off (up to 20 s), so this waits that long.
 * 3.4.9's `listen` would forget a listener whose LISTEN again failed (it swallows that error); in
 * every outage tried (server stopped, connections refused, a host that never answers, the server
 * refusing logins, a connection cut during the LISTEN) it did not: it LISTENed again once it
 * could. Were an upgrade to drop the listener, a process would hear nothing more until it
 * restarted, and this fails.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase, type Database } from '../../server/db/client.ts';
import { copyTemplateDatabase, onPostgres } from '../helpers/db.ts';
import { TcpProxy } from '../helpers/tcp-proxy.ts';

const CHANNEL = 'order_service_listen_test';
/** Long enough for several of postgres.js's attempts to connect again to be refused. */
const OUTAGE_MS = 5_000;

describe.skipIf(!onPostgres)('a LISTEN outlasts a database outage (PostgreSQL)', () => {
  let copy: { url: string; drop: () => Promise<void> };
  let notifier: postgres.Sql;

  beforeAll(async () => {
    copy = await copyTemplateDatabase();
    notifier = postgres(copy.url, { max: 1, onnotice: () => {} });
  });

  afterAll(async () => {
    await notifier?.end();
    await copy?.drop();
  });

  /** Notifies `payload` until `heard` holds it: a notification sent while nobody listens is gone. */
  async function expectHeard(heard: string[], payload: string): Promise<void> {
    await vi.waitFor(
      async () => {
        if (!heard.includes(payload)) await notifier.notify(CHANNEL, payload);
        expect(heard).toContain(payload);
      },
      { timeout: 45_000, interval: 300 },
    );
  }

  it('hears again after its connection is cut and connections are refused for seconds, twice over', async () => {
    const url = new URL(copy.url);
    const proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port || 5432) });
    url.port = String(proxy.port);
    const database: Database = await openDatabase({ url: url.toString(), dataDir: '', poolSize: 2, migrate: false });
    try {
      const heard: string[] = [];
      let listens = 0;
      await database.listen(CHANNEL, (payload) => heard.push(payload), () => (listens += 1));
      expect(listens).toBe(1);
      await expectHeard(heard, 'before');

      for (const round of [1, 2]) {
        const listensBefore = listens;
        await proxy.down();
        await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
        await proxy.up();
        await expectHeard(heard, `after outage ${round}`);
        expect(listens).toBeGreaterThan(listensBefore);
      }
      expect(heard).toEqual(['before', 'after outage 1', 'after outage 2']);
    } finally {
      await database.close();
      await proxy.down();
    }
  }, 120_000);
});
