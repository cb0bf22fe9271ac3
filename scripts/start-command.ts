/**
 * What `npm start` runs once it has built (`npm run build`), read from package.json: its
 * `start:prod` script, `node <flags> <bundle>`, which production runs alone without the dev
 * dependencies (docs/operations.md#installing-for-production). The benchmark and the bundle's test
 * start the service the same way from this.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface StartCommand {
  /** Node's flags in the start script (V8 heap settings). */
  flags: string[];
  /** The bundle `npm run build` writes, relative to the project folder. */
  bundle: string;
}

export function startCommand(root: string): StartCommand {
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string | undefined> }).scripts;
  if (!/\bnpm run start:prod\b/.test(scripts.start ?? '')) throw new Error('package.json start no longer runs start:prod: update scripts/start-command.ts');
  const match = /^node ((?:--\S+ )*)(dist\/\S+\.mjs)$/.exec(scripts['start:prod'] ?? '');
  if (!match?.[2]) throw new Error('package.json start:prod no longer runs `node [flags] dist/<bundle>.mjs`: update scripts/start-command.ts');
  return { flags: (match[1] ?? '').split(' ').filter(Boolean), bundle: match[2] };
}
