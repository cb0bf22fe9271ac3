/**
 * Third parties lint the OpenAPI document before they trust it: Redocly CLI (recommended rules,
 * redocly.yaml) and Spectral (spectral:oas, .spectral.yaml) on the live `/api/openapi.json` find
 * nothing, neither errors nor warnings. Both run as the dev dependencies a developer would use.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.ts';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const bin = (name: string) => join(root, 'node_modules/.bin', name);

/** The linters' own output, whatever their exit status (they exit 1 on findings). */
async function lint(command: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run(command, args, {
      cwd: root,
      maxBuffer: 32 * 1024 * 1024,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    });
    return stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    if (stdout) return stdout;
    throw new Error(`${command} failed without a report: ${stderr ?? String(error)}`);
  }
}

// The document does not depend on the database: lint it once, in the PGlite project.
describe.skipIf(process.env.TEST_DB === 'postgres')('the OpenAPI document passes third-party linters with zero findings', () => {
  let dir: string;
  let file: string;

  const t = useTestApp();
  beforeAll(async () => {
    const res = await t.request({ method: 'GET', url: '/api/openapi.json' });
    expect(res.statusCode).toBe(200);
    dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
    file = join(dir, 'openapi.json');
    writeFileSync(file, res.body);
  });
  afterAll(async () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('@redocly/cli lint (recommended, redocly.yaml): no error, no warning', async () => {
    const output = await lint(bin('redocly'), ['lint', '--config', join(root, 'redocly.yaml'), '--format', 'json', file]);
    const report = JSON.parse(output.slice(output.indexOf('{'))) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; severity: string; message: string; location?: { pointer?: string }[] }[];
    };
    const findings = report.problems.map((p) => `${p.severity} ${p.ruleId} ${p.location?.[0]?.pointer ?? ''}: ${p.message}`);
    expect(findings).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('@stoplight/spectral-cli lint (spectral:oas, .spectral.yaml): no finding of any severity', async () => {
    const output = await lint(bin('spectral'), ['lint', '--ruleset', join(root, '.spectral.yaml'), '--format', 'json', '--quiet', file]);
    const start = output.indexOf('[');
    const findings = (start < 0 ? [] : (JSON.parse(output.slice(start)) as { code: string; severity: number; message: string; path: string[] }[])).map(
      (f) => `${['error', 'warning', 'info', 'hint'][f.severity] ?? f.severity} ${f.code} ${f.path.join('.')}: ${f.message}`,
    );
    expect(output.trim() === '' || start >= 0, `spectral printed no report: ${output}`).toBe(true);
    expect(findings).toEqual([]);
  });
});
