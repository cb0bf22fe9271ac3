/**
 * CI calls `./.ci/run` on a fresh clone, and the README and docs call `bash scripts/*.sh` or run
 * them directly: git must hold them executable (mode 100755). A commit made through an index
 * that lost the bit turned `./.ci/run` into "Permission denied" on a fresh clone.
 */
import { execFileSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { projectRoot } from '../../server/lib/project-root.ts';

it('.ci/run and every scripts/*.sh are committed executable', () => {
  const listed = execFileSync('git', ['ls-files', '--stage', '--', '.ci/run', 'scripts/*.sh'], { cwd: projectRoot, encoding: 'utf8' });
  const modes = Object.fromEntries(listed.trim().split('\n').map((line) => [line.split('\t')[1], line.split(' ')[0]]));
  expect(Object.keys(modes)).toContain('.ci/run');
  expect(Object.keys(modes).length).toBeGreaterThan(1);
  for (const [path, mode] of Object.entries(modes)) expect(mode, path).toBe('100755');
});
