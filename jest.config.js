/** Jest in ESM mode (NestJS 12 is ESM-only), TypeScript through SWC with legacy decorators and metadata. */
export default {
  testEnvironment: '<rootDir>/test/support/per-worker-tmpdir.environment.js',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
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
  testTimeout: 60000,
};
