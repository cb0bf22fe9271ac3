/**
 * Scopes are enforced on every procedure, through every door (issue 10 item 6, docs/api.md#scopes):
 * for each non-public procedure of the router and each role its policy admits, a token lacking
 * only the procedure's scope is 403 `insufficient-scope` with RFC 6750's challenge, and a token
 * holding exactly that scope is admitted (it may then be 404 or 422 on the made-up input: that
 * proves the policy let it through). The procedures are read from the router, so a new one is
 * covered without touching this file.
 */
import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { isPublic, SCOPES, type RolePolicy, type Scope } from '../../server/auth/policy.ts';
import type { Caller, Role } from '../../server/auth/tokens.ts';
import { DomainError } from '../../server/errors/problems.ts';
import { restRoutes, type RestRoute } from '../../server/http/rest-routes.ts';
import { appRouter, createCaller } from '../../server/router.ts';
import { createContextInner } from '../../server/trpc/context.ts';
import type { Meta } from '../../server/trpc/meta.ts';
import { listProcedures } from '../../server/trpc/trpc-internals.ts';
import { orders } from '../../server/modules/orders/orders.table.ts';
import { type TestUser, useTestApp } from '../helpers/app.ts';
import { createOrder, createOrderScene, orderAction, ORDERS } from '../helpers/orders.ts';
import { PAYMENTS, payOrder } from '../helpers/payments.ts';
import { expectDomainError, expectProblem } from '../helpers/problems.ts';
import { createProduct, PRODUCTS, productInput } from '../helpers/products.ts';
import { registerUser, userInput, USERS } from '../helpers/users.ts';

interface ProcedureUnderTest {
  path: string;
  type: 'query' | 'mutation';
  policy: RolePolicy;
  route: RestRoute | undefined;
}

const routes = new Map(restRoutes(appRouter).map((route) => [route.procedurePath, route]));

/** Every procedure of the router with its policy (server/trpc/trpc-internals.ts lists them). */
const allProcedures = listProcedures<Meta>(appRouter).map(({ path, kind, meta }) => ({ path, type: kind, policy: meta?.policy }));

const guarded: ProcedureUnderTest[] = allProcedures.flatMap(({ path, type, policy }) =>
  policy === undefined || isPublic(policy) || type === 'subscription' ? [] : [{ path, type, policy, route: routes.get(path) }],
);

/** One row per procedure and admitted role. */
const matrix = guarded.flatMap((procedure) => procedure.policy.roles.map((role) => ({ ...procedure, role, scope: procedure.policy.scope })));

const WWW_AUTHENTICATE = (scope: Scope) => `Bearer realm="order-service", error="insufficient_scope", scope="${scope}"`;
const allBut = (scope: Scope): Scope[] => SCOPES.filter((s) => s !== scope);

/** No resource has these: an admitted call ends in 404 or 422, never changing anything. */
const MISSING_ID = 999_999;
const MISSING_KEY = 'no-such-resource';

let customer: TestUser;
const t = useTestApp();
beforeAll(async () => {
  customer = await t.createUser('customer');
});

/** An access token of `role` whose `scope` claim lists exactly `scopes`. */
function tokenFor(role: Role, scopes: readonly Scope[]): Promise<string> {
  const scope = scopes.join(' ');
  if (role === 'service') return t.tokens.mint({ sub: 'client-scope-matrix', role, scope });
  const user = role === 'admin' ? t.admin : customer;
  return t.tokens.mint({ sub: String(user.id), role, name: user.name, scope });
}

/** The Caller such a token gives, for createCaller. */
function callerFor(role: Role, scopes: readonly Scope[]): Caller {
  if (role === 'service') return { sub: 'client-scope-matrix', clientId: 'client-scope-matrix', role, name: undefined, scopes: new Set(scopes) };
  const user = role === 'admin' ? t.admin : customer;
  return { sub: String(user.id), userId: user.id, role, name: user.name, scopes: new Set(scopes) };
}

/** The made-up input: path parameters naming nothing, no other field. */
function inputOf(procedure: ProcedureUnderTest): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [name, kind] of procedure.route?.pathParams ?? []) input[name] = kind === 'int' ? MISSING_ID : MISSING_KEY;
  return input;
}

function callRest(procedure: ProcedureUnderTest & { route: RestRoute }, token: string): Promise<LightMyRequestResponse> {
  const { route } = procedure;
  const url = `/api/v1${route.path.replace(/\{(\w+)\}/g, (_m, name: string) => (route.pathParams.get(name) === 'int' ? String(MISSING_ID) : MISSING_KEY))}`;
  const body = route.hasBody ? { payload: '{}', headers: { 'content-type': route.contentTypes[0] ?? 'application/json' } } : {};
  return t.request({ method: route.method, url, token, ...body });
}

function callTrpc(procedure: ProcedureUnderTest, token: string): Promise<LightMyRequestResponse> {
  const input = inputOf(procedure);
  return procedure.type === 'query'
    ? t.request({ method: 'GET', url: `/trpc/${procedure.path}?input=${encodeURIComponent(JSON.stringify(input))}`, token })
    : t.request({ method: 'POST', url: `/trpc/${procedure.path}`, payload: input, token });
}

function callDirect(procedure: ProcedureUnderTest, caller: Caller): Promise<unknown> {
  let node: unknown = createCaller(createContextInner({ db: t.db, caller }));
  for (const name of procedure.path.split('.')) node = (node as Record<string, unknown>)[name];
  return (node as (input: unknown) => Promise<unknown>)(inputOf(procedure));
}

/** Whatever a call ended with, as a status: its HTTP status, or the problem's of a createCaller rejection. */
async function directStatus(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return 200;
  } catch (error) {
    const cause = error instanceof Error ? error.cause : undefined;
    return cause instanceof DomainError ? cause.status : 500;
  }
}

const isAdmitted = (status: number) => status !== 401 && status !== 403 && status < 500;

describe('the matrix covers the router', () => {
  it('every non-public procedure is in it, with each role its policy admits', () => {
    expect(guarded.map((p) => p.path)).toEqual(expect.arrayContaining(['orders.create', 'orders.list', 'users.get', 'users.replace', 'products.create', 'payments.create']));
    expect(matrix.length).toBeGreaterThanOrEqual(guarded.length);
    expect(matrix.filter((row) => row.route !== undefined).length).toBeGreaterThan(0);
  });
});

describe.each(matrix)('$path as $role (needs $scope)', (row) => {
  it('lacking only its scope: 403 insufficient-scope with the WWW-Authenticate challenge on REST', async ({ skip }) => {
    if (row.route === undefined) return skip('no REST route');
    const res = await callRest({ ...row, route: row.route }, await tokenFor(row.role, allBut(row.scope)));
    const problem = expectProblem(res, 403, 'insufficient-scope');
    expect(problem.scope).toBe(row.scope);
    expect(problem.detail).toContain(`"${row.scope}"`);
    expect(res.headers['www-authenticate']).toBe(WWW_AUTHENTICATE(row.scope));
  });

  it('lacking only its scope: 403 insufficient-scope with the WWW-Authenticate challenge on /trpc', async () => {
    const res = await callTrpc(row, await tokenFor(row.role, allBut(row.scope)));
    expect(res.statusCode).toBe(403);
    expect(res.headers['www-authenticate']).toBe(WWW_AUTHENTICATE(row.scope));
    const body = res.json<{ error: { data: { code: string; problem: { type: string; scope: string } } } }>();
    expect(body.error.data.code).toBe('FORBIDDEN');
    expect(body.error.data.problem).toMatchObject({ type: '/problems/insufficient-scope', scope: row.scope });
  });

  it('lacking only its scope: FORBIDDEN with the insufficient-scope problem through createCaller', async () => {
    const domain = await expectDomainError(callDirect(row, callerFor(row.role, allBut(row.scope))), 'FORBIDDEN', 'insufficient-scope');
    expect(domain.extensions).toEqual({ scope: row.scope });
    expect(domain.headers['www-authenticate']).toBe(WWW_AUTHENTICATE(row.scope));
  });

  it('holding exactly its scope: admitted on every door (not 401/403)', async () => {
    const token = await tokenFor(row.role, [row.scope]);
    if (row.route !== undefined) {
      const rest = await callRest({ ...row, route: row.route }, token);
      expect(isAdmitted(rest.statusCode), `REST ${rest.statusCode} ${rest.body}`).toBe(true);
    }
    const trpc = await callTrpc(row, token);
    expect(isAdmitted(trpc.statusCode), `/trpc ${trpc.statusCode} ${trpc.body}`).toBe(true);
    const direct = await directStatus(callDirect(row, callerFor(row.role, [row.scope])));
    expect(isAdmitted(direct), `createCaller ${direct}`).toBe(true);
  });
});

describe('a person whose token grants every scope acts as before: the role and resource rules decide', () => {
  it.each([
    ['every scope listed', (): readonly Scope[] | undefined => SCOPES],
    ['no scope claim', (): readonly Scope[] | undefined => undefined],
  ])('a customer with %s orders, confirms, pays and reads their own things; another user stays 404, products 403', async (_name, scopes) => {
    const alice = await t.createUser('customer');
    const claim = scopes();
    const token = await t.tokens.mint({ sub: String(alice.id), role: 'customer', name: alice.name, ...(claim ? { scope: claim.join(' ') } : {}) });
    const scene = await createOrderScene(t);
    const draft = await createOrder(t, { items: [{ product_id: scene.mug.id, quantity: 1 }], address: '1 Main St' }, token);
    expect((await orderAction(t, draft.id, 'confirm', token)).statusCode).toBe(200);
    const payment = await payOrder(t, draft, token);
    expect((await t.request({ method: 'GET', url: `${PAYMENTS}/${payment.id}`, token })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: `${ORDERS}/${draft.id}`, token })).json()).toMatchObject({ status: 'paid' });
    expect((await t.request({ method: 'GET', url: `${USERS}/${alice.id}`, token })).statusCode).toBe(200);
    expectProblem(await t.request({ method: 'GET', url: `${USERS}/${customer.id}`, token }), 404, 'not-found');
    expectProblem(await t.request({ method: 'POST', url: PRODUCTS, payload: productInput(), token }), 403, 'forbidden');
  });
});

describe('a token with a scope claim is limited to it whatever its role', () => {
  it('a customer token with scope orders:read lists orders but cannot create one (403 insufficient-scope, nothing created)', async () => {
    const token = await tokenFor('customer', ['orders:read']);
    expect((await t.request({ method: 'GET', url: ORDERS, token })).statusCode).toBe(200);
    const product = await createProduct(t, { stock: 10 });
    const before = await t.db.$count(orders);
    const res = await t.request({ method: 'POST', url: ORDERS, payload: { items: [{ product_id: product.id, quantity: 1 }] }, token });
    expect(expectProblem(res, 403, 'insufficient-scope').scope).toBe('orders:write');
    expect(res.headers['www-authenticate']).toBe(WWW_AUTHENTICATE('orders:write'));
    expect(await t.db.$count(orders)).toBe(before);
  });

  it('an admin token with an empty scope claim reaches nothing that needs a scope (empty is not absent)', async () => {
    const token = await t.tokens.mint({ sub: String(t.admin.id), role: 'admin', scope: '' });
    expect(expectProblem(await t.request({ method: 'GET', url: USERS, token }), 403, 'insufficient-scope').scope).toBe('users:read');
    expect((await t.request({ method: 'GET', url: PRODUCTS, token })).statusCode).toBe(200);
  });

  it('an admin token without users:write may not create an admin through the public registration', async () => {
    const limited = await tokenFor('admin', allBut('users:write'));
    const res = await t.request({ method: 'POST', url: USERS, payload: userInput({ role: 'admin' }), token: limited });
    expect(expectProblem(res, 403, 'insufficient-scope').scope).toBe('users:write');
    expect(res.headers['www-authenticate']).toBe(WWW_AUTHENTICATE('users:write'));
    expect((await registerUser(t, { role: 'admin' }, await tokenFor('admin', ['users:write']))).role).toBe('admin');
    // Registering a customer needs no token, so no scope either.
    expect((await registerUser(t, {}, limited)).role).toBe('customer');
  });

  it('a role the policy does not list stays 403 forbidden, with no insufficient_scope challenge, whatever its scopes', async () => {
    const res = await t.request({ method: 'POST', url: PRODUCTS, payload: productInput(), token: await tokenFor('customer', SCOPES) });
    expectProblem(res, 403, 'forbidden');
    expect(res.headers['www-authenticate']).toBeUndefined();
  });
});

describe('a service caller always needs the scope', () => {
  it('a service token without a scope claim is refused everything that needs one, on REST and /trpc', async () => {
    const token = await t.tokens.mint({ sub: 'client-unscoped', role: 'service' });
    expect(expectProblem(await t.request({ method: 'GET', url: ORDERS, token }), 403, 'insufficient-scope').scope).toBe('orders:read');
    const trpc = await t.request({ method: 'GET', url: `/trpc/users.list?input=${encodeURIComponent('{}')}`, token });
    expect(trpc.statusCode).toBe(403);
    expect(trpc.headers['www-authenticate']).toBe(WWW_AUTHENTICATE('users:read'));
  });
});

describe('an admin token without a scope claim (the development banner token, tokens minted elsewhere) reaches everything its role does', () => {
  const adminRows = guarded.filter((procedure) => procedure.policy.roles.includes('admin'));

  it.each(adminRows)('$path is admitted on REST and /trpc', async (procedure) => {
    const token = await t.tokens.mint({ sub: String(t.admin.id), role: 'admin', name: t.admin.name });
    if (procedure.route !== undefined) {
      const rest = await callRest({ ...procedure, route: procedure.route }, token);
      expect(isAdmitted(rest.statusCode), `REST ${rest.statusCode} ${rest.body}`).toBe(true);
    }
    const trpc = await callTrpc(procedure, token);
    expect(isAdmitted(trpc.statusCode), `/trpc ${trpc.statusCode} ${trpc.body}`).toBe(true);
  });
});
