/**
 * Profiles a running server over the inspector protocol for as long as the bench asks:
 *
 *   node --experimental-websocket --import tsx scripts/bench/cpu-profiler.ts <ws://inspector-url> <out.cpuprofile>
 *
 * It starts V8's CPU profiler in the server, says `started` on stdout, and when its stdin ends it
 * stops the profiler and writes the profile. So a profile holds the measured load alone: not the
 * server's start, its seeding or the warm-up, which `--cpu-prof` (a whole process's life) mixes in.
 * A process of its own because Node 20's WebSocket client needs `--experimental-websocket`.
 */
import { writeFileSync } from 'node:fs';

const [url, out] = process.argv.slice(2);
if (!url || !out) {
  console.error('usage: cpu-profiler.ts <ws://inspector-url> <out.cpuprofile>');
  process.exit(2);
}

const socket = new WebSocket(url);
await new Promise<void>((resolve, reject) => {
  socket.addEventListener('open', () => resolve());
  socket.addEventListener('error', () => reject(new Error(`cannot reach the inspector at ${url}`)));
});
let lastId = 0;
const pending = new Map<number, (result: unknown) => void>();
socket.addEventListener('message', (message: { data: unknown }) => {
  const { id, result } = JSON.parse(String(message.data)) as { id?: number; result?: unknown };
  if (id !== undefined) pending.get(id)?.(result);
});
const call = (method: string, params: Record<string, unknown> = {}) =>
  new Promise<unknown>((resolve) => {
    const id = ++lastId;
    pending.set(id, resolve);
    socket.send(JSON.stringify({ id, method, params }));
  });

await call('Profiler.enable');
// 200 us between samples: a request costs some hundreds of microseconds.
await call('Profiler.setSamplingInterval', { interval: 200 });
await call('Profiler.start');
process.stdout.write('started\n');
process.stdin.resume();
await new Promise<void>((resolve) => process.stdin.on('end', () => resolve()));
const { profile } = (await call('Profiler.stop')) as { profile: unknown };
writeFileSync(out, JSON.stringify(profile));
socket.close();
