/**
 * The OAuth scopes (docs/api.md#scopes), declared by the modules whose procedures need them: each
 * module's `<name>.scopes.ts` calls `declareScopes` beside its procedures and adds its declaration
 * to `DeclaredScopes` (below), so `Scope` is the union of every module's scopes at compile time
 * and the catalogue holds them at run time, without a list every module shares. Like the event
 * catalogue, read it only at run time (`scopes()`), never while modules are still loading.
 */

/** `orders:read`: the resource, a colon, what it grants. */
export type ScopeName = `${string}:${string}`;

export interface ScopeDeclaration {
  /** What the scope grants, for the documentation (the OpenAPI oauth2 scheme). */
  readonly description: string;
  /**
   * What it lets an app do, in plain words for the person signing in: the sign-in and sign-up
   * pages list these, never the scope's name (docs/signing-in.md#the-sign-in-form). A phrase that
   * follows "<app> will be able to:", without a closing full stop.
   */
  readonly consent: string;
  /**
   * Whether a customer's token may carry it: true when some procedure needing it admits
   * customers (test/api/policy-coverage.test.ts holds this to every procedure's policy).
   * Admins may carry every scope; service clients what their registration lists.
   */
  readonly customers: boolean;
}

/**
 * Each module's scope declaration, by module name; a module adds its own with declaration
 * merging in its `<name>.scopes.ts`:
 * `declare module '../../auth/scopes.ts' { interface DeclaredScopes { orders: typeof orderScopes } }`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the modules' declaration merging
export interface DeclaredScopes {}

/** Every scope some module declares. */
export type Scope = { [Module in keyof DeclaredScopes]: keyof DeclaredScopes[Module] & ScopeName }[keyof DeclaredScopes];

const catalogue = new Map<Scope, ScopeDeclaration>();
const declared: Scope[] = [];
const forCustomers: Scope[] = [];

/**
 * Every declared scope, in declaration order: one array, filled as the modules load, so a reader
 * at run time sees them all (a copy taken while modules load would miss some).
 */
export const SCOPES: readonly Scope[] = declared;

/** The declared scopes a customer's token may carry. */
export const CUSTOMER_SCOPES: readonly Scope[] = forCustomers;

/** Adds a module's scopes to the catalogue; a scope declared twice is a programming error. */
export function declareScopes<const T extends Readonly<Record<ScopeName, ScopeDeclaration>>>(declaration: T): T {
  for (const [name, scope] of Object.entries(declaration)) {
    if (catalogue.has(name as Scope)) throw new Error(`scope ${name} is declared twice`);
    if (!/^[a-z_]+:[a-z_]+$/.test(name)) throw new Error(`scope ${name} is not <resource>:<what>`);
    catalogue.set(name as Scope, scope);
    declared.push(name as Scope);
    if (scope.customers) forCustomers.push(name as Scope);
  }
  return declaration;
}

/** Every declared scope with what it grants and who may carry it. */
export const scopeCatalogue = (): ReadonlyMap<Scope, ScopeDeclaration> => catalogue;

/** Whether `name` is a declared scope. */
export const isScope = (name: string): name is Scope => catalogue.has(name as Scope);

/**
 * What a granted scope string (space-separated) lets an app do, one plain phrase per scope, in
 * declaration order; a name no module declares is shown as it is.
 */
export function consentOf(scope: string): string[] {
  const names = new Set(scope.split(' ').filter(Boolean));
  const known = declared.filter((name) => names.has(name)).map((name) => catalogue.get(name)?.consent ?? name);
  const unknown = [...names].filter((name) => !isScope(name));
  return [...known, ...unknown];
}
