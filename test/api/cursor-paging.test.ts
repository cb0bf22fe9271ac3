/**
 * Keyset pagination (issue 12): `cursor` and `next_cursor`/`prev_cursor` on every list, the Link
 * header through them, stability under inserts between pages, ties in the sort key, and cursors
 * refused (400) when edited, cut, or replayed on another query.
 */
import { inArray } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { orders } from '../../server/modules/orders/orders.table.ts';
import { processCursors } from '../../server/lib/cursors.ts';
import { createTestHarness } from '../../server/testing.ts';
import { type TestUser, useTestApp } from '../helpers/app.ts';
import { createOrderScene, draftOrder, forceStatus, ORDERS, type OrderListBody, type OrderScene } from '../helpers/orders.ts';
import { insertClient } from '../helpers/oauth.ts';
import { expectProblem } from '../helpers/problems.ts';
import { createProduct, freshCategory, PRODUCTS, type ProductListBody } from '../helpers/products.ts';

let scene: OrderScene;
let carol: TestUser;
/** Carol's orders, newest first (the list's order). */
let carolsOrders: number[];

const list = (query: string, token = carol.token) => t.request({ method: 'GET', url: `${ORDERS}${query}`, token });
const ids = (body: OrderListBody) => body.data.map((order) => order.id);
const newOrder = async (owner = carol) => (await draftOrder(t, scene, { owner })).id;

/** Follows `next_cursor` from `first` to the end; answers every id seen, in order. */
async function walk(query: string, token = carol.token, between?: () => Promise<void>): Promise<number[]> {
  const seen: number[] = [];
  let body = (await list(query, token)).json<OrderListBody>();
  seen.push(...ids(body));
  while (body.next_cursor !== null) {
    await between?.();
    const res = await list(`${query}${query ? '&' : '?'}cursor=${body.next_cursor}`, token);
    expect(res.statusCode, res.body).toBe(200);
    body = res.json<OrderListBody>();
    seen.push(...ids(body));
  }
  return seen;
}

const t = useTestApp();
beforeAll(async () => {
  scene = await createOrderScene(t);
  carol = await t.createUser('customer');
  const made: number[] = [];
  for (let i = 0; i < 11; i++) made.push(await newOrder());
  carolsOrders = made.reverse();
});

describe('cursor paging of orders', () => {
  it('next_cursor walks every order once, newest first, and the last page has none', async () => {
    expect(await walk('?limit=3')).toEqual(carolsOrders);
    const last = (await list('?limit=11')).json<OrderListBody>();
    expect(last).toMatchObject({ has_more: false, next_cursor: null, prev_cursor: null });
  });

  it('orders created between pages neither repeat nor push a row off (offset paging would repeat)', async () => {
    const added: number[] = [];
    const seen = await walk('?limit=3', carol.token, async () => {
      added.push(await newOrder());
    });
    expect(seen).toEqual(carolsOrders);
    expect(new Set(seen).size).toBe(seen.length);

    // The same interleaving by page number shows each new order's push: rows repeat.
    const byNumber: number[] = [];
    for (let page = 1; page <= 4; page++) {
      byNumber.push(...ids((await list(`?limit=3&page=${page}`)).json<OrderListBody>()));
      added.push(await newOrder());
    }
    expect(new Set(byNumber).size).toBeLessThan(byNumber.length);
    carolsOrders = [...added.reverse(), ...carolsOrders];
  });

  it('orders made in the same millisecond are ordered by id, none lost at a page boundary', async () => {
    const same = [await newOrder(), await newOrder(), await newOrder(), await newOrder(), await newOrder()];
    await t.db.update(orders).set({ createdAt: new Date('2030-01-01T00:00:00.000Z') }).where(inArray(orders.id, same));
    const seen = await walk('?limit=2');
    expect(seen.slice(0, 5)).toEqual([...same].reverse());
    expect(seen.slice(5)).toEqual(carolsOrders);
    carolsOrders = [...same.reverse(), ...carolsOrders];
  });

  it('prev_cursor walks back page by page to page 1, which has no prev', async () => {
    const pages: number[][] = [];
    let body = (await list('?limit=4')).json<OrderListBody>();
    pages.push(ids(body));
    while (body.next_cursor !== null) {
      body = (await list(`?limit=4&cursor=${body.next_cursor}`)).json<OrderListBody>();
      pages.push(ids(body));
    }
    expect(body.page).toBe(pages.length);
    for (let i = pages.length - 2; i >= 0; i--) {
      expect(body.prev_cursor).not.toBeNull();
      body = (await list(`?limit=4&cursor=${String(body.prev_cursor)}`)).json<OrderListBody>();
      expect(ids(body)).toEqual(pages[i]);
      expect(body.page).toBe(i + 1);
      expect(body.next_cursor).not.toBeNull();
    }
    expect(body.prev_cursor).toBeNull();
  });

  it('a page by number carries cursors on, and its Link header uses them, keeping the filter', async () => {
    const res = await list('?status=DRAFT&limit=3&page=2');
    const body = res.json<OrderListBody>();
    expect(ids(body)).toEqual(carolsOrders.slice(3, 6));
    const links = Object.fromEntries(
      String(res.headers.link)
        .split(', ')
        .map((part) => {
          const [, url, rel] = /^<([^>]+)>; rel="(\w+)"$/.exec(part) ?? [];
          return [rel, new URL(String(url), 'http://localhost')];
        }),
    ) as Record<string, URL>;
    expect(links.next?.searchParams.get('cursor')).toBe(body.next_cursor);
    expect(links.prev?.searchParams.get('cursor')).toBe(body.prev_cursor);
    for (const url of [links.next, links.prev]) {
      expect(url?.pathname).toBe(ORDERS);
      expect(url?.searchParams.get('page')).toBeNull();
      expect(url?.searchParams.get('status')).toBe('DRAFT');
      expect(url?.searchParams.get('limit')).toBe('3');
    }
    const next = (await t.request({ method: 'GET', url: `${links.next?.pathname}${links.next?.search}`, token: carol.token })).json<OrderListBody>();
    expect(ids(next)).toEqual(carolsOrders.slice(6, 9));
    expect(next.page).toBe(3);
    const prev = (await t.request({ method: 'GET', url: `${links.prev?.pathname}${links.prev?.search}`, token: carol.token })).json<OrderListBody>();
    expect(ids(prev)).toEqual(carolsOrders.slice(0, 3));
  });

  it('every filter shape pages by cursor: one status, active, an admin over everyone', async () => {
    const confirmed = carolsOrders.slice(0, 7);
    for (const id of confirmed) await forceStatus(t, id, 'confirmed');
    for (const id of confirmed.slice(0, 2)) await forceStatus(t, id, 'paid');
    expect(await walk('?status=confirmed&limit=2')).toEqual(confirmed.slice(2));
    expect(await walk('?status=active&limit=2')).toEqual(confirmed);
    expect(await walk('?status=draft&limit=5')).toEqual(carolsOrders.slice(7));
    const everyone = await walk('?limit=7', t.admin.token);
    expect(everyone).toEqual(expect.arrayContaining(carolsOrders));
    expect(new Set(everyone).size).toBe(everyone.length);
    const [newest] = everyone;
    expect(everyone).toEqual(ids((await list('?limit=100', t.admin.token)).json<OrderListBody>()).slice(0, everyone.length));
    expect(newest).toBeDefined();
  });

  it('a customer cannot page into another customer’s orders with a cursor', async () => {
    const dave = await t.createUser('customer');
    const daves = [await newOrder(dave), await newOrder(dave)];
    const first = (await list('?limit=1', dave.token)).json<OrderListBody>();
    // Dave's cursor, used by Carol: her own orders after that position, never Dave's.
    const res = await list(`?limit=100&cursor=${String(first.next_cursor)}`, carol.token);
    expect(res.statusCode).toBe(200);
    expect(ids(res.json<OrderListBody>()).some((id) => daves.includes(id))).toBe(false);
  });
});

describe('edges: pages that come back empty, a changing limit', () => {
  it('going back to a page whose rows all left the filter answers page 1, and on from it misses nothing', async () => {
    const dave = await t.createUser('customer');
    const [a, b, c, d] = [await newOrder(dave), await newOrder(dave), await newOrder(dave), await newOrder(dave)];
    const first = (await list('?status=draft&limit=2', dave.token)).json<OrderListBody>();
    expect(ids(first)).toEqual([d, c]);
    const second = (await list(`?status=draft&limit=2&cursor=${String(first.next_cursor)}`, dave.token)).json<OrderListBody>();
    expect(ids(second)).toEqual([b, a]);
    // The first page's orders leave the filter; its place, read backwards, is now empty.
    for (const id of [d, c]) await forceStatus(t, id, 'confirmed');
    const back = (await list(`?status=draft&limit=2&cursor=${String(second.prev_cursor)}`, dave.token)).json<OrderListBody>();
    expect(back).toMatchObject({ data: [], page: 1, prev_cursor: null, has_more: true });
    const onward = (await list(`?status=draft&limit=2&cursor=${String(back.next_cursor)}`, dave.token)).json<OrderListBody>();
    expect(ids(onward)).toEqual([b, a]);
  });

  it('a next page whose rows all left the filter links back to a page that still ends with the row it came from', async () => {
    const erin = await t.createUser('customer');
    const [a, b, c] = [await newOrder(erin), await newOrder(erin), await newOrder(erin)];
    const first = (await list('?status=draft&limit=2', erin.token)).json<OrderListBody>();
    expect(ids(first)).toEqual([c, b]);
    await forceStatus(t, a, 'confirmed');
    const empty = (await list(`?status=draft&limit=2&cursor=${String(first.next_cursor)}`, erin.token)).json<OrderListBody>();
    expect(empty).toMatchObject({ data: [], has_more: false, next_cursor: null });
    const back = (await list(`?status=draft&limit=2&cursor=${String(empty.prev_cursor)}`, erin.token)).json<OrderListBody>();
    expect(ids(back)).toEqual([c, b]);
    expect(back).toMatchObject({ page: 1, prev_cursor: null });
  });

  it('the limit may change between cursor pages: still every order once, in order', async () => {
    const seen: number[] = [];
    let body = (await list('?limit=2')).json<OrderListBody>();
    seen.push(...ids(body));
    for (let limit = 5; body.next_cursor !== null; limit = limit === 5 ? 1 : 5) {
      body = (await list(`?limit=${limit}&cursor=${body.next_cursor}`)).json<OrderListBody>();
      seen.push(...ids(body));
    }
    expect(seen).toEqual(ids((await list('?limit=100')).json<OrderListBody>()));
  });

  it('users and OAuth clients page by cursor too (their queries are built per request)', async () => {
    for (let i = 0; i < 3; i++) {
      await t.createUser('customer');
      await insertClient(t.db);
    }
    for (const path of ['/api/v1/users', '/api/v1/clients']) {
      const all = (await t.request({ method: 'GET', url: `${path}?limit=100`, token: t.admin.token })).json<{ data: { id?: number; client_id?: string }[] }>();
      const key = (item: { id?: number; client_id?: string }) => item.id ?? item.client_id;
      const seen: unknown[] = [];
      let url: string | null = `${path}?limit=2`;
      while (url !== null) {
        const res = await t.request({ method: 'GET', url, token: t.admin.token });
        expect(res.statusCode, res.body).toBe(200);
        const body = res.json<{ data: { id?: number; client_id?: string }[]; next_cursor: string | null }>();
        seen.push(...body.data.map(key));
        url = body.next_cursor === null ? null : `${path}?limit=2&cursor=${body.next_cursor}`;
      }
      expect(seen).toEqual(all.data.map(key));
      expect(seen.length).toBeGreaterThan(1);
    }
  });
});

describe('cursors this list did not issue are 400', () => {
  let cursor: string;
  beforeAll(async () => {
    cursor = String((await list('?limit=2')).json<OrderListBody>().next_cursor);
  });

  const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);

  it.each([
    ['one character of the position changed', (c: string) => flip(c, 3)],
    ['one character of the signature changed', (c: string) => flip(c, c.length - 2)],
    ['cut short', (c: string) => c.slice(0, -4)],
    ['without its signature', (c: string) => c.split('.')[0] ?? ''],
    ['with another part', (c: string) => `${c}.AAAA`],
    ['empty', () => ''],
    ['not base64url', () => 'not a cursor!'],
    ['a forged position with no signature', () => `${Buffer.from(JSON.stringify(['a', 1, ['2030-01-01T00:00:00.000Z', 1]])).toString('base64url')}.AAAAAAAAAAAAAAAAAAAAAA`],
  ])('%s', async (_name, edit) => {
    const res = await list(`?limit=2&cursor=${encodeURIComponent(edit(cursor))}`);
    expectProblem(res, 400, 'malformed-request', { fields: ['cursor'] });
  });

  it('a signature differing only in the spare bits of its last character is another text: refused', async () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(cursor.at(-1) ?? '');
    const twin = cursor.slice(0, -1) + alphabet.charAt(last ^ 1);
    expect(Buffer.from(String(twin.split('.')[1]), 'base64url')).toEqual(Buffer.from(String(cursor.split('.')[1]), 'base64url'));
    expectProblem(await list(`?limit=2&cursor=${twin}`), 400, 'malformed-request', { fields: ['cursor'] });
  });

  it.each([
    ['a text where the instant goes', ['yesterday', 1]],
    ['an instant without milliseconds', ['2030-01-01T00:00:00Z', 1]],
    ['an impossible date', ['2030-02-31T00:00:00.000Z', 1]],
    ['an id beyond the integer column', ['2030-01-01T00:00:00.000Z', 2 ** 31]],
    ['an id that is not whole', ['2030-01-01T00:00:00.000Z', 1.5]],
    ['a key too short', ['2030-01-01T00:00:00.000Z']],
  ])('a validly signed cursor holding %s is 400, never a database error', async (_name, key) => {
    // Signed with the key this test process's app uses: what a leaked key or a past version could make.
    const forged = processCursors.encode('orders:any:', { direction: 'after', page: 2, key: key as (string | number)[] });
    expectProblem(await list(`?limit=2&cursor=${forged}`), 400, 'malformed-request', { fields: ['cursor'] });
  });

  it('a cursor of another filter, or of another list, is refused', async () => {
    expectProblem(await list(`?status=paid&limit=2&cursor=${cursor}`), 400, 'malformed-request', { fields: ['cursor'] });
    expectProblem(await t.request({ method: 'GET', url: `${PRODUCTS}?cursor=${cursor}` }), 400, 'malformed-request', { fields: ['cursor'] });
  });

  it('the same filter spelled otherwise keeps its cursors (status is case-insensitive)', async () => {
    const draft = String((await list('?status=draft&limit=1')).json<OrderListBody>().next_cursor);
    expect((await list(`?status=CREATED&limit=1&cursor=${draft}`)).statusCode).toBe(200);
  });

  it('page and cursor together are 422; a cursor longer than any issued is 422', async () => {
    expectProblem(await list(`?page=2&cursor=${cursor}`), 422, 'validation-error', { fields: ['page'] });
    expectProblem(await list(`?cursor=${'A'.repeat(1025)}`), 422, 'validation-error', { fields: ['cursor'] });
  });

  it('on /trpc and createCaller alike: a bad cursor is BAD_REQUEST, a good one pages', async () => {
    // The harness on the app's database (not closed here: the app owns it).
    const caller = (await createTestHarness({ database: t.database })).caller({ role: 'customer', userId: carol.id });
    await expect(caller.orders.list({ cursor: flip(cursor, 3) })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    const page = await caller.orders.list({ limit: 2, cursor });
    expect(page.data.map((order) => order.id)).toEqual(carolsOrders.slice(2, 4));
  });
});

describe('cursor paging of products with a sort of mixed directions', () => {
  it('-price,name pages through ties in price by name, then id, each product once', async () => {
    const category = freshCategory();
    const made = [];
    for (const [price, name] of [
      [500, 'b'],
      [500, 'a'],
      [700, 'z'],
      [500, 'a'],
      [100, 'c'],
      [700, 'a'],
    ] as const) {
      made.push(await createProduct(t, { category, price, name }));
    }
    const expected = [...made].sort((x, y) => y.price - x.price || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0) || x.id - y.id).map((p) => p.id);
    const seen: number[] = [];
    let url: string | null = `${PRODUCTS}?category=${category}&sort=-price,name&limit=2`;
    while (url !== null) {
      const body: ProductListBody = (await t.request({ method: 'GET', url })).json<ProductListBody>();
      seen.push(...body.data.map((p) => p.id));
      url = body.next_cursor === null ? null : `${PRODUCTS}?category=${category}&sort=-price,name&limit=2&cursor=${body.next_cursor}`;
    }
    expect(seen).toEqual(expected);
  });
});
