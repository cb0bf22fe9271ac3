import { defineConfig } from 'vitest/config';

// Every suite runs on embedded PGlite; with TEST_DATABASE_URL (postgres://...) the same suite
// runs again on that PostgreSQL server, each test file in a database of its own.
const postgresUrl = process.env.TEST_DATABASE_URL;

const shared = {
  include: ['test/**/*.test.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
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
