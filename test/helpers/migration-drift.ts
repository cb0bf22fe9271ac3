/**
 * Stale migrations (issue 37 item 3, docs/architecture.md#checks-that-keep-the-docs-true): the
 * migrations in drizzle/ must be what the schema generates. drizzle-kit's own generate runs on a
 * copy of drizzle/ (a configuration of its own whose `out` is the copy, with drizzle.config.ts's
 * `schema` globs), and whatever it writes there is the drift: a table, column or index the schema
 * declares and no migration makes. drizzle/ itself is never touched.
 *
 * drizzle-kit exits 0 even when it fails, so success is read from what it says ("No schema
 * changes"), and anything else it says without writing a file is thrown. It asks on the terminal
 * whether a column was renamed; with no terminal it would wait, so it runs with no input and a
 * bound, and a question is drift too (a generate by hand answers it).
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface MigrationDrift {
  /** Files drizzle-kit wrote or changed in the copy of drizzle/ (the drift), relative to it. */
  written: string[];
  /** The SQL of the migrations it wrote. */
  sql: string;
  /** What drizzle-kit said. */
  output: string;
}

/** Under vitest's 60 s per test; drizzle-kit needs about 1 s of CPU. */
const GENERATE_BOUND_MS = 45_000;

/** Every file under `folder` with its content, by path relative to it. */
function contentsOf(folder: string, prefix = ''): Map<string, string> {
  const found = new Map<string, string>();
  for (const entry of readdirSync(join(folder, prefix), { withFileTypes: true })) {
    const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) for (const [inner, text] of contentsOf(folder, path)) found.set(inner, text);
    else found.set(path, readFileSync(join(folder, path), 'utf8'));
  }
  return found;
}

/**
 * Runs drizzle-kit's generate for the schema of the project at `root` (plus `extraSchema`, paths
 * or globs, for a test that plants a change) against a copy of its drizzle/, and answers what it
 * wrote: nothing when the migrations are what the schema generates.
 */
export async function migrationDrift(root: string, options: { extraSchema?: string[] } = {}): Promise<MigrationDrift> {
  const { default: config } = (await import(pathToFileURL(join(root, 'drizzle.config.ts')).href)) as { default: { schema: string | string[]; out?: string; dialect: string } };
  const globs = [...(Array.isArray(config.schema) ? config.schema : [config.schema]), ...(options.extraSchema ?? [])];
  const work = mkdtempSync(join(tmpdir(), 'migration-drift-'));
  try {
    const migrations = join(root, config.out ?? 'drizzle');
    cpSync(migrations, join(work, 'drizzle'), { recursive: true });
    // drizzle-kit reads `out` relative to the working folder (an absolute one it prefixes with ./),
    // so it runs in `work` with the schema's globs made absolute.
    const schema = globs.map((glob) => (isAbsolute(glob) ? glob : join(root, glob)));
    writeFileSync(join(work, 'drizzle.config.json'), JSON.stringify({ dialect: config.dialect, schema, out: './drizzle' }));
    const before = contentsOf(join(work, 'drizzle'));
    const output = await new Promise<string>((resolve, reject) => {
      const child = execFile(
        join(root, 'node_modules/.bin/drizzle-kit'),
        ['generate', '--config=drizzle.config.json'],
        { cwd: work, timeout: GENERATE_BOUND_MS, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
        (error, stdout, stderr) => {
          const said = `${stdout}${stderr}`;
          if (error && !error.killed) reject(new Error(`drizzle-kit generate failed: ${error.message}\n${said}`));
          else resolve(error?.killed ? `${said}\n(drizzle-kit had not finished after ${GENERATE_BOUND_MS} ms, and was stopped: a question (a column renamed?) waits for an answer)` : said);
        },
      );
      child.stdin?.end();
    });
    const after = contentsOf(join(work, 'drizzle'));
    const written = [...after].filter(([path, text]) => before.get(path) !== text).map(([path]) => path);
    if (written.length === 0 && !/No schema changes/.test(output)) {
      throw new Error(`drizzle-kit generate wrote nothing and did not say "No schema changes":\n${output}`);
    }
    const sql = written.filter((path) => path.endsWith('.sql')).map((path) => after.get(path)).join('\n');
    return { written: written.sort(), sql, output };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

