import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, chmodSync, readdirSync, lstatSync, rmSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirectoryLockedError, openDatabase, type Database } from '../../server/db/client.ts';
import { onPostgres } from '../helpers/db.ts';

// These tests open PGlite on disk whatever the project; running them once is enough.
const describeOnce = onPostgres ? describe.skip : describe;

const root = resolve(import.meta.dirname, '../..');
const opened: Database[] = [];
const dirs: string[] = [];

function tempDataDir(): string {
  const parent = mkdtempSync(join(tmpdir(), 'order-service-data-'));
  dirs.push(parent);
  return join(parent, 'data');
}

async function open(dataDir: string): Promise<Database> {
  const database = await openDatabase({ url: undefined, dataDir });
  opened.push(database);
  return database;
}

function* walk(path: string): Generator<string> {
  yield path;
  if (lstatSync(path).isDirectory()) for (const entry of readdirSync(path)) yield* walk(join(path, entry));
}

/** Paths under `dir` that anyone but the owner may read, write or enter. */
function notPrivate(dir: string): string[] {
  return [...walk(dir)].filter((path) => !lstatSync(path).isSymbolicLink() && (lstatSync(path).mode & 0o077) !== 0);
}

afterEach(async () => {
  for (const database of opened.splice(0)) await database.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describeOnce('PGlite data directory is private to the service user (issue 7, item 7)', () => {
  it('creates the directory 0700 and no file under it is group- or other-accessible after writes', async () => {
    const dataDir = tempDataDir();
    const database = await open(dataDir);
    await database.db.execute(sql`create table secrets (hash text)`);
    await database.db.execute(sql`insert into secrets values ('$scrypt$hash')`);
    await database.db.execute(sql`checkpoint`);
    expect(lstatSync(dataDir).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(dataDir, 'pgdata')).length).toBeGreaterThan(0);
    expect(notPrivate(dataDir)).toEqual([]);
  });

  it('tightens an existing world-readable directory and its files at start', async () => {
    const dataDir = tempDataDir();
    await (await open(dataDir)).close();
    opened.pop();
    chmodSync(dataDir, 0o777);
    for (const path of walk(join(dataDir, 'pgdata'))) chmodSync(path, lstatSync(path).isDirectory() ? 0o777 : 0o666);
    mkdirSync(join(dataDir, 'extra'), { mode: 0o755 });
    writeFileSync(join(dataDir, 'extra', 'note'), 'x', { mode: 0o644 });

    await open(dataDir);
    expect(lstatSync(dataDir).mode & 0o777).toBe(0o700);
    // Inside pgdata everything is fixed; elsewhere the 0700 directory keeps others out.
    expect(notPrivate(join(dataDir, 'pgdata'))).toEqual([]);
  });
});

describeOnce('one process per PGlite data directory (issue 7, item 8)', () => {
  it('a second opening in the same process is refused with a clear error; after close it opens again', async () => {
    const dataDir = tempDataDir();
    const first = await open(dataDir);
    expect(existsSync(join(dataDir, 'pgdata.lock'))).toBe(true);
    expect(readFileSync(join(dataDir, 'pgdata.lock'), 'utf8').trim()).toBe(String(process.pid));

    const second = openDatabase({ url: undefined, dataDir });
    await expect(second).rejects.toBeInstanceOf(DataDirectoryLockedError);
    await expect(second).rejects.toThrow(/already open in this process/);
    // The refused opening took nothing: the first still works.
    await expect(first.db.execute(sql`select 1`)).resolves.toBeDefined();

    await first.close();
    opened.pop();
    expect(existsSync(join(dataDir, 'pgdata.lock'))).toBe(false);
    const again = await open(dataDir);
    await expect(again.db.execute(sql`select 1`)).resolves.toBeDefined();
  });

  it('a lock left by a process that is gone is stale and taken over', async () => {
    const dataDir = tempDataDir();
    mkdirSync(dataDir, { recursive: true });
    const dead = spawnSync(process.execPath, ['-e', '']);
    expect(dead.pid).toBeGreaterThan(0);
    writeFileSync(join(dataDir, 'pgdata.lock'), `${dead.pid}\n`);

    const database = await open(dataDir);
    await expect(database.db.execute(sql`select 1`)).resolves.toBeDefined();
    expect(readFileSync(join(dataDir, 'pgdata.lock'), 'utf8').trim()).toBe(String(process.pid));
  });

  // A service process compiles under tsx before it opens the directory: tens of seconds beside a CPU hog.
  it('a second service process on the directory exits non-zero and names the holder', { timeout: 150_000 }, async () => {
    const dataDir = tempDataDir();
    await open(dataDir);
    const child = spawn(join(root, 'node_modules/.bin/tsx'), ['server/main.ts'], {
      cwd: root,
      env: { ...process.env, NODE_ENV: 'development', DATA_DIR: dataDir, DATABASE_URL: '', PORT: '0', LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolveExit) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 140_000);
      child.on('exit', (exitCode) => {
        clearTimeout(timer);
        resolveExit(exitCode);
      });
    });
    expect(code).toBe(1);
    expect(output).toContain(`in use by another process (pid ${process.pid})`);
    expect(output).toContain('one process per data directory');
    expect(output).not.toMatch(/\n\s+at /);
  });
});
