/**
 * Live updates for tests: a subscription to `orders.onChange` through the typed client (its
 * source) over a real socket, with the `eventsource` package as its EventSource, and what it
 * received.
 */
import { EventSource } from 'eventsource';
import { vi } from 'vitest';
import { createOrderServiceClient, type OrderServiceClient, type RouterInputs } from '../../client-sdk/src/index.ts';
import type { EventBody } from './events.ts';

/** Generous: a busy 2-core machine may take seconds; a passing run takes milliseconds. */
export const LIVE_DEADLINE_MS = 30_000;

export interface Received {
  /** The events, in the order they arrived. */
  events: EventBody[];
  /** The tracked id of each event (its own id). */
  ids: string[];
  errors: unknown[];
  /** Times the stream (re)connected. */
  starts: number;
  stop(): void;
}

/** A typed client whose subscriptions use the `eventsource` package (Node has no EventSource). */
export const liveClient = (url: string, token?: string): OrderServiceClient =>
  createOrderServiceClient({ url, ...(token === undefined ? {} : { token }), EventSource });

export function subscribe(client: OrderServiceClient, input?: RouterInputs['orders']['onChange']): Received {
  const received: Received = { events: [], ids: [], errors: [], starts: 0, stop: () => {} };
  const subscription = client.orders.onChange.subscribe(input, {
    onStarted: () => {
      received.starts += 1;
    },
    onData: ({ id, data }) => {
      received.ids.push(id);
      received.events.push(data);
    },
    onError: (error) => {
      received.errors.push(error);
    },
  });
  received.stop = () => subscription.unsubscribe();
  return received;
}

/** Polls `check` until it holds (or throws its last failure at the deadline). */
export const eventually = (check: () => void | Promise<void>, timeout = LIVE_DEADLINE_MS): Promise<void> => vi.waitFor(check, { timeout, interval: 20 });
