/** PostgreSQL error fields, read through drizzle's wrapper; both drivers expose `code`. */
interface PgErrorFields {
  code?: string;
  constraint?: string;
  constraint_name?: string;
}

export function pgError(error: unknown): PgErrorFields | undefined {
  let current: unknown = error;
  for (let depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const fields = current as PgErrorFields & { cause?: unknown };
    if (typeof fields.code === 'string' && /^[0-9A-Z]{5}$/.test(fields.code)) return fields;
    current = fields.cause;
  }
  return undefined;
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const fields = pgError(error);
  if (fields?.code !== '23505') return false;
  if (constraint === undefined) return true;
  return (fields.constraint ?? fields.constraint_name) === constraint || String(error).includes(constraint);
}
