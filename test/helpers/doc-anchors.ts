/**
 * Dead documentation anchors (issue 37 item 3, docs/architecture.md#checks-that-keep-the-docs-true):
 * every anchor of a Markdown file cited in the code, the scripts, the tests, the client package,
 * the examples, the docs and the configuration (docs/api.md#events, README.md#run-it) must be a
 * heading of that file, and every cited file must exist. Headings become anchors by GitHub's
 * rules: lower case, punctuation dropped, each space a hyphen, a repeated one `-1`, `-2`.
 *
 * A citation is resolved as a reader would: a Markdown link from the folder of the file it is in
 * (an anchor alone is the file itself); a path in plain text from the project's root, or else from
 * the folder of the file it is in (docs/architecture.md cites its neighbours by name alone). Also
 * read: more anchors of the file just cited (docs/api.md#writes and #errors), and a section named
 * in words (client-sdk/README.md, "Retrying safely"), which must begin a heading of that file.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/** Where citations are looked for: these folders (whole) and the files at the root. */
const SCANNED_FOLDERS = ['server', 'scripts', 'test', 'client-sdk', 'examples', 'docs', 'deploy', '.ci'];
/** Never read: installed, built or generated. */
const SKIPPED = new Set(['node_modules', 'dist', '.data', '.git', 'coverage']);
const SKIPPED_FILES = new Set(['package-lock.json']);
const TEXT = /\.(ts|tsx|mts|cts|js|mjs|cjs|json|md|toml|ya?ml|sh|html|css|conf|example)$|^[^.]+$|^\.[^.]+$/;

export interface DeadAnchor {
  /** The citing file, from the root. */
  file: string;
  line: number;
  /** As cited: `docs/api.md#events`. */
  cited: string;
  /** Why it does not resolve. */
  reason: string;
}

/** The files citations are read from, relative to `root`. */
export function scannedFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
      if (SKIPPED.has(entry.name) || entry.name.startsWith('.client-build-')) continue;
      const path = folder === '' ? entry.name : `${folder}/${entry.name}`;
      if (entry.isDirectory()) {
        if (folder !== '' || SCANNED_FOLDERS.includes(entry.name)) walk(path);
      } else if (entry.isFile() && TEXT.test(entry.name) && !SKIPPED_FILES.has(entry.name)) {
        found.push(path);
      }
    }
  };
  walk('');
  return found.sort();
}

/** GitHub's anchor for a heading's text (github-slugger's rule, on the rendered text). */
export function slugOf(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // inline HTML tags
    .replace(/`([^`]*)`/g, '$1'); // code spans: their content
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a Markdown file offers: its headings (outside code fences) and its `<a id|name>`. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const fenceMark = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fenceMark) {
      if (fence === undefined) fence = fenceMark[0];
      else if (fenceMark[0] === fence) fence = undefined;
      continue;
    }
    if (fence !== undefined) continue;
    for (const [, id] of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id as string);
    const heading = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+\s*)?$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = slugOf(heading);
    const times = seen.get(slug) ?? 0;
    seen.set(slug, times + 1);
    anchors.add(times === 0 ? slug : `${slug}-${times}`);
  }
  return anchors;
}

/** A Markdown link's target in a .md file: a file, a file and an anchor, or an anchor alone. */
const LINK = /\]\(\s*<?([^)\s#>:]*\.md|)(?:#([^)\s>]*))?>?(?:\s+"[^"]*")?\s*\)/g;
/** A path in plain text, with an anchor or none; not inside a URL. */
const PLAIN = /(?<![\w./:@-])((?:\.\.?\/)*(?:[\w.-]+\/)*[\w.-]+\.md)(?:#([\p{L}\p{N}_-]*[\p{L}\p{N}_]))?/gu;

/** Anchors that go on citing the file just named: a comma, `and` or `or`, then `#` and the anchor. */
const CHAIN = /^(?:(?:,\s*|\s+)(?:and\s+|or\s+)?#[\p{L}\p{N}_-]*[\p{L}\p{N}_])+/u;
/** A list of them a few words on, in parentheses, as in test/api/products.test.ts's first line. */
const LIST_AFTER = /^[^\n()#`]{0,40}\(#[\p{L}\p{N}_-]*[\p{L}\p{N}_](?:,\s*(?:and\s+)?#[\p{L}\p{N}_-]*[\p{L}\p{N}_])*\)/u;
const ANCHOR = /#([\p{L}\p{N}_-]*[\p{L}\p{N}_])/gu;

/** A section named in words: the file (or README alone), then its heading's first words in quotes. */
const QUOTED = /(?<![\w./:@-])((?:[\w.-]+\/)*[\w.-]+\.md|README),?\s+(?:section\s+)?"([^"\n]+(?:\n[^"\n]*){0,2})"/gu;

interface Citation {
  /** Where it begins in its file: the character's index, and its line. */
  at: number;
  line: number;
  cited: string;
  /** The cited file, from the root (undefined: outside the project). */
  target: string | undefined;
  anchor: string | undefined;
  /** A section named by its heading's first words instead of its anchor. */
  words?: string;
}

export function citationsIn(root: string, file: string, text: string): Citation[] {
  const citations: Citation[] = [];
  const here = dirname(file);
  const inRoot = (path: string) => {
    const resolved = normalize(path);
    return resolved.startsWith('..') ? undefined : resolved;
  };
  /** A path in plain text: from the root, or else from the citing file's folder. */
  const locate = (path: string) => {
    const fromRoot = path.startsWith('.') ? undefined : inRoot(path);
    const fromHere = inRoot(join(here, path));
    if (fromRoot !== undefined && existsSync(join(root, fromRoot))) return fromRoot;
    if (fromHere !== undefined && existsSync(join(root, fromHere))) return fromHere;
    return fromRoot ?? fromHere;
  };
  const lineAt = (index: number) => text.slice(0, index).split('\n').length;
  const linked = new Set<number>();
  if (file.endsWith('.md')) {
    for (const match of text.matchAll(LINK)) {
      const [, path = '', anchor] = match;
      if (path === '' && anchor === undefined) continue;
      const target = path === '' ? file : inRoot(join(here, path));
      // The path's own index, so that PLAIN does not read it again.
      linked.add((match.index ?? 0) + match[0].indexOf(path === '' ? '#' : path));
      citations.push({ at: match.index ?? 0, line: lineAt(match.index ?? 0), cited: match[0].slice(2, -1).trim(), target, anchor: anchor || undefined });
    }
  }
  for (const match of text.matchAll(QUOTED)) {
    const [cited, named = '', quoted = ''] = match;
    const path = named === 'README' ? 'README.md' : named;
    const words = quoted.replace(/\s*\n\s*(?:#|\*|\/\/)?\s*/g, ' ');
    citations.push({ at: match.index ?? 0, line: lineAt(match.index ?? 0), cited: cited.replace(/\s+/g, ' '), target: locate(path), anchor: undefined, words });
  }
  for (const match of text.matchAll(PLAIN)) {
    if (linked.has(match.index ?? -1)) continue;
    const [cited, path = '', anchor] = match;
    // Only what names a place in the project: an anchor, or a file of docs/.
    if (anchor === undefined && !path.startsWith('docs/')) continue;
    const target = locate(path);
    citations.push({ at: match.index ?? 0, line: lineAt(match.index ?? 0), cited, target, anchor });
    // More anchors of the same file, chained after this one or listed in parentheses just after.
    const after = text.slice((match.index ?? 0) + cited.length, (match.index ?? 0) + cited.length + 300);
    const more = (anchor === undefined ? LIST_AFTER : CHAIN).exec(after)?.[0] ?? '';
    for (const [, next] of more.matchAll(ANCHOR)) citations.push({ at: match.index ?? 0, line: lineAt(match.index ?? 0), cited: `${path}#${next}`, target, anchor: next });
  }
  return citations;
}

/** Every citation under `root` that does not resolve, in file order. */
export function deadAnchors(root: string): DeadAnchor[] {
  const anchorsByFile = new Map<string, Set<string> | undefined>();
  const anchorsOfFile = (target: string) => {
    if (!anchorsByFile.has(target)) {
      const path = join(root, target);
      anchorsByFile.set(target, existsSync(path) && statSync(path).isFile() ? anchorsOf(readFileSync(path, 'utf8')) : undefined);
    }
    return anchorsByFile.get(target);
  };
  const dead: DeadAnchor[] = [];
  for (const file of scannedFiles(root)) {
    const text = readFileSync(join(root, file), 'utf8');
    const citations = citationsIn(root, file, text).sort((a, b) => a.at - b.at);
    for (const { line, cited, target, anchor, words } of citations) {
      if (target === undefined) {
        dead.push({ file, line, cited, reason: 'points outside the project' });
        continue;
      }
      const anchors = anchorsOfFile(target);
      if (anchors === undefined) dead.push({ file, line, cited, reason: `${target} does not exist` });
      else if (anchor !== undefined && !anchors.has(anchor)) dead.push({ file, line, cited, reason: `${target} has no heading #${anchor}` });
      else if (words !== undefined && ![...anchors].some((known) => known === slugOf(words) || known.startsWith(`${slugOf(words)}-`))) {
        dead.push({ file, line, cited, reason: `${target} has no heading beginning "${words}"` });
      }
    }
  }
  return dead;
}
