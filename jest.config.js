/**
 * Jest in ESM mode (NestJS 12 is ESM-only), TypeScript through SWC with legacy decorators and metadata.
 *
 * Four projects, chosen by rule (file suffix and folder, never a list), so that a new test file lands in the right
 * one by its name alone:
 * - `unit`: every `*.spec.ts` outside test/sim; runs in the Jest process alone (see test/layout.spec.ts), needs no
 *   build: `npm run test:unit`.
 * - `e2e`: every `*.e2e-spec.ts` outside test/chaos; reaches a redis-server, a database, a child process (from
 *   dist/, so after `npm run build`) or HTTP. Its global setup starts one redis-server per Jest worker process, which
 *   suites share with a namespace per test (test/support/shared-redis.ts).
 * - `sim`: the simulator's in-process suites, test/sim/*.spec.ts (its searches on a fixed budget, the planted bugs):
 *   `npm run test:sim`.
 * - `chaos`: the chaos run's short form, test/chaos/*.e2e-spec.ts: `npm run test:chaos`.
 * `npm test` runs unit and e2e; CI (.ci/run) runs sim and chaos after it.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A temp directory per Jest run, under which each test file gets its own (per-file-tmpdir.environment.js): runs
// started side by side on one machine (two checkouts, two terminals) boot apps on the same fixed worker IDs, and
// their host locks must not meet. Workers inherit it from this process.
process.env.SNOWFLAKE_TEST_TMPDIR_BASE ??= join(tmpdir(), `nestjs-snowflake-jest-run-${process.pid}`);

const common = {
  testEnvironment: '<rootDir>/test/support/per-file-tmpdir.environment.js',
  roots: ['<rootDir>/test'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // Mercurius's @fastify/static requires content-disposition 3, which is ESM: Node 20 loads it (require(esm)), Jest
    // on Node 20 does not. Version 2, a dependency of Express, is CommonJS with the same create() API.
    '^content-disposition$': '<rootDir>/node_modules/content-disposition/dist/index.js',
  },
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
        },
        module: { type: 'es6' },
      },
    ],
  },
};

export default {
  // A global option: Jest reads it from here, not from the projects.
  testTimeout: 60000,
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/**/*.spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/sim/'],
    },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/chaos/'],
      globalSetup: '<rootDir>/test/support/shared-redis.global-setup.js',
      globalTeardown: '<rootDir>/test/support/shared-redis.global-teardown.js',
    },
    {
      ...common,
      displayName: 'sim',
      testMatch: ['<rootDir>/test/sim/**/*.spec.ts'],
    },
    {
      ...common,
      displayName: 'chaos',
      testMatch: ['<rootDir>/test/chaos/**/*.e2e-spec.ts'],
    },
  ],
};
