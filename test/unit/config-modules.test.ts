/**
 * What a module declares (server/modules/module.ts, docs/architecture.md#adding-a-module) is the
 * one place its settings and jobs are named: .env.example documents each module's variables as its
 * declaration says, and no file outside the webhooks and events modules names their settings or
 * jobs (app.ts, config.ts, main.ts, the context and the doors read the module list instead).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../server/lib/project-root.ts';
import { envExampleSection } from '../../server/modules/module.ts';
import { modules } from '../../server/modules/modules.ts';

describe('.env.example documents every module\'s settings from its declaration', () => {
  const example = readFileSync(join(projectRoot, '.env.example'), 'utf8');
  const declared = modules.flatMap((module) => (module.settings ? [[module.name, module.settings] as const] : []));

  it('the webhooks and events modules declare settings', () => {
    expect(declared.map(([name]) => name)).toEqual(expect.arrayContaining(['events', 'webhooks']));
  });

  it.each(declared)('%s: its section is in .env.example as its declaration renders it', (_name, settings) => {
    // On failure, the expected section is the text to paste into .env.example.
    expect(example).toContain(envExampleSection(settings));
  });
});

/** Every .ts file under `dir`, as paths from the project root. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(projectRoot, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => relative(projectRoot, join(projectRoot, dir, file)));
}

/** The names of the webhooks' and events' settings and jobs: their variables, types, keys and files. */
const THEIR_NAMES = /WEBHOOK_[A-Z_]+|EVENT_RETENTION_DAYS|WebhookWorker|webhookSettings|WebhookSettings|WebhookEndpointSettings|webhook-targets|webhooks\.targets|webhooks\.settings|webhooks\.worker|eventSettings|EventSettings|purgeOldEvents|retentionDays/;

describe('no file outside the webhooks and events modules names their settings or jobs', () => {
  it('a grep over server/ finds them only in server/modules/webhooks/ and server/modules/events/', () => {
    const naming = sourceFiles('server')
      .filter((file) => !file.startsWith('server/modules/webhooks/') && !file.startsWith('server/modules/events/'))
      .flatMap((file) =>
        readFileSync(join(projectRoot, file), 'utf8')
          .split('\n')
          .flatMap((line, index) => (THEIR_NAMES.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
      );
    expect(naming).toEqual([]);
  });

  it('the grep finds a name planted outside them (it can fail)', () => {
    expect(THEIR_NAMES.test("const { worker } = options.settings.get(webhookSettings); // app.ts")).toBe(true);
    expect(THEIR_NAMES.test('  EVENT_RETENTION_DAYS: z.coerce.number(),')).toBe(true);
  });
});
