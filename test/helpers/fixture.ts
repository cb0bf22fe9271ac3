/**
 * A resource for a test file, or a `describe` (docs/testing.md#a-test-files-app): `create` runs in
 * a `beforeAll` registered here, `close()` in an `afterAll`, and the handle answered stands for the
 * resource from the first hook on, so tests and helpers read it as the value itself. A `beforeAll`
 * registered after this one sees the resource (hooks run in order); this `afterAll` runs last.
 */
import { afterAll, beforeAll } from 'vitest';

export function useFixture<T extends object & { close(): Promise<void> }>(name: string, create: () => Promise<T>): T {
  let current: T | undefined;
  beforeAll(async () => {
    current = await create();
  });
  afterAll(async () => {
    await current?.close();
    current = undefined;
  });
  return new Proxy({} as T, {
    get(_, key) {
      // Not a promise: `await` on the handle, or an async function answering it, must not wait.
      if (key === 'then') return undefined;
      if (!current) throw new Error(`${name}'s ${String(key)} was read outside its hooks and tests`);
      return current[key as keyof T];
    },
    // A test may replace a field for the ones after it (`s.admin = third` once the first is gone).
    set(_, key, value) {
      if (!current) throw new Error(`${name}'s ${String(key)} was set outside its hooks and tests`);
      return Reflect.set(current, key, value);
    },
  });
}
