/**
 * CI fails on a dead documentation anchor (issue 37 item 3, docs/architecture.md#checks-that-keep-the-docs-true):
 * every Markdown anchor cited in the code, scripts, tests, client package, examples, docs and
 * configuration is a heading of its file, and every cited file exists (test/helpers/doc-anchors.ts).
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../server/lib/project-root.ts';
import { anchorsOf, deadAnchors, scannedFiles, slugOf } from '../helpers/doc-anchors.ts';

const described = (root: string) => deadAnchors(root).map(({ file, line, cited, reason }) => `${file}:${line} ${cited}: ${reason}`);

/** A Markdown path, built from parts so that this file cites none of the planted ones itself. */
const md = (name: string, anchor?: string) => `${name}.md${anchor === undefined ? '' : `#${anchor}`}`;
/** A section of a file named in words, built the same way. */
const inWords = (file: string, words: string) => `${file} "${words}"`;

describe('headings become anchors by GitHub rules', () => {
  it('lower case, punctuation dropped, spaces to hyphens, code and links by their text', () => {
    expect(slugOf('Reads, lists and caching')).toBe('reads-lists-and-caching');
    expect(slugOf('Live updates: orders.onChange')).toBe('live-updates-ordersonchange');
    expect(slugOf('A back end: client credentials')).toBe('a-back-end-client-credentials');
    expect(slugOf('`npm run demo` and [the demo](x)')).toBe('npm-run-demo-and-the-demo');
    expect(slugOf('Health, readiness and stopping')).toBe('health-readiness-and-stopping');
  });

  it('a repeated heading takes -1, -2; a heading in a code fence is none', () => {
    const anchors = anchorsOf('# Title\n## Notes\n## Notes\n## Notes\n```sh\n# not a heading\n```\n<a id="kept"></a>\n');
    expect([...anchors].sort()).toEqual(['kept', 'notes', 'notes-1', 'notes-2', 'title']);
  });
});

describe('every cited anchor resolves', () => {
  it('none is dead in the project as it stands', () => {
    expect(described(projectRoot)).toEqual([]);
  });

  const copy = mkdtempSync(join(tmpdir(), 'doc-anchors-'));
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it('a dead anchor, a missing file and an unknown section planted in a copy are each reported where they stand', () => {
    for (const file of scannedFiles(projectRoot)) {
      mkdirSync(dirname(join(copy, file)), { recursive: true });
      cpSync(join(projectRoot, file), join(copy, file));
    }
    expect(described(copy), 'the copy holds what the project holds').toEqual(described(projectRoot));

    writeFileSync(
      join(copy, 'server/planted.ts'),
      [
        `// Planted: a section that is not there (${md('docs/api', 'events')} and #no-such-section),`,
        `// a file that is not there (${md('docs/nowhere', 'events')}), a heading in words (${inWords('README', 'No such part')}).`,
        `// Not read: an address elsewhere (https://github.com/porsager/postgres/blob/master/${md('README', 'nothing')}).`,
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(copy, md('docs/planted')),
      `# Planted\n\nSee [the API](${md('api', 'events')}), [below](#planted-too), [a file](${md('../nothing')}) and [elsewhere](https://example.com/${md('x', 'y')}).\n`,
    );

    const planted = described(copy).filter((line) => line.includes('planted'));
    expect(planted).toEqual([
      `${md('docs/planted')}:3 #planted-too: ${md('docs/planted')} has no heading #planted-too`,
      `${md('docs/planted')}:3 ${md('../nothing')}: ${md('nothing')} does not exist`,
      `server/planted.ts:1 ${md('docs/api', 'no-such-section')}: docs/api.md has no heading #no-such-section`,
      `server/planted.ts:2 ${md('docs/nowhere', 'events')}: ${md('docs/nowhere')} does not exist`,
      `server/planted.ts:2 ${inWords('README', 'No such part')}: README.md has no heading beginning "No such part"`,
    ]);
  });
});
