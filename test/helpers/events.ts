/**
 * Events for tests, typed from the module's schemas (`z.infer` of Event and EventList), with the
 * reads the event tests share.
 */
import { expect } from 'vitest';
import type { z } from 'zod';
import type { Event, EventList } from '../../server/modules/events/events.schemas.ts';
import type { TestApp } from './app.ts';
import { ORDERS } from './orders.ts';

export const EVENTS = '/api/v1/events';
export const orderEventsOf = (orderId: number): string => `${ORDERS}/${orderId}/events`;

export type EventBody = z.infer<typeof Event>;
export type EventListBody = z.infer<typeof EventList>;

/** GET a list of events (expects 200). */
export async function readEvents(t: TestApp, url: string, token = t.admin.token): Promise<EventListBody> {
  const res = await t.request({ method: 'GET', url, token });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<EventListBody>();
}

/** Every event of a list, page after page by `next_cursor` (`limit` a page), newest first. */
export async function readAllEvents(t: TestApp, url: string, token = t.admin.token, limit = 100): Promise<EventBody[]> {
  const all: EventBody[] = [];
  const separator = url.includes('?') ? '&' : '?';
  let page = await readEvents(t, `${url}${separator}limit=${limit}`, token);
  all.push(...page.data);
  while (page.next_cursor !== null) {
    page = await readEvents(t, `${url}${separator}limit=${limit}&cursor=${encodeURIComponent(page.next_cursor)}`, token);
    all.push(...page.data);
  }
  return all;
}

/** One order's timeline, oldest first (the list answers newest first). */
export async function timelineOf(t: TestApp, orderId: number, token = t.admin.token): Promise<EventBody[]> {
  return (await readAllEvents(t, orderEventsOf(orderId), token)).reverse();
}

/** A representation without its `_links`, as an event holds it. */
export function withoutLinks<T extends object>(representation: T): Omit<T, '_links'> {
  const rest: T & { _links?: unknown } = { ...representation };
  delete rest._links;
  return rest;
}
