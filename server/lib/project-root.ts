/**
 * The project's folder (package.json, drizzle/), found from this module's own place: the same
 * whether the service runs from its TypeScript sources (tsx: server/lib/) or from the production
 * bundle `npm start` builds (dist/server/main.mjs), where every module shares one URL.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'drizzle'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no project folder (package.json and drizzle/) above ${from}`);
  }
}

export const projectRoot = findRoot(dirname(fileURLToPath(import.meta.url)));
