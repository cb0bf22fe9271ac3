/**
 * README's "The code" and docs/architecture.md's layout name every folder of server/ and every
 * module (issue 37 item 3: README named 6 of 10 modules and no server/events/). A new module or
 * folder fails here until both say where it is (docs/architecture.md#checks-that-keep-the-docs-true).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../server/lib/project-root.ts';

const folders = (path: string) =>
  readdirSync(join(projectRoot, path), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

/** The first code block after `heading` in `file`. */
function blockAfter(file: string, heading: string): string {
  const text = readFileSync(join(projectRoot, file), 'utf8');
  const at = text.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`${file} has no heading "${heading}"`);
  const block = /```\n([\s\S]*?)```/.exec(text.slice(at))?.[1];
  if (block === undefined) throw new Error(`${file}: no code block under "${heading}"`);
  return block;
}

const missing = (block: string, names: string[], as: (name: string) => RegExp) => names.filter((name) => !as(name).test(block));

describe.each([
  ['README.md', '## The code'],
  ['docs/architecture.md', '## Layout'],
])('%s (%s) names the tree as it is', (file, heading) => {
  const block = blockAfter(file, heading);

  it('every folder of server/', () => {
    expect(missing(block, folders('server'), (name) => new RegExp(`(^|\\s)${name}/`, 'm'))).toEqual([]);
  });

  it('every module of server/modules/', () => {
    expect(missing(block, folders('server/modules'), (name) => new RegExp(`\\b${name}\\b`))).toEqual([]);
  });
});
