/**
 * CPU time of the local PostgreSQL so far, from /proc: what the benches read before and after a
 * round for the database's side of a request. Its live processes by the scheduler's own count
 * (`schedstat`, ns), and the backends that have exited by the postmaster's children's time (they
 * end when their client disconnects, pgbench's at the end of each run).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** /proc's stat counts in USER_HZ ticks, 100 a second on Linux whatever the kernel's own HZ. */
export const NS_PER_TICK = 1e9 / 100;

/** In ns; 0 where /proc shows no PostgreSQL (a remote server). */
export function postgresCpuNs(): number {
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      total += Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
      // After the command's ") ": state, ppid, ..., cutime and cstime at 13 and 14.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      const parent = fields[1] ?? '';
      const isPostmaster = parent === '1' || readFileSync(`/proc/${parent}/comm`, 'utf8').trim() !== 'postgres';
      if (isPostmaster) total += (Number(fields[13]) + Number(fields[14])) * NS_PER_TICK;
    } catch {
      // gone in between
    }
  }
  return total;
}
