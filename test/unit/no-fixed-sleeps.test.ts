/**
 * No fixed sleep synchronises a test (issue 37 item 4, docs/testing.md#no-fixed-sleeps): "100 ms
 * is enough for it to happen" fails on a loaded machine. Every file under test/ is read for a
 * fixed pause (test/helpers/fixed-pauses.ts says what counts); the only pauses are the waiting
 * helpers' (test/helpers/waits.ts, between two looks at a condition) and the exceptions below,
 * each with its reason.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../server/lib/project-root.ts';
import { fixedPauses } from '../helpers/fixed-pauses.ts';

/** Files that may pause: the waiting helpers, and the check itself (its patterns and examples). */
const WAITING_HELPERS = new Set(['test/helpers/waits.ts', 'test/helpers/fixed-pauses.ts', 'test/unit/no-fixed-sleeps.test.ts']);

/** A pause that is the test's input, not a wait for something to happen: where, and why. */
const EXCEPTIONS: readonly { file: string; line: string; reason: string }[] = [
  {
    file: 'test/api/live-updates.test.ts',
    line: 'await paced(3 * http.requestTimeoutMs);',
    reason: 'the rule is that a stream outlives the request and keep-alive timeouts: time must pass',
  },
  { file: 'test/api/webhooks-wake.test.ts', line: 'await paced(5);', reason: 'spaces 40 nudges over about 200 ms, a stream of 200 events a second' },
  { file: 'test/api/db-connection-loss.test.ts', line: 'await paced(KILL_EVERY_MS);', reason: "the fault's cadence: a backend terminated every 250 ms under load" },
  {
    file: 'test/db/listen-outage.test.ts',
    line: 'await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));',
    reason: "the outage's length is the fault (the LISTEN connection must be down a while), not a wait",
  },
  {
    file: 'test/db/postgres-js-lost-connections.test.ts',
    line: 'await new Promise((resolve) => setTimeout(resolve, 10));',
    reason: 'the pause between two looks of its own until() (a condition poll, as in test/helpers/waits.ts)',
  },
  {
    file: 'test/api/module-list.test.ts',
    line: 'await new Promise((resolve) => setTimeout(resolve, 20));',
    reason: 'the pause between two looks of its own until() (a condition poll; until() of test/helpers/waits.ts would do)',
  },
  {
    file: 'test/db/postgres-js-lost-connections.test.ts',
    line: 'pg_sleep(60)',
    reason: 'a statement that must still be running when the test cuts its connection; nothing waits for it to end',
  },
];

const SCANNED = /\.(ts|mts|cts|js|mjs)$/;

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : testFiles(path);
    return SCANNED.test(name) ? [path] : [];
  });
}

/** Every fixed pause under test/, as `file:line: text`, but the waiting helpers'. */
function pausesInTests(): { file: string; line: number; text: string }[] {
  return testFiles(join(projectRoot, 'test'))
    .map((path) => ({ file: relative(projectRoot, path).split('\\').join('/'), path }))
    .filter(({ file }) => !WAITING_HELPERS.has(file))
    .flatMap(({ file, path }) => fixedPauses(readFileSync(path, 'utf8')).map(({ line, text }) => ({ file, line, text })));
}

const excepted = (pause: { file: string; text: string }) => EXCEPTIONS.some(({ file, line }) => file === pause.file && pause.text.includes(line));

describe('no fixed sleep synchronises a test', () => {
  const pauses = pausesInTests();

  it('no test pauses for a fixed time but the waiting helpers and the listed exceptions', () => {
    // Wait for the condition instead: until() or untilLockAwaited() in test/helpers/waits.ts,
    // vi.waitFor, an event (once(...)), or a counter or log line the code exposes.
    expect(pauses.filter((pause) => !excepted(pause)).map(({ file, line, text }) => `${file}:${line}: ${text}`)).toEqual([]);
  });

  it('every listed exception is still there (the list stays short and true)', () => {
    const stale = EXCEPTIONS.filter(({ file, line }) => !pauses.some((pause) => pause.file === file && pause.text.includes(line)));
    expect(stale.map(({ file, line }) => `${file}: ${line}`)).toEqual([]);
  });
});

describe('what counts as a fixed pause (planted in a string, checked by the same function)', () => {
  it.each([
    ['a promise around a timer', 'await new Promise((resolve) => setTimeout(resolve, 300));'],
    ['a short name for resolve', 'await new Promise((r) => setTimeout(r, 100));'],
    ['an action after a delay', "setTimeout(() => release('commit'), 300);"],
    ['a timer over several lines', 'setTimeout(() => {\n  done = true;\n}, 400);'],
    ['the promise timers', "import { setTimeout as sleep } from 'node:timers/promises';"],
    ['a sleep helper', 'await sleep(250);'],
    ['a delay helper', 'await delay(100);'],
    ["playwright's fixed wait", 'await page.waitForTimeout(500);'],
    ["PostgreSQL's sleep", 'await db.execute(sql`select pg_sleep(0.3)`);'],
    ['a shell sleep', "execSync('sleep 1');"],
    ['a paced() not listed', 'await paced(100);'],
  ])('%s is flagged', (_, planted) => {
    expect(fixedPauses(`const before = 1;\n${planted}\n`)).toEqual([expect.objectContaining({ line: 2 })]);
  });

  it.each([
    ['a bound that rejects', "const timer = setTimeout(() => reject(new Error('did not start')), 30_000);"],
    ['a bound that kills', "setTimeout(() => child.kill('SIGKILL'), 140_000);"],
    ["a socket's idle bound", 'socket.setTimeout(5000, () => socket.destroy());'],
    ['a wait for a condition', 'await vi.waitFor(() => expect(rounds).toBe(2), { timeout: 10_000 });'],
    ['a comment', '// a fixed setTimeout(resolve, 300) raced on a busy machine'],
  ])('%s is not', (_, code) => {
    expect(fixedPauses(code)).toEqual([]);
  });

  it('a planted sleep in a test file would fail the check above', () => {
    const planted = { file: 'test/api/orders.test.ts', text: fixedPauses('await new Promise((r) => setTimeout(r, 300));')[0]?.text ?? '' };
    expect(planted.text).not.toBe('');
    expect(excepted(planted)).toBe(false);
    // An exception names its line: the same pause elsewhere in a listed file is not excused.
    expect(excepted({ file: 'test/api/webhooks-wake.test.ts', text: 'await paced(50);' })).toBe(false);
  });
});
