/**
 * The authorization policy (docs/api.md#scopes) as pure functions: who may call a procedure
 * (roles and scopes), and what an admitted caller may do with one order or user.
 */
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../server/errors/problems.ts';
import {
  allows,
  hasScope,
  isSelf,
  mayChangeRole,
  mayCreateRole,
  mayMoveTo,
  mayOrderFor,
  mayReadOrder,
  mayReadUser,
  mayWriteUser,
  ownCustomerId,
  PUBLIC,
  refusal,
  type RolePolicy,
  type Scope,
} from '../../server/auth/policy.ts';
import type { ServiceCaller, UserCaller } from '../../server/auth/tokens.ts';

/** A person's token: without scopes (no `scope` claim) the role alone bounds it; with them, they limit it. */
const person =
  (role: 'customer' | 'admin', name: string) =>
  (userId = role === 'admin' ? 1 : 7, ...scopes: Scope[]): UserCaller => ({
    sub: String(userId),
    userId,
    role,
    name,
    scopes: scopes.length === 0 ? 'all' : new Set(scopes),
  });
const customer = person('customer', 'Ada');
const admin = person('admin', 'Grace');
/** A token whose `scope` claim is present but empty: it grants nothing. */
const withEmptyClaim = (caller: UserCaller): UserCaller => ({ ...caller, scopes: new Set() });
const service = (...scopes: Scope[]): ServiceCaller => ({ sub: 'warehouse', clientId: 'warehouse', role: 'service', name: undefined, scopes: new Set(scopes) });

const ordersRead: RolePolicy = { roles: ['customer', 'admin', 'service'], scope: 'orders:read' };
const ordersWrite: RolePolicy = { roles: ['customer', 'admin', 'service'], scope: 'orders:write' };
const productsWrite: RolePolicy = { roles: ['admin', 'service'], scope: 'products:write' };
const usersWrite: RolePolicy = { roles: ['customer', 'admin'], scope: 'users:write' };

/** The problem slug `refusal` answers, or 'admitted'. */
const verdict = (policy: RolePolicy, caller: UserCaller | ServiceCaller | null): string => refusal(policy, caller)?.slug ?? 'admitted';

describe('allows: a public policy admits anyone, with or without a token', () => {
  it.each([null, customer(), admin(), service(), withEmptyClaim(customer())])('admits %o', (caller) => {
    expect(allows(PUBLIC, caller)).toBe(true);
  });
});

describe('hasScope: a scope claim limits; no claim leaves a person to their role; a service holds only its claim', () => {
  it('a person without a scope claim holds every scope (the role decides)', () => {
    expect(hasScope(customer(), 'orders:write')).toBe(true);
    expect(hasScope(admin(), 'clients:manage')).toBe(true);
  });

  it('a person with a scope claim holds only what it lists', () => {
    expect(hasScope(customer(7, 'orders:read'), 'orders:read')).toBe(true);
    expect(hasScope(customer(7, 'orders:read'), 'orders:write')).toBe(false);
  });

  it('an empty scope claim grants nothing (it is not the same as no claim)', () => {
    expect(hasScope(withEmptyClaim(admin()), 'orders:read')).toBe(false);
  });

  it('a service holds only its claim; without one, nothing', () => {
    expect(hasScope(service('orders:read'), 'orders:read')).toBe(true);
    expect(hasScope(service('orders:read'), 'orders:write')).toBe(false);
    expect(hasScope(service(), 'orders:read')).toBe(false);
  });
});

describe('refusal: no token 401, a role not listed 403 forbidden, a missing scope 403 insufficient-scope', () => {
  it('no token is 401 unauthorized', () => {
    expect(verdict(ordersRead, null)).toBe('unauthorized');
    expect(allows(ordersRead, null)).toBe(false);
  });

  it('people without a scope claim act by role: a customer and an admin are admitted', () => {
    expect(verdict(ordersWrite, customer())).toBe('admitted');
    expect(verdict(ordersWrite, admin())).toBe('admitted');
  });

  it('a token with a scope claim is limited to it whatever its role', () => {
    expect(verdict(ordersRead, customer(7, 'orders:read'))).toBe('admitted');
    expect(verdict(ordersWrite, customer(7, 'orders:read'))).toBe('insufficient-scope');
    expect(verdict(productsWrite, admin(1, 'orders:read', 'orders:write'))).toBe('insufficient-scope');
    expect(verdict(ordersRead, withEmptyClaim(admin()))).toBe('insufficient-scope');
  });

  it('a role not listed is forbidden whatever its token grants', () => {
    expect(verdict(productsWrite, customer())).toBe('forbidden');
    expect(verdict(productsWrite, customer(7, 'products:write'))).toBe('forbidden');
    expect(verdict(usersWrite, service('users:write', 'users:read', 'orders:write'))).toBe('forbidden');
  });

  it('a service client is admitted only with the scope, and a service token without a claim reaches nothing', () => {
    expect(verdict(productsWrite, service('products:write'))).toBe('admitted');
    expect(verdict(productsWrite, service('orders:write'))).toBe('insufficient-scope');
    expect(verdict(productsWrite, service())).toBe('insufficient-scope');
  });

  it('insufficient-scope names the scope in the detail, the problem and the RFC 6750 challenge', () => {
    const error = refusal(ordersWrite, customer(7, 'orders:read'));
    expect(error).toBeInstanceOf(DomainError);
    expect(error?.status).toBe(403);
    expect(error?.message).toContain('"orders:write"');
    expect(error?.extensions).toEqual({ scope: 'orders:write' });
    expect(error?.headers['www-authenticate']).toBe('Bearer realm="order-service", error="insufficient_scope", scope="orders:write"');
  });

  it('forbidden names the roles, and the scope a service client would need', () => {
    expect(refusal(productsWrite, customer())?.message).toBe(
      'Your role may not perform this operation (needs the admin role or a service client with the "products:write" scope).',
    );
    expect(refusal(usersWrite, service())?.message).toBe('Your role may not perform this operation (needs the customer or admin role).');
  });
});

describe('orders: a customer reads and orders only for themself; admins and services for anyone', () => {
  it('ownCustomerId confines customers and no one else', () => {
    expect(ownCustomerId(customer(7))).toBe(7);
    expect(ownCustomerId(admin())).toBeUndefined();
    expect(ownCustomerId(service('orders:read'))).toBeUndefined();
  });

  it('mayReadOrder: own order yes, someone else’s no', () => {
    expect(mayReadOrder(customer(7), { customerId: 7 })).toBe(true);
    expect(mayReadOrder(customer(7), { customerId: 8 })).toBe(false);
    expect(mayReadOrder(admin(), { customerId: 8 })).toBe(true);
    expect(mayReadOrder(service('orders:read'), { customerId: 8 })).toBe(true);
  });

  it('mayOrderFor: a customer names only themself', () => {
    expect(mayOrderFor(customer(7), 7)).toBe(true);
    expect(mayOrderFor(customer(7), 8)).toBe(false);
    expect(mayOrderFor(admin(), 8)).toBe(true);
  });

  it('mayMoveTo: admin-only moves (delivered, completed) are refused to everyone else', () => {
    expect(mayMoveTo(admin(), { adminOnly: true })).toBe(true);
    expect(mayMoveTo(customer(), { adminOnly: true })).toBe(false);
    expect(mayMoveTo(service('orders:write'), { adminOnly: true })).toBe(false);
    expect(mayMoveTo(customer(), {})).toBe(true);
  });
});

describe('users: yourself, any as an admin; services read with users:read and never write; a scope claim limits all', () => {
  it('isSelf is true only for the user with that id', () => {
    expect(isSelf(customer(7), 7)).toBe(true);
    expect(isSelf(customer(7), 8)).toBe(false);
    expect(isSelf(service(), 7)).toBe(false);
  });

  it('mayReadUser', () => {
    expect(mayReadUser(customer(7), 7)).toBe(true);
    expect(mayReadUser(customer(7), 8)).toBe(false);
    expect(mayReadUser(admin(), 8)).toBe(true);
    expect(mayReadUser(service('users:read'), 8)).toBe(true);
    expect(mayReadUser(service('orders:read'), 8)).toBe(false);
    expect(mayReadUser(customer(7, 'orders:read'), 7)).toBe(false);
    expect(mayReadUser(admin(1, 'users:read'), 8)).toBe(true);
  });

  it('mayWriteUser', () => {
    expect(mayWriteUser(customer(7), 7)).toBe(true);
    expect(mayWriteUser(customer(7), 8)).toBe(false);
    expect(mayWriteUser(admin(), 8)).toBe(true);
    expect(mayWriteUser(service('users:read', 'users:write'), 8)).toBe(false);
    expect(mayWriteUser(customer(7, 'users:read'), 7)).toBe(false);
    expect(mayWriteUser(customer(7, 'users:write'), 7)).toBe(true);
  });

  it('mayCreateRole: anyone registers a customer; only an admin granted users:write creates an admin', () => {
    expect(mayCreateRole(null, 'customer')).toBe(true);
    expect(mayCreateRole(customer(), 'customer')).toBe(true);
    expect(mayCreateRole(null, 'admin')).toBe(false);
    expect(mayCreateRole(customer(), 'admin')).toBe(false);
    expect(mayCreateRole(service('users:read', 'users:write'), 'admin')).toBe(false);
    expect(mayCreateRole(admin(), 'admin')).toBe(true);
    expect(mayCreateRole(admin(1, 'users:write'), 'admin')).toBe(true);
    expect(mayCreateRole(admin(1, 'users:read'), 'admin')).toBe(false);
  });

  it('mayChangeRole: admins only, granted users:write', () => {
    expect(mayChangeRole(admin())).toBe(true);
    expect(mayChangeRole(customer())).toBe(false);
    expect(mayChangeRole(admin(1, 'orders:write'))).toBe(false);
  });
});
