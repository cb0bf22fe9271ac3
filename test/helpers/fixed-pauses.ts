/**
 * Fixed pauses in test code (issue 37 item 4, docs/testing.md#no-fixed-sleeps): a test waits for a
 * condition, never for a length of time. A pause is: a timer that only resolves or acts
 * (`setTimeout(resolve, 100)`, `setTimeout(() => release(), 300)`), the promise timers of
 * `node:timers/promises`, a `sleep`/`delay`/`pause` call, playwright's `waitForTimeout`,
 * `Atomics.wait`, PostgreSQL's `pg_sleep`, a shell `sleep N`, and `paced()` (test/helpers/waits.ts),
 * which is allowed only where listed. A timer whose callback rejects, throws, kills, destroys or
 * aborts is a bound on a wait, not a pause; `socket.setTimeout` is the socket's idle bound.
 */

export interface FixedPause {
  /** 1-based line of the pause in the scanned text. */
  line: number;
  /** The line, trimmed. */
  text: string;
  /** What kind of pause it is. */
  kind: string;
}

/** A timer's callback that ends a wait in failure: a bound, not a pause. */
const BOUND = /\b(reject|throw|kill|destroy|abort|fail)\w*\b/;

const PATTERNS: readonly { kind: string; pattern: RegExp }[] = [
  { kind: 'timers/promises', pattern: /['"](node:)?timers\/promises['"]/g },
  { kind: 'sleep call', pattern: /(?<![.\w])(sleep|delay|pause)\s*\(/g },
  { kind: 'waitForTimeout', pattern: /\.waitForTimeout\s*\(/g },
  { kind: 'Atomics.wait', pattern: /\bAtomics\.wait\s*\(/g },
  { kind: 'pg_sleep', pattern: /\bpg_sleep\s*\(/g },
  { kind: 'shell sleep', pattern: /['"`]sleep\s+\d/g },
  { kind: 'paced', pattern: /(?<![.\w])paced\s*\(/g },
];

/** The text of the call opening at `open` (the index of its `(`), to its closing parenthesis. */
function callText(source: string, open: number): string {
  let depth = 0;
  for (let i = open; i < source.length; i += 1) {
    const c = source[i];
    if (c === '(') depth += 1;
    else if (c === ')') {
      depth -= 1;
      if (depth === 0) return source.slice(open, i + 1);
    }
  }
  return source.slice(open);
}

const lineOf = (source: string, index: number): number => source.slice(0, index).split('\n').length;

/** Every fixed pause in `source` (a test file's text), in order. Comment lines are skipped. */
export function fixedPauses(source: string): FixedPause[] {
  const lines = source.split('\n');
  const found: { index: number; kind: string }[] = [];
  for (const match of source.matchAll(/(?<![.\w])setTimeout\s*\(/g)) {
    const call = callText(source, match.index + match[0].length - 1);
    if (!BOUND.test(call)) found.push({ index: match.index, kind: 'timer' });
  }
  for (const { kind, pattern } of PATTERNS) for (const match of source.matchAll(pattern)) found.push({ index: match.index, kind });
  return found
    .map(({ index, kind }) => {
      const line = lineOf(source, index);
      return { line, text: (lines[line - 1] ?? '').trim(), kind };
    })
    .filter(({ text }) => !/^(\/\/|\/?\*)/.test(text))
    .sort((a, b) => a.line - b.line);
}
