import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  // test/matrix/apps: apps with their own package.json and tsconfig, built by the matrix run against the packed tarball.
  globalIgnores([
    '**/dist/',
    '**/node_modules/',
    '**/coverage/',
    '.tmp/',
    '.bench/',
    '**/generated/**',
    'test/matrix/apps/',
  ]),

  // Plain JavaScript: tool configs and any other ESM scripts run by Node.
  {
    files: ['**/*.{js,mjs,cjs}'],
    extends: [js.configs.recommended],
    languageOptions: {
      ecmaVersion: 'latest',
      sourceType: 'module',
      globals: globals.node,
    },
  },
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs' } },

  // TypeScript, checked with type information from tsconfig.json (lib, test, sample-app, bench).
  {
    files: ['**/*.{ts,mts,cts}'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      globals: globals.node,
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Unused parameters are allowed when prefixed with `_` (interface implementations, Nest hooks).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },

  {
    files: ['test/**/*.ts'],
    languageOptions: { globals: globals.jest },
    rules: {
      // expect(obj.method).toHaveBeenCalled() and jest mocks pass methods around on purpose.
      '@typescript-eslint/unbound-method': 'off',
      // Tests assert on values typed `any` by their libraries (supertest bodies, the Express instance, driver rows):
      // reading them is the point of the assertion.
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Async factories and callbacks without an await are exercised on purpose (forRootAsync's useFactory).
      '@typescript-eslint/require-await': 'off',
    },
  },

  prettier,
);
