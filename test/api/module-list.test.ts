/**
 * A module is mounted by adding it to the module list alone (issue 37, docs/architecture.md#adding-a-module):
 * the test-only jottings module (test/modules/jottings/: a table, a setting, a background job, two
 * procedures) is added with one line, `[...modules, jottingsModule]`, and nothing else names it:
 * its procedures answer on REST and on /trpc, its setting is validated with the configuration and
 * reaches its procedures, and its job runs once the app is ready and stops with it.
 *
 * Its table: a test-only module adds no migration (drizzle.config.ts reads server/modules/ only),
 * so the test creates it on its own database with the table's CREATE statement
 * (JOTTINGS_TABLE_SQL, beside the table) before the app starts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/app.ts';
import { TokenService } from '../../server/auth/tokens.ts';
import type { Database } from '../../server/db/client.ts';
import { ConfigError, loadConfig } from '../../server/config.ts';
import { modules } from '../../server/modules/modules.ts';
import { TEST_JWT } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { jottingsModule, sweeperJournals } from '../modules/jottings/jottings.module.ts';
import { JOTTINGS_TABLE_SQL } from '../modules/jottings/jottings.table.ts';

/** The one line that mounts it. */
const withJottings = [...modules, jottingsModule] as const;

let database: Database;
let app: Awaited<ReturnType<typeof buildApp>>;

beforeAll(async () => {
  database = await createTestDatabase();
  await database.db.execute(JOTTINGS_TABLE_SQL);
  // Its setting from the environment, as main.ts reads it; its job's interval overridden by name.
  const config = loadConfig({ DATABASE_URL: 'memory://', JOTTING_MAX_LENGTH: '12' }, withJottings);
  app = await buildApp({ database, tokens: new TokenService(TEST_JWT), modules: withJottings, settings: config.settings, jottings: { sweepIntervalMs: 20 }, webhooks: { worker: false } });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
});

interface Jotting {
  id: number;
  body: string;
  done: boolean;
}

const restList = async (): Promise<Jotting[]> => (await app.inject({ method: 'GET', url: '/api/v1/jottings' })).json<{ jottings: Jotting[] }>().jottings;
const trpcList = async (): Promise<Jotting[]> => {
  const res = await app.inject({ method: 'GET', url: `/trpc/jottings.list?input=${encodeURIComponent('{}')}` });
  expect(res.statusCode).toBe(200);
  return res.json<{ result: { data: { jottings: Jotting[] } } }>().result.data.jottings;
};

/** Polls `check` until it holds; fails after `ms`. */
async function until(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a module added to the module list alone answers on both doors', () => {
  it('what REST creates, /trpc lists; what /trpc creates, REST lists', async () => {
    const viaRest = await app.inject({ method: 'POST', url: '/api/v1/jottings', payload: { body: 'milk' } });
    expect(viaRest.statusCode).toBe(201);
    const milk = viaRest.json<Jotting>();
    expect(await trpcList()).toContainEqual(milk);

    const viaTrpc = await app.inject({ method: 'POST', url: '/trpc/jottings.create', payload: { body: 'eggs' } });
    expect(viaTrpc.statusCode).toBe(200);
    const eggs = viaTrpc.json<{ result: { data: Jotting } }>().result.data;
    expect(await restList()).toEqual(expect.arrayContaining([milk, eggs]));
  });

  it('its routes are in the OpenAPI document, which the module list builds', async () => {
    const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json<{ paths: Record<string, unknown> }>();
    expect(Object.keys(document.paths)).toContain('/api/v1/jottings');
  });
});

describe('its setting is read with the configuration and reaches its procedures', () => {
  it('JOTTING_MAX_LENGTH=12 refuses a longer jotting on REST and on /trpc', async () => {
    const long = { body: 'a very long jotting' };
    const viaRest = await app.inject({ method: 'POST', url: '/api/v1/jottings', payload: long });
    expect(viaRest.statusCode).toBe(422);
    expect(viaRest.json<{ detail: string }>().detail).toContain('JOTTING_MAX_LENGTH');
    const viaTrpc = await app.inject({ method: 'POST', url: '/trpc/jottings.create', payload: long });
    expect(viaTrpc.statusCode).toBe(422);
    expect(viaTrpc.json<{ error: { data: { problem: { detail: string } } } }>().error.data.problem.detail).toContain('JOTTING_MAX_LENGTH');
  });

  it('a bad value stops the start naming the variable, as the service\'s own do', () => {
    let problems: string[] = [];
    try {
      loadConfig({ DATABASE_URL: 'memory://', JOTTING_MAX_LENGTH: 'many' }, withJottings);
    } catch (error) {
      if (error instanceof ConfigError) problems = error.problems;
    }
    expect(problems.some((problem) => problem.startsWith('JOTTING_MAX_LENGTH:'))).toBe(true);
  });

  it('without the module in the list, its variable is none of the service\'s', () => {
    expect(() => loadConfig({ DATABASE_URL: 'memory://', JOTTING_MAX_LENGTH: 'many' })).not.toThrow();
  });
});

describe('its background job runs once the app is ready and stops with the app', () => {
  it('a done jotting is swept away by its job', async () => {
    const created = await app.inject({ method: 'POST', url: '/api/v1/jottings', payload: { body: 'done', done: true } });
    expect(created.statusCode).toBe(201);
    const { id } = created.json<Jotting>();
    await until('the sweeper to take the done jotting', async () => !(await restList()).some((jotting) => jotting.id === id));
  });

  it('started once the app is ready, stopped as it closes', async () => {
    const other = await createTestDatabase();
    await other.db.execute(JOTTINGS_TABLE_SQL);
    const short = await buildApp({ database: other, tokens: new TokenService(TEST_JWT), modules: withJottings, webhooks: { worker: false } });
    const journal = sweeperJournals.at(-1);
    expect(journal).toEqual([]);
    await short.ready();
    expect(journal).toEqual(['started']);
    await short.close();
    expect(journal).toEqual(['started', 'stopped']);
  });
});
