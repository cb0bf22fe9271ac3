/**
 * `npm start` builds the service into one bundle (esbuild) and runs it with `npm run start:prod`,
 * the Node flags and the bundle alone: no TypeScript loader in production (about 30 MB less
 * memory, issue 12), and no dev dependency (docs/operations.md#installing-for-production;
 * scripts/production-check.sh runs that install in CI). This builds it as `npm run build` does
 * and starts it as `npm run start:prod` does, on this project's database kind:
 * the migrations, the docs assets and the lazily imported PGlite must all be found from the
 * bundle's place.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCommand } from '../../scripts/start-command.ts';
import { onPostgres } from '../helpers/db.ts';
import { createPostgresDatabase, serviceEnv, startService, START_TIMEOUT_MS, stopService, type Service } from '../helpers/service-process.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('the production bundle (npm run start:prod)', () => {
  let service: Service;
  let cleanup: () => Promise<void> = async () => {};

  beforeAll(async () => {
    await promisify(execFile)('npm', ['run', 'build', '--silent'], { cwd: ROOT });
    let env: NodeJS.ProcessEnv;
    if (onPostgres) {
      const database = await createPostgresDatabase();
      env = serviceEnv({ url: database.url });
      cleanup = database.drop;
    } else {
      const dataDir = mkdtempSync(join(tmpdir(), 'order-service-bundle-'));
      env = serviceEnv({ dataDir });
      cleanup = async () => rmSync(dataDir, { recursive: true, force: true });
    }
    service = await startService(env, startCommand(ROOT));
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    if (service) await stopService(service);
    await cleanup();
  });

  it('starts from dist/, migrated, and serves the API, the document and the docs page', async () => {
    expect(startCommand(ROOT).bundle).toBe('dist/server/main.mjs');
    const list = await fetch(`${service.base}/api/v1/products`);
    expect(list.status, service.output()).toBe(200);
    expect(await list.json()).toMatchObject({ data: [], page: 1 });
    const document = await fetch(`${service.base}/api/openapi.json`);
    expect(document.status).toBe(200);
    expect(((await document.json()) as { info: { version: string } }).info.version).toMatch(/^\d+\.\d+\.\d+/);
    const docs = await fetch(`${service.base}/api/docs`);
    expect(docs.status).toBe(200);
    const script = /<script src="([^"]+)"/.exec(await docs.text())?.[1];
    expect(script).toBeDefined();
    expect((await fetch(new URL(String(script), `${service.base}/api/docs/`))).status).toBe(200);
  });

  it('stops gracefully on SIGTERM', async () => {
    await stopService(service);
    expect(service.child.exitCode, service.output()).toBe(0);
  });
});
