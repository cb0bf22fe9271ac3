import { defineConfig } from 'vitest/config';

// Every suite runs on embedded PGlite; with TEST_DATABASE_URL (postgres://...) the same suite
// runs again on that PostgreSQL server, each test file in a database of its own.
const postgresUrl = process.env.TEST_DATABASE_URL;

// Generous bounds: a passing test never waits for them, and on a loaded machine (a CPU hog beside
// the suite, load 10 and more on 2 cores) starting an embedded database alone can take a minute.
const shared = {
  include: ['test/**/*.test.ts'],
  testTimeout: 60_000,
  hookTimeout: 180_000,
};

export default defineConfig({
  test: {
    // Vitest's summary, then one plain `tests: N passed, N failed, N skipped` line to end the log.
    reporters: ['default', './test/helpers/closing-line-reporter.ts'],
    projects: [
      { test: { ...shared, name: 'pglite', env: { TEST_DB: 'pglite' } } },
      ...(postgresUrl
        ? [
            {
              test: {
                ...shared,
                name: 'postgres',
                env: { TEST_DB: 'postgres', TEST_DATABASE_URL: postgresUrl },
                globalSetup: ['test/helpers/postgres-global-setup.ts'],
              },
            },
          ]
        : []),
    ],
  },
});
