import postgres from 'postgres';
import { until } from './waits.ts';

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * Drops a test database, ending whatever is still connected to it. `WITH (FORCE)` run by a role
 * that is not a superuser is refused (42501) when an autovacuum worker happens to be working in
 * that database (its backend belongs to no role); setup-postgres.sh grants `pg_signal_backend`
 * for that, and a refused drop is tried again while the worker finishes.
 */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  const cleanup = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    let attempt = 0;
    await until(
      `database ${name} dropped`,
      async () => {
        attempt += 1;
        try {
          await cleanup.unsafe(`drop database if exists ${name} with (force)`);
          return true;
        } catch (error) {
          const code = (error as { code?: string }).code;
          if (attempt >= 20 || (code !== '42501' && code !== '55006')) throw error;
          return false;
        }
      },
      { intervalMs: 250 },
    );
  } finally {
    await cleanup.end();
  }
}
