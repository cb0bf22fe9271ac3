/**
 * Every procedure declares who may call it (meta.policy, server/auth/policy.ts), and both doors
 * (REST and /trpc) refuse a caller the policy does not admit before the procedure runs.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { isPublic, PERSON_SCOPES, SCOPES, type Policy } from '../../server/auth/policy.ts';
import { appRouter } from '../../server/router.ts';
import type { Db } from '../../server/db/client.ts';
import { createContextInner } from '../../server/trpc/context.ts';
import type { Meta } from '../../server/trpc/meta.ts';
import { createCallerFactory, publicProcedure, router } from '../../server/trpc/trpc.ts';
import { listProcedures } from '../../server/trpc/trpc-internals.ts';
import { type TestUser, useTestApp } from '../helpers/app.ts';

/** The procedures and their meta, listed from the router (server/trpc/trpc-internals.ts). */
const procedures = listProcedures<Meta>(appRouter).map(({ path, meta }) => ({ path, meta }));

describe('every procedure declares its policy', () => {
  it('the router has procedures to check', () => {
    expect(procedures.map((p) => p.path)).toEqual(expect.arrayContaining(['orders.create', 'products.get', 'users.list']));
  });

  it.each(procedures)('$path declares meta.policy', ({ meta }) => {
    expect(meta?.policy).toBeDefined();
  });

  it.each(procedures)('$path: a non-public policy names the scope it needs, one of SCOPES', ({ meta }) => {
    const policy = meta?.policy;
    if (policy === undefined || isPublic(policy)) return;
    expect(policy.roles.length).toBeGreaterThan(0);
    // `scope` is required by the type; this catches a cast or a scope outside the catalogue.
    expect(SCOPES).toContain(policy.scope);
  });

  it.each(procedures)('$path: the OpenAPI document asks for a token exactly when the policy does', ({ meta }) => {
    const policy = meta?.policy as Policy;
    expect(meta?.openapi?.protect === false).toBe(isPublic(policy));
  });
  it('PERSON_SCOPES names, for each role of a person, exactly the scopes of the procedures that admit the role', () => {
    for (const role of ['customer', 'admin'] as const) {
      const usable = new Set<string>();
      for (const { meta } of procedures) {
        const policy = meta?.policy;
        if (policy !== undefined && !isPublic(policy) && policy.roles.includes(role)) usable.add(policy.scope);
      }
      expect([...PERSON_SCOPES[role]].sort(), role).toEqual([...usable].sort());
    }
  });

  it('a procedure without a policy fails closed: nobody reaches its body', async () => {
    let ran = false;
    const undeclared = router({
      open: publicProcedure.meta({ policy: undefined }).query(() => {
        ran = true;
        return 'reached';
      }),
    });
    const caller = createCallerFactory(undeclared)(createContextInner({ db: {} as Db, caller: null }));
    await expect(caller.open()).rejects.toMatchObject({ code: 'INTERNAL_SERVER_ERROR' });
    expect(ran).toBe(false);
  });
});

let customer: TestUser;
const t = useTestApp();
beforeAll(async () => {
  customer = await t.createUser('customer');
});

interface Call {
  rest: { method: 'GET' | 'POST' | 'PUT'; url: string; payload?: object };
  trpc: { procedure: string; input: object; mutation: boolean };
}

async function throughBothDoors(call: Call, token: string | undefined): Promise<{ rest: number; trpc: number }> {
  const rest = await t.request({ ...call.rest, url: `/api/v1${call.rest.url}`, ...(token ? { token } : {}) });
  const { procedure, input, mutation } = call.trpc;
  const trpc = mutation
    ? await t.request({ method: 'POST', url: `/trpc/${procedure}`, payload: input, ...(token ? { token } : {}) })
    : await t.request({ method: 'GET', url: `/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify(input))}`, ...(token ? { token } : {}) });
  return { rest: rest.statusCode, trpc: trpc.statusCode };
}

const ordersList: Call = { rest: { method: 'GET', url: '/orders' }, trpc: { procedure: 'orders.list', input: {}, mutation: false } };
const ordersCreate = (customerId: number): Call => ({
  rest: { method: 'POST', url: '/orders', payload: { customer_id: customerId, items: [] } },
  trpc: { procedure: 'orders.create', input: { customer_id: customerId, items: [] }, mutation: true },
});
const productsCreate: Call = {
  rest: { method: 'POST', url: '/products', payload: { sku: 'POLICY-1', name: 'Mug', category: 'kitchen', price: 900 } },
  trpc: { procedure: 'products.create', input: { sku: 'POLICY-2', name: 'Mug', category: 'kitchen', price: 900 }, mutation: true },
};
const usersList: Call = { rest: { method: 'GET', url: '/users' }, trpc: { procedure: 'users.list', input: {}, mutation: false } };
const usersReplace = (user: TestUser): Call => ({
  rest: { method: 'PUT', url: `/users/${user.id}`, payload: { email: user.email, name: 'Renamed' } },
  trpc: { procedure: 'users.replace', input: { id: user.id, email: user.email, name: 'Renamed' }, mutation: true },
});

describe('a caller the policy does not admit is refused on REST and /trpc alike', () => {
  it('orders.list: a service client without orders:read is 403', async () => {
    const token = await t.serviceToken(['products:write']);
    expect(await throughBothDoors(ordersList, token)).toEqual({ rest: 403, trpc: 403 });
  });

  it('orders.create: a service client holding only orders:read is 403', async () => {
    const token = await t.serviceToken(['orders:read']);
    expect(await throughBothDoors(ordersCreate(customer.id), token)).toEqual({ rest: 403, trpc: 403 });
  });

  it('products.create: a customer is 403', async () => {
    expect(await throughBothDoors(productsCreate, customer.token)).toEqual({ rest: 403, trpc: 403 });
  });

  it('users.list: a customer is 403', async () => {
    expect(await throughBothDoors(usersList, customer.token)).toEqual({ rest: 403, trpc: 403 });
  });

  it('users.replace: a service client is 403 whatever its scopes', async () => {
    const token = await t.serviceToken([...SCOPES]);
    expect(await throughBothDoors(usersReplace(customer), token)).toEqual({ rest: 403, trpc: 403 });
  });

  it('orders.list: no token is 401', async () => {
    expect(await throughBothDoors(ordersList, undefined)).toEqual({ rest: 401, trpc: 401 });
  });
});

describe('a caller the policy admits gets through on both doors', () => {
  it('orders.list: a service client with orders:read', async () => {
    const token = await t.serviceToken(['orders:read']);
    expect(await throughBothDoors(ordersList, token)).toEqual({ rest: 200, trpc: 200 });
  });

  it('users.list: a service client with users:read', async () => {
    const token = await t.serviceToken(['users:read']);
    expect(await throughBothDoors(usersList, token)).toEqual({ rest: 200, trpc: 200 });
  });
});
