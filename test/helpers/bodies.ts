/**
 * A factory's body with fields changed or left out: `changes` set fields (of any type, on
 * purpose) and an `undefined` change removes the field. Typed loosely because tests use it to
 * break the schema or to drop optional fields; plain valid bodies come from the typed factories.
 */
export function alter(body: object, changes: Record<string, unknown>): Record<string, unknown> {
  const altered: Record<string, unknown> = { ...body, ...changes };
  for (const [key, value] of Object.entries(changes)) if (value === undefined) delete altered[key];
  return altered;
}
