/**
 * The nudge from a request to this process's delivery workers: a delivery retried by hand, or an
 * endpoint enabled again, is due now, and need not wait for the next poll. Other instances find
 * it at their next poll (WEBHOOK_POLL_INTERVAL_MS).
 */
const listeners = new Set<() => void>();

/**
 * The channel the fan-out trigger NOTIFYs when an event made at least one delivery (migration
 * 0017_delivery_notify.sql names it too): the workers of every instance LISTEN on it, so a
 * delivery goes out as its event commits, and a deployment without endpoints wakes no worker.
 */
export const DELIVERIES_CHANNEL = 'order_service_deliveries';

/** Calls `listener` on every nudge until the returned function is called. */
export function onWake(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function wakeWorkers(): void {
  for (const listener of listeners) listener();
}
