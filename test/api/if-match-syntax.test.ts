/**
 * Regression (schemathesis): a malformed If-Match that contained a `*` anywhere (`x*y`,
 * `"nope", *`) acted as `*` and let a write through. RFC 9110 13.1.1: `*` stands alone; anything
 * that is not `*` or a list of entity tags matches nothing, so the precondition fails (412).
 */
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.ts';
import { expectProblem } from '../helpers/problems.ts';

const t = useTestApp();

let sequence = 0;
async function newProduct(): Promise<{ id: number; etag: string }> {
  sequence += 1;
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/products',
    token: t.admin.token,
    payload: { sku: `IFM-${sequence}-${Date.now()}`, name: 'Mug', category: 'kitchen', price: 900, stock: 1 },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { id: res.json<{ id: number }>().id, etag: String(res.headers.etag) };
}

describe('If-Match is `*` alone or a list of entity tags; anything else matches nothing (412)', () => {
  for (const header of ['x*y', '"nope", *', '*, "nope"', 'W/*', '"unterminated', 'not-a-tag']) {
    it(`DELETE with If-Match: ${header} answers 412 and deletes nothing`, async () => {
      const product = await newProduct();
      const res = await t.request({ method: 'DELETE', url: `/api/v1/products/${product.id}`, token: t.admin.token, headers: { 'if-match': header } });
      expectProblem(res, 412, 'precondition-failed');
      expect((await t.request({ method: 'GET', url: `/api/v1/products/${product.id}` })).statusCode).toBe(200);
    });
  }

  it('If-Match: * (alone, with spaces around) matches the existing resource', async () => {
    const product = await newProduct();
    const res = await t.request({ method: 'DELETE', url: `/api/v1/products/${product.id}`, token: t.admin.token, headers: { 'if-match': ' * ' } });
    expect(res.statusCode).toBe(204);
  });

  it('a list naming the current tag among others matches', async () => {
    const product = await newProduct();
    const res = await t.request({
      method: 'DELETE',
      url: `/api/v1/products/${product.id}`,
      token: t.admin.token,
      headers: { 'if-match': `"stale", W/"weak", ${product.etag}` },
    });
    expect(res.statusCode).toBe(204);
  });

  it('a malformed If-None-Match is ignored: the GET answers 200, not 304', async () => {
    const product = await newProduct();
    const res = await t.request({ method: 'GET', url: `/api/v1/products/${product.id}`, headers: { 'if-none-match': `x*y` } });
    expect(res.statusCode).toBe(200);
  });
});
