/**
 * Who may call what (CONTRACT section 7), in one place: roles and scopes side by side. Every
 * procedure declares a `Policy` (checked before its body runs); the resource rules below decide
 * what an admitted caller may do with one particular order or user. Pure functions, no I/O.
 */
import type { Caller, Role, UserCaller } from './tokens.ts';

/**
 * The OAuth scopes: CONTRACT section 7's six, plus `users:write` (change or delete a user) and
 * `clients:manage` (register and remove OAuth clients), so that every non-public procedure names
 * the scope it needs and a token limited by its `scope` claim reaches nothing else.
 */
export const SCOPES = [
  'orders:read',
  'orders:write',
  'fulfillments:write',
  'products:write',
  'payments:write',
  'users:read',
  'users:write',
  'clients:manage',
] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * Who may call a procedure. `public`: anyone, with or without a token. Otherwise a caller whose
 * role is listed; a service client must also hold `scope` (people act by role, services by scope).
 */
export type Policy = { readonly public: true } | RolePolicy;
export interface RolePolicy {
  readonly roles: readonly Role[];
  readonly scope?: Scope;
}

export const PUBLIC: Policy = { public: true };

export const isPublic = (policy: Policy): policy is { readonly public: true } => 'public' in policy;

/** Whether `policy` admits `caller` (null: no token). */
export function allows(policy: Policy, caller: Caller | null): boolean {
  if (isPublic(policy)) return true;
  if (caller === null || !policy.roles.includes(caller.role)) return false;
  return caller.role !== 'service' || policy.scope === undefined || caller.scopes.has(policy.scope);
}

/** Why `policy` refuses a known caller, for the 403's detail. */
export function describeRefusal(policy: RolePolicy, caller: Caller): string {
  const people = policy.roles.filter((role) => role !== 'service');
  const service = policy.roles.includes('service');
  if (caller.role === 'service' && service && policy.scope !== undefined) {
    return `Your role may not perform this operation (a service client needs the "${policy.scope}" scope).`;
  }
  const needs = [
    ...(people.length > 0 ? [`the ${people.join(' or ')} role`] : []),
    ...(service ? [policy.scope === undefined ? 'a service client' : `the "${policy.scope}" scope`] : []),
  ];
  return `Your role may not perform this operation (needs ${needs.join(' or ')}).`;
}

export const isAdmin = (caller: Caller | null): boolean => caller?.role === 'admin';

/** The customer whose resources `caller` is confined to; undefined when it may see everyone's. */
export function ownCustomerId(caller: Caller): number | undefined {
  return caller.role === 'customer' ? caller.userId : undefined;
}

/** Customers read and change only their own orders; admins and admitted services any. */
export function mayReadOrder(caller: Caller, order: { customerId: number }): boolean {
  const own = ownCustomerId(caller);
  return own === undefined || own === order.customerId;
}

/** Whether `caller` may make or keep an order belonging to `customerId`. */
export const mayOrderFor = (caller: Caller, customerId: number): boolean => mayReadOrder(caller, { customerId });

/** Some moves of the state table (delivered, completed) are for admins alone. */
export function mayMoveTo(caller: Caller, transition: { adminOnly?: boolean }): boolean {
  return transition.adminOnly !== true || isAdmin(caller);
}

/** Whether `caller` is the user `id` (a service client never is). */
export const isSelf = (caller: Caller, id: number): caller is UserCaller => caller.role !== 'service' && caller.userId === id;

/** Yourself, anyone as an admin, anyone as a service holding `users:read`. */
export function mayReadUser(caller: Caller, id: number): boolean {
  return isAdmin(caller) || isSelf(caller, id) || (caller.role === 'service' && caller.scopes.has('users:read'));
}

/** Yourself, or anyone as an admin; service clients never change users. */
export function mayWriteUser(caller: Caller, id: number): boolean {
  return isAdmin(caller) || isSelf(caller, id);
}

/** Anyone (registration) creates a customer; only an admin creates another role. */
export function mayCreateRole(caller: Caller | null, role: 'customer' | 'admin'): boolean {
  return role === 'customer' || isAdmin(caller);
}

/** Only an admin changes a user's role. */
export const mayChangeRole = (caller: Caller): boolean => isAdmin(caller);
