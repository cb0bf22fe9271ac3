import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'client-sdk/dist/', 'client-sdk/node_modules/', 'examples/*/dist/', 'drizzle/', '.data/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // Every transaction begins through `transaction()` of server/db/unit-of-work.ts, which waits for
    // one of the pool's transaction slots and makes the unit of work the writes require: a
    // `db.transaction(...)` of its own would skip both.
    files: ['server/**/*.ts'],
    ignores: ['server/db/unit-of-work.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.type='MemberExpression'][callee.property.name='transaction']",
          message: 'Begin transactions with `transaction(db, work)` from server/db/unit-of-work.ts (it takes a pool slot and makes the unit of work), not `db.transaction`.',
        },
      ],
    },
  },
);
