/**
 * The background purges (expired idempotency keys, OAuth grants, rate-limit counters): `run` every
 * `intervalMs` (unref'd: it never keeps the process alive), one round at a time. A failure is
 * logged and the next round tries again. Returns the stop function, which lets a round in
 * progress finish, so call it before the database closes.
 */
import type { FastifyBaseLogger } from 'fastify';

export function startPurge(log: FastifyBaseLogger, intervalMs: number, what: string, run: () => Promise<number>): () => Promise<void> {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = run()
      .then((deleted) => {
        if (deleted > 0) log.info({ deleted }, `${what} purged`);
      })
      .catch((error: unknown) => log.warn({ err: error }, `purge of ${what} failed; retrying next round`))
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
