/**
 * A PGlite data directory (`DATA_DIR`): one process at a time, and private to the service's user.
 * PGlite has no lock of its own: a second process on the same directory would write beside the
 * first and lose data, so `pgdata.lock` names the process that holds it.
 */
import { chmodSync, linkSync, lstatSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Removes group and other permissions from everything under `path`. */
export function makePrivate(path: string): void {
  let stats;
  try {
    stats = lstatSync(path);
  } catch (error) {
    // PostgreSQL may remove a temporary file while we walk: nothing left to protect.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (stats.isSymbolicLink()) return;
  if ((stats.mode & 0o077) !== 0) chmodSync(path, stats.mode & 0o700);
  if (stats.isDirectory()) for (const entry of readdirSync(path)) makePrivate(join(path, entry));
}

/** A second process on one data directory, refused: PGlite would let both write and lose data. */
export class DataDirectoryLockedError extends Error {
  readonly code = 'DATA_DIR_LOCKED';

  constructor(
    readonly dataDir: string,
    readonly holderPid: number,
  ) {
    const lockFile = join(dataDir, LOCK_FILE);
    super(
      holderPid === process.pid
        ? `The data directory ${dataDir} is already open in this process; PGlite allows one opening per data directory.`
        : `The data directory ${dataDir} is in use by another process (pid ${holderPid}); PGlite allows one process per data directory. ` +
            `Stop that process or set DATA_DIR to another directory. If no such process runs, delete ${lockFile}.`,
    );
    this.name = 'DataDirectoryLockedError';
  }
}

const LOCK_FILE = 'pgdata.lock';
/** Lock files this process holds. */
const heldLocks = new Set<string>();

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function lockHolder(lockFile: string): number | undefined {
  try {
    const pid = Number(readFileSync(lockFile, 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes `DATA_DIR/pgdata.lock` for the life of the database: a file naming our pid, created
 * whole (written aside, then hard-linked into place, which fails if the lock exists). A lock
 * whose process is gone is stale and taken over. Returns the release function.
 */
export function lockDataDirectory(dataDir: string): () => void {
  const lockFile = join(dataDir, LOCK_FILE);
  const draft = join(dataDir, `${LOCK_FILE}.${process.pid}`);
  writeFileSync(draft, `${process.pid}\n`, { mode: 0o600 });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(draft, lockFile);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const holder = lockHolder(lockFile);
        // Our own pid is live only if this process took the lock; otherwise a predecessor with
        // the same pid (a restarted container) left it.
        const live = holder !== undefined && (holder === process.pid ? heldLocks.has(lockFile) : processAlive(holder));
        if (live || attempt >= 2) throw new DataDirectoryLockedError(dataDir, holder ?? 0);
        // Stale: its process is gone (or the file is unreadable). Take it over.
        rmSync(lockFile, { force: true });
      }
    }
  } finally {
    rmSync(draft, { force: true });
  }
  heldLocks.add(lockFile);

  const release = () => {
    if (!heldLocks.delete(lockFile)) return;
    process.removeListener('exit', release);
    // Only our own lock: never remove one another process took over meanwhile.
    if (lockHolder(lockFile) === process.pid) {
      try {
        unlinkSync(lockFile);
      } catch {
        // Already gone: nothing to release.
      }
    }
  };
  // A process that exits without closing the database leaves no lock behind.
  process.on('exit', release);
  return release;
}
