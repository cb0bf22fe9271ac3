/**
 * The event types (docs/api.md#events), declared by the modules that write them: each module's
 * `<name>.events.ts` calls `declareEvents` beside its procedures, and the declarations gather
 * here as the modules load (every module is loaded through server/router.ts). So a new module adds
 * its own types without editing a list that every module shares. Read the catalogue only at run
 * time (`eventTypes()`), never while modules are still loading.
 */

/** `order.paid`: the resource, a dot, what happened. */
export type EventType = `${string}.${string}`;

/** Each type a module writes, with what it means (for the documentation). */
export type EventDeclaration<T extends EventType> = Readonly<Record<T, string>>;

const catalogue = new Map<EventType, string>();

/** Adds a module's types to the catalogue; a type declared twice is a programming error. */
export function declareTypes<T extends EventType>(declaration: EventDeclaration<T>): readonly T[] {
  const types = Object.keys(declaration) as T[];
  for (const type of types) {
    if (catalogue.has(type)) throw new Error(`event type ${type} is declared twice`);
    if (!/^[a-z_]+\.[a-z_]+$/.test(type)) throw new Error(`event type ${type} is not <resource>.<what>`);
    catalogue.set(type, declaration[type]);
  }
  return types;
}

/** Every declared type with its description, in declaration order. */
export const eventTypes = (): ReadonlyMap<EventType, string> => catalogue;

/** The resource of a type: `order` of `order.paid`. */
export const resourceOf = (type: string): string => type.slice(0, type.indexOf('.'));
