/**
 * The OpenAPI tags of the API's modules with their descriptions (what a reader of the docs page
 * sees first), declared by each module beside its procedures (`declareTag` in `<name>.router.ts`)
 * and read by the OpenAPI document, so a new module adds its own without editing server/http.
 * Read it only at run time (`tagDescriptions()`), never while modules are still loading.
 */
const catalogue = new Map<string, string>();

/** Adds a module's tag; returns its name, for the procedures' `meta.openapi.tags`. */
export function declareTag<const T extends string>(name: T, description: string): T {
  if (catalogue.has(name)) throw new Error(`OpenAPI tag ${name} is declared twice`);
  catalogue.set(name, description);
  return name;
}

/** Every declared tag with its description, in declaration order. */
export const tagDescriptions = (): ReadonlyMap<string, string> => catalogue;
