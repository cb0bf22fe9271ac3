/**
 * Who may call what (docs/api.md#scopes), in one place: roles and scopes side by side. Every
 * procedure declares a `Policy` (checked before its body runs); the resource rules below decide
 * what an admitted caller may do with one particular order or user. Pure functions, no I/O.
 */
import { DomainError } from '../errors/problems.ts';
import { CUSTOMER_SCOPES, SCOPES, type Scope } from './scopes.ts';
import { missingToken, type Caller, type Role, type UserCaller } from './tokens.ts';

export { SCOPES, type Scope } from './scopes.ts';

/**
 * The scopes a person of each role can use: a customer those its modules declare for customers
 * (`customers: true`, which test/api/policy-coverage.test.ts holds to every procedure's policy),
 * an admin every one. A person's token names no other: a customer who signs in without asking
 * for a scope never gets `products:write` or `clients:manage`, which no customer could use anyway.
 * Read at run time: the modules declare their scopes as they load (auth/scopes.ts).
 */
export const PERSON_SCOPES: Readonly<Record<'customer' | 'admin', readonly Scope[]>> = {
  customer: CUSTOMER_SCOPES,
  admin: SCOPES,
};

/** `scope` (space-separated) without what `role` cannot use, in its order; may be empty. */
export function scopeForPerson(scope: string, role: 'customer' | 'admin'): string {
  const usable: readonly string[] = PERSON_SCOPES[role];
  return scope
    .split(' ')
    .filter((token) => usable.includes(token))
    .join(' ');
}

/**
 * Who may call a procedure. `public`: anyone, with or without a token. Otherwise a caller whose
 * role is listed and whose token grants `scope`: a service client always needs it (services act by
 * scope); a person needs it only when the token carries a `scope` claim, which limits it whatever
 * its role. Required, so a procedure that forgets its scope does not compile.
 */
export type Policy = { readonly public: true } | RolePolicy;
export interface RolePolicy {
  readonly roles: readonly Role[];
  readonly scope: Scope;
}

export const PUBLIC: Policy = { public: true };

export const isPublic = (policy: Policy): policy is { readonly public: true } => 'public' in policy;

/**
 * Whether the token grants `scope`. A person's token without a `scope` claim grants whatever the
 * role allows; a service's grants only what its claim lists.
 */
export function hasScope(caller: Caller, scope: Scope): boolean {
  return caller.scopes === 'all' || caller.scopes.has(scope);
}

/**
 * Why `policy` refuses `caller`, as the error to answer; undefined when it admits them. No token:
 * 401. A role not listed: 403 `forbidden` (no scope would help). A listed role whose token lacks
 * the scope: 403 `insufficient-scope` naming it, with RFC 6750's challenge.
 */
export function refusal(policy: Policy, caller: Caller | null): DomainError | undefined {
  if (isPublic(policy)) return undefined;
  if (caller === null) return missingToken();
  if (!policy.roles.includes(caller.role)) return new DomainError('forbidden', describeRoleRefusal(policy));
  if (!hasScope(caller, policy.scope)) return insufficientScope(policy.scope);
  return undefined;
}

/** Whether `policy` admits `caller` (null: no token). */
export const allows = (policy: Policy, caller: Caller | null): boolean => refusal(policy, caller) === undefined;

/** Which roles the policy admits, for the 403's detail. */
export function describeRoleRefusal(policy: RolePolicy): string {
  const people = policy.roles.filter((role) => role !== 'service');
  const needs = [
    ...(people.length > 0 ? [`the ${people.join(' or ')} role`] : []),
    ...(policy.roles.includes('service') ? [`a service client with the "${policy.scope}" scope`] : []),
  ];
  return `Your role may not perform this operation (needs ${needs.join(' or ')}).`;
}

/** 403 for a token that does not grant `scope` (RFC 6750 section 3.1): the problem and the challenge name it. */
export function insufficientScope(scope: Scope): DomainError {
  return new DomainError('insufficient-scope', `This operation needs the "${scope}" scope, which your access token does not grant.`, {
    extensions: { scope },
    headers: { 'www-authenticate': `Bearer realm="order-service", error="insufficient_scope", scope="${scope}"` },
  });
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

/**
 * Yourself, or anyone as an admin or a service, with a token granting `users:read` (users.get's
 * policy already asks for it; checked here too so the rule reads whole).
 */
export function mayReadUser(caller: Caller, id: number): boolean {
  return hasScope(caller, 'users:read') && (caller.role === 'service' || isAdmin(caller) || isSelf(caller, id));
}

/** Yourself, or anyone as an admin, with a token granting `users:write`; service clients never change users. */
export function mayWriteUser(caller: Caller, id: number): boolean {
  return hasScope(caller, 'users:write') && (isAdmin(caller) || isSelf(caller, id));
}

/**
 * Anyone (registration) creates a customer; only an admin whose token grants `users:write`
 * creates another role (users.create is public, so its policy cannot ask for the scope).
 */
export function mayCreateRole(caller: Caller | null, role: 'customer' | 'admin'): boolean {
  return role === 'customer' || (caller !== null && isAdmin(caller) && hasScope(caller, 'users:write'));
}

/** Only an admin changes a user's role (with `users:write`, which users.replace's policy asks for). */
export const mayChangeRole = (caller: Caller): boolean => isAdmin(caller) && hasScope(caller, 'users:write');
