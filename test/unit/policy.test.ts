/**
 * The authorization policy (CONTRACT section 7) as pure functions: who may call a procedure
 * (roles and scopes), and what an admitted caller may do with one order or user.
 */
import { describe, expect, it } from 'vitest';
import {
  allows,
  describeRefusal,
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
  type RolePolicy,
  type Scope,
} from '../../server/auth/policy.ts';
import type { ServiceCaller, UserCaller } from '../../server/auth/tokens.ts';

const customer = (userId = 7): UserCaller => ({ sub: String(userId), userId, role: 'customer', name: 'Ada', scopes: new Set() });
const admin = (userId = 1): UserCaller => ({ sub: String(userId), userId, role: 'admin', name: 'Grace', scopes: new Set() });
const service = (...scopes: Scope[]): ServiceCaller => ({ sub: 'warehouse', clientId: 'warehouse', role: 'service', name: undefined, scopes: new Set(scopes) });

const ordersRead: RolePolicy = { roles: ['customer', 'admin', 'service'], scope: 'orders:read' };
const productsWrite: RolePolicy = { roles: ['admin', 'service'], scope: 'products:write' };
const peopleOnly: RolePolicy = { roles: ['customer', 'admin'] };

describe('allows: a public policy admits anyone, with or without a token', () => {
  it.each([null, customer(), admin(), service()])('admits %o', (caller) => {
    expect(allows(PUBLIC, caller)).toBe(true);
  });
});

describe('allows: a role policy admits the listed roles; services also need its scope', () => {
  it('no token is never admitted', () => {
    expect(allows(ordersRead, null)).toBe(false);
  });

  it('people act by role: a customer and an admin need no scope', () => {
    expect(allows(ordersRead, customer())).toBe(true);
    expect(allows(ordersRead, admin())).toBe(true);
  });

  it('a role not listed is refused whatever it holds', () => {
    expect(allows(productsWrite, customer())).toBe(false);
    expect(allows(peopleOnly, service('orders:read', 'orders:write', 'users:read'))).toBe(false);
  });

  it('a service client is admitted only with the scope', () => {
    expect(allows(productsWrite, service('products:write'))).toBe(true);
    expect(allows(productsWrite, service('orders:write'))).toBe(false);
    expect(allows(productsWrite, service())).toBe(false);
  });

  it('a role policy without a scope admits a listed service client by role alone', () => {
    expect(allows({ roles: ['service'] }, service())).toBe(true);
  });
});

describe('describeRefusal says what the policy needs', () => {
  it('to a service client without the scope: the scope', () => {
    expect(describeRefusal(ordersRead, service())).toContain('"orders:read" scope');
  });

  it('to a role not listed: the roles, and the scope a service would need', () => {
    expect(describeRefusal(productsWrite, customer())).toBe(
      'Your role may not perform this operation (needs the admin role or the "products:write" scope).',
    );
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

describe('users: yourself, any as an admin; services read with users:read and never write', () => {
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
  });

  it('mayWriteUser', () => {
    expect(mayWriteUser(customer(7), 7)).toBe(true);
    expect(mayWriteUser(customer(7), 8)).toBe(false);
    expect(mayWriteUser(admin(), 8)).toBe(true);
    expect(mayWriteUser(service('users:read'), 8)).toBe(false);
  });

  it('mayCreateRole: anyone registers a customer; only an admin creates an admin', () => {
    expect(mayCreateRole(null, 'customer')).toBe(true);
    expect(mayCreateRole(customer(), 'customer')).toBe(true);
    expect(mayCreateRole(null, 'admin')).toBe(false);
    expect(mayCreateRole(customer(), 'admin')).toBe(false);
    expect(mayCreateRole(service('users:read'), 'admin')).toBe(false);
    expect(mayCreateRole(admin(), 'admin')).toBe(true);
  });

  it('mayChangeRole: admins only', () => {
    expect(mayChangeRole(admin())).toBe(true);
    expect(mayChangeRole(customer())).toBe(false);
  });
});
