/**
 * Undeclared seams (issue 37 item 3, docs/architecture.md#one-seam-per-library): a reach into a
 * library's private parts lives in a seam file, which that section lists with its tripwire test.
 *
 * - The seam files are the ones the section lists (each bullet begins with its path) and every
 *   `*-internals.ts` under server/ or client-sdk/src/, which the section must list too.
 * - Each exists, and a test under test/ imports it (its tripwire); every test its bullet names
 *   exists.
 * - Outside them, no file of server/ or client-sdk/src/ reaches into a library's private parts,
 *   read from its syntax (comments and strings never count): a member borrowed from a class's
 *   prototype (`X.prototype.close`), a registered symbol (`Symbol.for(...)`), or a member whose
 *   name begins with an underscore (`._def`, `._`, `['_zod']`), except `_links`, which is ours
 *   (the HAL links of a representation).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import ts from 'typescript';

const SECTION = 'One seam per library';
/** Where code is read for reaches. */
const SOURCES = ['server', 'client-sdk/src'];
/** Generated from the service (types only), not written: no reach can be in them. */
const GENERATED = new Set(['client-sdk/src/rest-types.ts', 'client-sdk/src/app-router.ts']);
/** A member name with a leading underscore that is our own, not a library's. */
const OUR_UNDERSCORE_MEMBERS = new Set(['_links']);

export interface DeclaredSeam {
  /** The seam file, from the root. */
  file: string;
  /** The tests its bullet names. */
  tests: string[];
}

/** The seams docs/architecture.md#one-seam-per-library lists. */
export function declaredSeams(root: string): DeclaredSeam[] {
  const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const start = doc.indexOf(`\n## ${SECTION}\n`);
  if (start < 0) throw new Error(`docs/architecture.md has no section "${SECTION}"`);
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  const bullets = section.split(/\n(?=- )/).filter((part) => part.startsWith('- '));
  return bullets.flatMap((bullet) => {
    const file = /^- `([^`]+\.ts)`/.exec(bullet)?.[1];
    if (file === undefined) return [];
    return [{ file, tests: [...bullet.matchAll(/`(test\/[^`]+\.test\.ts)`/g)].map(([, test]) => test as string) }];
  });
}

function filesUnder(root: string, folder: string, keep: (name: string) => boolean): string[] {
  if (!existsSync(join(root, folder))) return [];
  return readdirSync(join(root, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && keep(entry.name) && !/(^|\/)(node_modules|dist)(\/|$)/.test(entry.parentPath))
    .map((entry) => normalize(join(entry.parentPath, entry.name)).slice(normalize(root).length + 1))
    .sort();
}

/** The files under test/ that import `seam` (a relative import that resolves to it). */
function testsImporting(root: string, seam: string, tests: string[]): string[] {
  return tests.filter((test) => {
    const text = readFileSync(join(root, test), 'utf8');
    return [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g)].some(([, specifier]) => normalize(join(dirname(test), specifier as string)) === seam);
  });
}

export interface Reach {
  file: string;
  line: number;
  /** The code that reaches, as written. */
  code: string;
}

/** Reaches into a library's private parts in one source file, by its syntax. */
export function reachesIn(file: string, text: string): Reach[] {
  // Most files hold none of the three at all: they are not parsed.
  if (!/\.prototype\b|\bSymbol\.for\b|[.'"`]_/.test(text)) return [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: Reach[] = [];
  const add = (node: ts.Node) => found.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, code: node.getText(source) });
  const privateName = (name: string) => name.startsWith('_') && !OUR_UNDERSCORE_MEMBERS.has(name);
  const visit = (node: ts.Node) => {
    if (ts.isPropertyAccessExpression(node)) {
      const name = node.name.text;
      // X.prototype.member: a method borrowed from a class, past what its instances offer.
      if (name === 'prototype' && ts.isPropertyAccessExpression(node.parent) && node.parent.expression === node) add(node.parent);
      else if (privateName(name)) add(node);
      else if (name === 'for' && ts.isIdentifier(node.expression) && node.expression.text === 'Symbol' && ts.isCallExpression(node.parent)) add(node.parent);
    } else if (ts.isElementAccessExpression(node) && ts.isStringLiteralLike(node.argumentExpression) && privateName(node.argumentExpression.text)) {
      add(node);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Everything wrong with the seams of the project at `root`, one line each. */
export function seamProblems(root: string): string[] {
  const problems: string[] = [];
  const seams = declaredSeams(root);
  const declared = new Set(seams.map(({ file }) => file));
  const sources = SOURCES.flatMap((folder) => filesUnder(root, folder, (name) => /\.tsx?$/.test(name) && !name.endsWith('.d.ts')));
  const tests = filesUnder(root, 'test', (name) => /\.test\.tsx?$/.test(name));

  for (const file of sources.filter((path) => path.endsWith('-internals.ts'))) {
    if (!declared.has(file)) problems.push(`${file}: a seam file (*-internals.ts) that docs/architecture.md#one-seam-per-library does not list`);
  }
  for (const seam of seams) {
    if (!existsSync(join(root, seam.file))) {
      problems.push(`${seam.file}: listed in docs/architecture.md#one-seam-per-library, but there is no such file`);
      continue;
    }
    if (testsImporting(root, seam.file, tests).length === 0) problems.push(`${seam.file}: no test under test/ imports it (its tripwire)`);
    for (const test of seam.tests) if (!existsSync(join(root, test))) problems.push(`${seam.file}: its tripwire ${test}, named in docs/architecture.md#one-seam-per-library, does not exist`);
  }
  for (const file of sources.filter((path) => !declared.has(path) && !GENERATED.has(path))) {
    for (const reach of reachesIn(file, readFileSync(join(root, file), 'utf8'))) {
      problems.push(`${reach.file}:${reach.line}: \`${reach.code}\` reaches into a library's private parts outside a seam file (docs/architecture.md#one-seam-per-library)`);
    }
  }
  return problems;
}
