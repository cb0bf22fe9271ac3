/**
 * The nudge from a request to this process's delivery workers: a delivery retried by hand, or an
 * endpoint enabled again, is due now, and need not wait for the next poll. Other instances find
 * it at their next poll (WEBHOOK_POLL_INTERVAL_MS).
 */
const listeners = new Set<() => void>();

/** Calls `listener` on every nudge until the returned function is called. */
export function onWake(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function wakeWorkers(): void {
  for (const listener of listeners) listener();
}
