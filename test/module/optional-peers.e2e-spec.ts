import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * ioredis, @nestjs/terminus, TypeORM, Prisma, the database drivers, @nestjs/graphql, graphql, @opentelemetry/api,
 * @nestjs/swagger, class-validator and class-transformer are optional peers: an app that installs none of
 * them still boots the main entry. Proven twice, on the built package (`dist/`, what users install):
 * - at run time, in a Node process where a resolve hook makes these packages unresolvable;
 * - by reading the import graph, for what one run cannot reach: lazy `import()`s on paths it did not take, and the
 *   published type declarations.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dist = join(root, 'dist');
const fixture = join(root, 'test/module/fixtures/without-peers.mjs');

const OPTIONAL_PEERS = [
  '@nestjs/terminus',
  'typeorm',
  '@nestjs/typeorm',
  '@prisma/client',
  'ioredis',
  'better-sqlite3',
  'pg',
  'mysql2',
  '@nestjs/graphql',
  'graphql',
  '@opentelemetry/api',
  '@nestjs/swagger',
  'class-validator',
  'class-transformer',
];

/** `@scope/name/sub/path` → `@scope/name`, `name/sub` → `name`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

const isOptionalPeer = (specifier: string) => OPTIONAL_PEERS.includes(packageName(specifier));

beforeAll(() => {
  if (!existsSync(join(dist, 'index.js'))) throw new Error('These tests read the built package: run `npm run build`.');
});

describe('an app without the optional peers (resolve hook in a child process)', () => {
  interface Failure {
    code?: string;
    message: string;
    stack?: string;
  }
  interface Outcome {
    boot: { id: string; workerId: number } | { error: Failure };
    leaseBoot: 'booted' | (Failure & { name?: string });
    probes: Record<string, 'loaded' | Failure>;
  }

  const PROBES = [
    '@nestjs/terminus',
    'nestjs-snowflake/health',
    'nestjs-snowflake/http',
    'nestjs-snowflake/typeorm',
    'nestjs-snowflake/prisma',
    'nestjs-snowflake/graphql',
    'nestjs-snowflake/metrics',
    'nestjs-snowflake/swagger',
    'nestjs-snowflake/validation',
  ];
  let outcome: Outcome;

  beforeAll(async () => {
    const { NODE_OPTIONS: _jestFlags, ...env } = process.env;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [fixture, JSON.stringify({ hidden: OPTIONAL_PEERS, probes: PROBES })],
      { cwd: root, env, timeout: 30_000 },
    );
    outcome = JSON.parse(stdout.trim().split('\n').pop()!) as Outcome;
  });

  it('boots SnowflakeModule.forRoot({ workerId: 1 }) from the main entry and issues an ID', () => {
    expect(outcome.boot).toEqual({ id: expect.stringMatching(/^\d+$/), workerId: 1 });
  });

  it('names the package to install when a lease from a URL needs ioredis', () => {
    expect(outcome.leaseBoot).toMatchObject({
      name: 'SnowflakeConfigError',
      message: expect.stringContaining('`redis.url`: a Redis lease from a URL needs the ioredis package'),
    });
    expect((outcome.leaseBoot as Failure).message).toContain('npm install ioredis');
  });

  it('really hides them: the peers and the entries that need one fail to load there', () => {
    const hidden = (name: string, importer: string) => ({
      code: 'ERR_MODULE_NOT_FOUND',
      message: expect.stringMatching(new RegExp(`^Cannot find package '${name}' imported from ${importer}.*hidden`)),
    });
    expect(outcome.probes).toEqual({
      '@nestjs/terminus': expect.objectContaining(hidden('@nestjs/terminus', 'file:.*/without-peers\\.mjs')),
      'nestjs-snowflake/health': expect.objectContaining(hidden('@nestjs/terminus', 'file:.*/dist/health/')),
      // The HTTP helpers need only the Nest packages every app has.
      'nestjs-snowflake/http': 'loaded',
      'nestjs-snowflake/typeorm': expect.objectContaining(hidden('typeorm', 'file:.*/dist/orm/typeorm/')),
      'nestjs-snowflake/prisma': expect.objectContaining(
        hidden('@prisma/client/extension', 'file:.*/dist/orm/prisma/'),
      ),
      // The entry imports both graphql packages; which one the loader resolves first varies with timing.
      'nestjs-snowflake/graphql': expect.objectContaining(
        hidden('(?:graphql|@nestjs/graphql)', 'file:.*/dist/graphql/'),
      ),
      'nestjs-snowflake/metrics': expect.objectContaining(hidden('@opentelemetry/api', 'file:.*/dist/metrics/')),
      'nestjs-snowflake/swagger': expect.objectContaining(hidden('@nestjs/swagger', 'file:.*/dist/swagger/')),
      'nestjs-snowflake/validation': expect.objectContaining(
        hidden('class-(validator|transformer)', 'file:.*/dist/validation/'),
      ),
    });
  });
});

/** Every module specifier a built file names: `[static, lazy]`, where lazy ones are `import()` expressions. */
function specifiersOf(file: string): [string[], string[]] {
  const source = readFileSync(file, 'utf8');
  const statement = /^\s*(?:import|export)\s+(?:[^'";]*?\sfrom\s*)?['"]([^'"]+)['"]/gm;
  const expression = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;
  return [[...source.matchAll(statement)].map((m) => m[1]), [...source.matchAll(expression)].map((m) => m[1])];
}

/**
 * The packages a built entry reaches through its relative imports: `static` when they load with the entry, `lazy`
 * when only an `import()` on the way leads to them. In a `.d.ts`, an `import()` is a type reference, loaded by the
 * type checker like any other.
 */
function reachablePackages(entry: string): { static: Set<string>; lazy: Set<string> } {
  const next = (file: string, specifier: string) =>
    resolve(dirname(file), file.endsWith('.d.ts') ? specifier.replace(/\.js$/, '.d.ts') : specifier);
  const walk = (followLazy: boolean) => {
    const files = new Set<string>();
    const packages = new Set<string>();
    const queue = [join(dist, entry)];
    while (queue.length > 0) {
      const file = queue.pop()!;
      if (files.has(file)) continue;
      files.add(file);
      const [statics, lazies] = specifiersOf(file);
      for (const specifier of followLazy ? [...statics, ...lazies] : statics) {
        if (specifier.startsWith('.')) queue.push(next(file, specifier));
        else packages.add(specifier);
      }
    }
    return packages;
  };
  const statics = walk(false);
  return { static: statics, lazy: new Set([...walk(true)].filter((specifier) => !statics.has(specifier))) };
}

describe('the import graph of the built entries', () => {
  it('the main entry loads no optional peer, and reaches only ioredis, through the lazy lease import', () => {
    const { static: statics, lazy } = reachablePackages('index.js');
    expect(statics.has('@nestjs/common')).toBe(true);
    expect([...statics].filter(isOptionalPeer)).toEqual([]);
    expect([...lazy].filter(isOptionalPeer)).toEqual(['ioredis']);
  });

  it("the main entry's type declarations name no optional peer", () => {
    const { static: statics, lazy } = reachablePackages('index.d.ts');
    expect(statics.has('@nestjs/common')).toBe(true);
    expect([...statics, ...lazy].filter(isOptionalPeer)).toEqual([]);
  });

  it('the other entries load their peer, so the reading sees imports where they are', () => {
    expect(reachablePackages('health.js').static.has('@nestjs/terminus')).toBe(true);
    expect(reachablePackages('typeorm.js').static.has('typeorm')).toBe(true);
    expect([...reachablePackages('prisma.js').static].filter(isOptionalPeer)).toEqual(['@prisma/client/extension']);
    expect([...reachablePackages('graphql.js').static].filter(isOptionalPeer).sort()).toEqual([
      '@nestjs/graphql',
      'graphql',
    ]);
    expect([...reachablePackages('metrics.js').static].filter(isOptionalPeer)).toEqual(['@opentelemetry/api']);
    expect([...reachablePackages('swagger.js').static].filter(isOptionalPeer)).toEqual(['@nestjs/swagger']);
    expect([...reachablePackages('validation.js').static].filter(isOptionalPeer).sort()).toEqual([
      'class-transformer',
      'class-validator',
    ]);
  });
});
