/**
 * The docs page's "Try it out" (Swagger UI at /api/docs) fills every query parameter with its
 * example from the OpenAPI document and sends them all. A filter's example therefore narrows
 * the list a first-time user sees, usually to nothing (issue 36 item 13: `status=active`, a
 * January date range and `metadata[erp_id]=ERP-1042` gave empty lists). The rule
 * (docs/api.md#the-openapi-document): a list's query parameters carry no example that narrows
 * it, so each list tried with its examples answers the same items as the plain list.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/app.ts';
import { createOrderScene, draftOrder, orderInStatus } from '../helpers/orders.ts';
import { PAYMENTS } from '../helpers/payments.ts';

interface Parameter {
  name: string;
  in: string;
  style?: string;
  explode?: boolean;
  example?: unknown;
  schema?: { example?: unknown };
}
interface Operation {
  operationId: string;
  parameters?: (Parameter | { $ref: string })[];
  'x-list'?: boolean;
}

const t = await createTestApp();
afterAll(() => t.close());
const doc = (await t.request({ method: 'GET', url: '/api/openapi.json' })).json<{ paths: Record<string, Record<string, Operation>> }>();

/** The lists of the document, with the query parameters Swagger UI fills in (those with an example). */
const lists = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.values(item)
    .filter((op) => op['x-list'])
    .map((op) => ({
      path,
      operationId: op.operationId,
      examples: (op.parameters ?? [])
        .filter((p): p is Parameter => 'in' in p && p.in === 'query')
        .map((p) => ({ parameter: p, example: p.example ?? p.schema?.example }))
        .filter((p) => p.example !== undefined),
    })),
);

/** A parameter's example serialized the way OpenAPI (and Swagger UI) sends it: form, exploded; deepObject. */
function serialize(query: URLSearchParams, parameter: Parameter, example: unknown): void {
  if (parameter.style === 'deepObject' && typeof example === 'object' && example !== null) {
    for (const [key, value] of Object.entries(example)) query.append(`${parameter.name}[${key}]`, String(value));
  } else if (Array.isArray(example)) {
    if (parameter.explode === false) query.append(parameter.name, example.join(','));
    else for (const value of example) query.append(parameter.name, String(value));
  } else {
    query.append(parameter.name, String(example));
  }
}

describe('the docs page\'s "Try it out" (every query example filled in) lists what the plain list lists', async () => {
  // Something in every list a path can be filled for: a paid order (its payment and events).
  const scene = await createOrderScene(t);
  await draftOrder(t, scene);
  const paid = await orderInStatus(t, 'paid', scene.alice, { items: [{ product_id: scene.mug.id, quantity: 1 }], address: '1 Main St' });
  const payments = (await t.request({ method: 'GET', url: `${PAYMENTS}?order_id=${paid.id}`, token: t.admin.token })).json<{ data: { id: number }[] }>();
  const ids: Record<string, number | undefined> = { '/api/v1/orders/{id}': paid.id, '/api/v1/payments/{id}': payments.data[0]?.id };

  it('the lists are found in the document', () => {
    expect(lists.map((list) => list.path)).toEqual(expect.arrayContaining(['/api/v1/products', '/api/v1/orders', '/api/v1/payments', '/api/v1/events']));
  });

  it.each(lists)('$operationId ($path)', async ({ path, examples }) => {
    const owner = Object.keys(ids).find((prefix) => path.startsWith(`${prefix}/`));
    const url = owner ? path.replace('{id}', String(ids[owner])) : path;
    // A list under a resource the scene has none of cannot be tried; it must then have nothing to fill in.
    if (url.includes('{')) {
      expect(examples.map((e) => e.parameter.name)).toEqual([]);
      return;
    }
    const query = new URLSearchParams();
    for (const { parameter, example } of examples) serialize(query, parameter, example);
    const plain = await t.request({ method: 'GET', url, token: t.admin.token });
    const tried = await t.request({ method: 'GET', url: `${url}?${query}`, token: t.admin.token });
    expect(plain.statusCode, plain.body).toBe(200);
    expect(tried.statusCode, `${url}?${query}: ${tried.body}`).toBe(200);
    const idsOf = (body: string) => (JSON.parse(body) as { data: { id: unknown }[] }).data.map((item) => item.id).sort();
    expect(idsOf(tried.body), `${url}?${query}`).toEqual(idsOf(plain.body));
  });

  it('the seeded lists are not empty, so an equal answer means something', async () => {
    for (const url of ['/api/v1/products', '/api/v1/orders', PAYMENTS, '/api/v1/events', `/api/v1/orders/${paid.id}/events`]) {
      const res = await t.request({ method: 'GET', url, token: t.admin.token });
      expect(res.json<{ data: unknown[] }>().data.length, url).toBeGreaterThan(0);
    }
  });
});
