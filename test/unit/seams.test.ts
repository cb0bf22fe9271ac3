/**
 * CI fails on an undeclared seam (issue 37 item 3, docs/architecture.md#one-seam-per-library):
 * every seam file is listed there and has a tripwire test that imports it, and a reach into a
 * library's private parts lives only in a listed seam file (test/helpers/seams.ts).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../server/lib/project-root.ts';
import { declaredSeams, reachesIn, seamProblems } from '../helpers/seams.ts';

describe('every private reach sits in a declared seam with its tripwire', () => {
  it('the project as it stands has none outside its seams, and each seam its tripwire', () => {
    expect(declaredSeams(projectRoot).map(({ file }) => file)).toContain('server/http/node-server-internals.ts');
    expect(seamProblems(projectRoot)).toEqual([]);
  });

  it('a reach is read from the syntax: a borrowed prototype member, a registered symbol, an underscore member; not a comment, a string or our _links', () => {
    const code = [
      "import { Server } from 'node:net';",
      'Server.prototype.close.call(server);',
      "const brand = Symbol.for('trpc_brand');",
      'const def = (router as { _def?: unknown })._def;',
      "const zod = schema['_zod'];",
      '// Server.prototype.close and x._def in a comment',
      "const text = 'Symbol.for(a) and ._def in a string';",
      'delete order._links;',
      'const plain = Object.getPrototypeOf(value) === Object.prototype;',
    ].join('\n');
    expect(reachesIn('planted.ts', code).map(({ line, code }) => `${line}: ${code}`)).toEqual([
      '2: Server.prototype.close',
      "3: Symbol.for('trpc_brand')",
      '4: (router as { _def?: unknown })._def',
      "5: schema['_zod']",
    ]);
  });

  const copy = mkdtempSync(join(tmpdir(), 'seams-'));
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it('planted in a copy: a reach outside a seam, a seam file nobody lists, a listed seam with no tripwire; each is reported', () => {
    for (const path of ['server', 'client-sdk/src', 'test', 'docs/architecture.md']) {
      cpSync(join(projectRoot, path), join(copy, path), { recursive: true, filter: (source) => !/(^|\/)(node_modules|dist)$/.test(source) });
    }
    expect(seamProblems(copy), 'the copy holds what the project holds').toEqual([]);

    writeFileSync(join(copy, 'server/lib/planted.ts'), "import { Server } from 'node:net';\n\nexport const stop = (server: Server) => Server.prototype.close.call(server);\n");
    writeFileSync(join(copy, 'server/lib/planted-internals.ts'), 'export const reach = (value: { _private: number }) => value._private;\n');
    const doc = join(copy, 'docs/architecture.md');
    writeFileSync(doc, readFileSync(doc, 'utf8').replace('\n## One seam per library\n', '\n## One seam per library\n\n- `server/lib/listed-internals.ts`: planted (`test/unit/listed-internals.test.ts`);\n'));
    writeFileSync(join(copy, 'server/lib/listed-internals.ts'), 'export const listed = 1;\n');

    expect(seamProblems(copy)).toEqual([
      'server/lib/planted-internals.ts: a seam file (*-internals.ts) that docs/architecture.md#one-seam-per-library does not list',
      'server/lib/listed-internals.ts: no test under test/ imports it (its tripwire)',
      'server/lib/listed-internals.ts: its tripwire test/unit/listed-internals.test.ts, named in docs/architecture.md#one-seam-per-library, does not exist',
      "server/lib/planted-internals.ts:1: `value._private` reaches into a library's private parts outside a seam file (docs/architecture.md#one-seam-per-library)",
      "server/lib/planted.ts:3: `Server.prototype.close` reaches into a library's private parts outside a seam file (docs/architecture.md#one-seam-per-library)",
    ]);
  });
});
