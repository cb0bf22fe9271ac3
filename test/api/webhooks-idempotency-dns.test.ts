/**
 * Creating a webhook endpoint with an Idempotency-Key (docs/webhooks.md#endpoint-urls): the URL's
 * host is resolved before the key's transaction begins, so no connection (nor the key's lock) is
 * held while DNS answers; the check is still made once, and made again at delivery.
 */
import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { buildApp } from '../../server/app.ts';
import type { Database } from '../../server/db/client.ts';
import { createUserRow, TEST_JWT, type TestUser } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { expectProblem } from '../helpers/problems.ts';
import { WEBHOOK_ENDPOINTS } from '../helpers/webhooks.ts';

/** Every statement sent, in order. */
const statements: string[] = [];
/** For each resolution: the host, and whether the key's transaction had begun (its statements sent). */
const resolutions: { host: string; inKeyTransaction: boolean }[] = [];
const answers = new Map<string, LookupAddress[]>([
  ['hooks.example.com', [{ address: '93.184.216.34', family: 4 }]],
  ['internal.example.com', [{ address: '10.0.0.5', family: 4 }]],
]);
const touchesKey = (statement: string) => /idempotency_keys|lock_timeout/.test(statement);

let database: Database;
let app: Awaited<ReturnType<typeof buildApp>>;
let admin: TestUser;

beforeAll(async () => {
  database = await createTestDatabase({ onQuery: (text) => statements.push(text) });
  const tokens = new TokenService(TEST_JWT);
  app = await buildApp({
    database,
    tokens,
    webhooks: {
      production: true,
      allowedHosts: [],
      worker: false,
      resolveHost: async (host) => {
        resolutions.push({ host, inKeyTransaction: statements.some(touchesKey) });
        // A slow resolver: answers on a later turn of the event loop.
        await new Promise((resolve) => setImmediate(resolve));
        const found = answers.get(host);
        if (!found) throw new Error(`${host}: not found`);
        return found;
      },
    },
  });
  await app.ready();
  admin = await createUserRow(database.db, tokens, 'admin');
});
afterAll(async () => {
  await app?.close();
});

const post = (url: string, key: string) =>
  app.inject({ method: 'POST', url: WEBHOOK_ENDPOINTS, payload: { url, enabled_events: ['*'] }, headers: { authorization: `Bearer ${admin.token}`, 'idempotency-key': key } });

describe('with an Idempotency-Key, the host is resolved before the key is taken', () => {
  it('a public host: resolved once, before any statement of the key, then created', async () => {
    statements.length = 0;
    resolutions.length = 0;
    const res = await post('https://hooks.example.com/in', 'dns-first-1');
    expect(res.statusCode, res.body).toBe(201);
    expect(resolutions).toEqual([{ host: 'hooks.example.com', inKeyTransaction: false }]);
    // The key was taken (so the order above means something), after the resolution.
    expect(statements.some(touchesKey)).toBe(true);
  });

  it('a host resolving to a private address: 422 naming url, resolved before the key too', async () => {
    statements.length = 0;
    resolutions.length = 0;
    const problem = expectProblem(await post('https://internal.example.com/in', 'dns-first-2'), 422, 'validation-error');
    expect(problem.errors?.map((e) => e.field)).toEqual(['url']);
    expect(resolutions).toEqual([{ host: 'internal.example.com', inKeyTransaction: false }]);
  });

  it('a replay answers the stored endpoint whatever the host resolves to now', async () => {
    const first = await post('https://hooks.example.com/replayed', 'dns-first-3');
    expect(first.statusCode, first.body).toBe(201);
    answers.set('hooks.example.com', [{ address: '10.0.0.6', family: 4 }]);
    const again = await post('https://hooks.example.com/replayed', 'dns-first-3');
    answers.set('hooks.example.com', [{ address: '93.184.216.34', family: 4 }]);
    // The replay's own status (docs/api.md#idempotency), never the 422 a new resolution would give.
    expect(again.statusCode, again.body).toBeLessThan(300);
    expect(again.json<{ id: number }>().id).toBe(first.json<{ id: number }>().id);
  });
});
