/**
 * A command's processes as /proc shows them, for the tests of commands that start others
 * (`npm run demo`, `npm run example:*`): what it started, whether each still runs, and its output
 * read line by line until a line says it is ready.
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { freePort } from './ports.ts';

/** `/proc/<pid>/stat` after the command's name (which may hold spaces and parentheses): state, ppid, ... */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // ended meanwhile
  }
}

/** The processes under `pid` (its children, theirs...). */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const ppid = Number(statFields(entry)?.[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift() ?? -1) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Whether `pid` still runs (a zombie waiting for its reaper does not). */
export function running(pid: number): boolean {
  const state = statFields(pid)?.[0];
  return state !== undefined && state !== 'Z';
}

/** Collects `child`'s stdout and stderr lines into `lines` as they come. */
export function collectLines(child: ChildProcess, lines: string[]): void {
  for (const stream of [child.stdout, child.stderr]) {
    if (stream) createInterface({ input: stream }).on('line', (line) => lines.push(line));
  }
}

/** Resolves with the first line of `lines` (collected by collectLines) that `ready` accepts; fails if `child` ends first. */
export function lineOf(child: ChildProcess, lines: string[], ready: (line: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const line = lines.find(ready);
      if (line !== undefined) {
        clearInterval(timer);
        resolve(line);
      } else if (child.exitCode !== null || child.signalCode !== null) {
        clearInterval(timer);
        reject(new Error(`the command ended (${child.signalCode ?? child.exitCode}) before it was ready:\n${lines.join('\n')}`));
      }
    };
    // Polls what was collected: the line may have come before this call.
    const timer = setInterval(check, 200);
    check();
  });
}

/** Ends `child` and whatever it started, by pid, with SIGKILL: a test's clean-up after a failure. */
export function killTree(child: ChildProcess | undefined): void {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  const under = descendants(child.pid);
  child.kill('SIGKILL');
  for (const pid of under) if (running(pid)) process.kill(pid, 'SIGKILL');
}

/**
 * Runs `attempt` with `count` ports free right now, and again with new ones when it fails because
 * one was taken in between (the command's output, which lineOf's failure carries, says a port "is
 * in use"): another suite running beside may bind a port between freePort() and the command.
 */
export async function withFreePorts<T>(count: number, attempt: (ports: number[]) => Promise<T>, attempts = 3): Promise<T> {
  for (let left = attempts; ; left -= 1) {
    const ports: number[] = [];
    for (let i = 0; i < count; i += 1) ports.push(await freePort());
    try {
      return await attempt(ports);
    } catch (error) {
      if (left <= 1 || !(error instanceof Error && / in use/.test(error.message))) throw error;
    }
  }
}
