/**
 * The install matrix: the packed tarball in small apps as users have them, each installed with a plain `npm install`
 * (no --legacy-peer-deps, no overrides), built, run against a real redis-server (and PostgreSQL for TypeORM), and
 * tested with the test runner the app would use. Then @arethetypeswrong/cli on the tarball, for every entry.
 *
 * Run it with `npm run test:matrix` (it builds first). It needs the npm registry (or a warm npm cache), redis-server,
 * and PostgreSQL on 127.0.0.1:5432 (trust auth, database `test`; MATRIX_DATABASE_URL overrides it). Without
 * PostgreSQL the TypeORM row is not checked, and the run says so.
 *
 * The two newcomer-… apps are not hand-written: newcomer.mjs writes them from the README's and the docs' own blocks and
 * install lines, so that a block or a peer range that drifts fails here.
 *
 * MATRIX_APPS=nest11-cjs,… runs a part; MATRIX_KEEP=1 leaves the temporary folder for a look.
 */
import { execFile, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort, RedisProcess } from '../chaos/redis.mjs';
import { installCommands, newcomerSources, request, startApp, writeNewcomerApp } from './newcomer.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const APPS_DIR = fileURLToPath(new URL('./apps/', import.meta.url));
const DATABASE_URL = process.env.MATRIX_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const run = promisify(execFile);

/**
 * The apps. `from` is the folder under apps/; `dependencies` replaces ranges of its package.json (a variant);
 * `drop` removes packages and `remove` files that use them; `database`: whether the app saves a TypeORM row; `tests`: its test scripts.
 */
const APPS = [
  {
    name: 'nest11-cjs',
    from: 'nest11-cjs',
    note: 'Nest 11, CommonJS, TypeScript 5.8 nodenext, TypeORM 0.3, Prisma 6, ioredis 5, Jest 29 (ts-jest)',
    database: true,
    prisma: true,
    tests: ['test:jest'],
  },
  {
    name: 'nest12-esm',
    from: 'nest12-esm',
    note: 'Nest 12, ESM, TypeScript 6, TypeORM 1, ioredis 5 (TypeORM 1 asks for ioredis ^5), Jest 30, Vitest',
    database: true,
    tests: ['test:jest', 'test:vitest'],
  },
  {
    name: 'nest12-esm-ioredis6',
    from: 'nest12-esm',
    note: 'Nest 12, ESM, ioredis 6, without TypeORM (TypeORM 1.1 refuses ioredis 6: its optional peer is ^5.0.4)',
    dependencies: { ioredis: '^6.0.0' },
    drop: ['typeorm', '@nestjs/typeorm', 'pg', 'jest', '@swc/core', '@swc/jest', '@types/jest'],
    remove: ['src/database.module.ts', 'src/post.entity.ts'],
    skipEntries: ['nestjs-snowflake/typeorm'],
    database: false,
    tests: ['test:vitest'],
  },
  // The scripted newcomer (newcomer.mjs): apps written from the README's and the docs' own blocks and install lines.
  {
    name: 'newcomer-nest11-cjs',
    newcomer: 'cjs',
    note: "Nest 11 CommonJS app from the docs' blocks: README Install and Quickstart, docs/typeorm.md, docs/health.md",
  },
  {
    name: 'newcomer-nest12-esm',
    newcomer: 'esm',
    note: "Nest 12 ESM app from the docs' blocks: README Install and Quickstart, docs/typeorm.md, docs/health.md",
  },
];

const EXPORTS = Object.keys(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).exports).filter(
  (entry) => entry !== './package.json',
);
const ENTRY_NAMES = EXPORTS.map((entry) => (entry === '.' ? 'nestjs-snowflake' : `nestjs-snowflake/${entry.slice(2)}`));

const timings = [];
const failures = [];

async function timed(label, work) {
  const started = Date.now();
  try {
    return await work();
  } finally {
    const seconds = (Date.now() - started) / 1000;
    timings.push([label, seconds]);
    console.log(`matrix: ${label}: ${seconds.toFixed(1)} s`);
  }
}

/** Runs a command with its output shown only when it fails. */
function sh(command, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(output);
      else reject(new Error(`${command} ${args.join(' ')} (in ${options.cwd}) exited ${code}:\n${output}`));
    });
  });
}

async function postgresReachable() {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function withPostgres(work) {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function appPackage(app, tarball) {
  const path = join(APPS_DIR, app.from, 'package.json');
  const manifest = JSON.parse(readFileSync(path, 'utf8'));
  manifest.name = `matrix-${app.name}`;
  for (const section of ['dependencies', 'devDependencies']) {
    for (const name of app.drop ?? []) delete manifest[section][name];
    for (const [name, range] of Object.entries(app.dependencies ?? {})) {
      if (name in manifest[section]) manifest[section][name] = range;
    }
  }
  manifest.dependencies['nestjs-snowflake'] = `file:${tarball}`;
  return manifest;
}

/** The checks on what the app printed. */
function checkOutput(app, line) {
  const out = JSON.parse(line);
  const problems = [];
  const expected = ENTRY_NAMES.filter((name) => !(app.skipEntries ?? []).includes(name));
  const loaded = Object.keys(out.entries);
  if (JSON.stringify([...loaded].sort()) !== JSON.stringify([...expected].sort())) {
    problems.push(`entries loaded ${loaded.join(', ')}, expected ${expected.join(', ')}`);
  }
  for (const [entry, count] of Object.entries(out.entries)) if (count === 0) problems.push(`${entry} exports nothing`);
  if (!/^[1-9]\d*$/.test(out.id)) problems.push(`the ID ${out.id} is not a positive integer`);
  if (Math.abs(out.issuedAt - Date.now()) > 120_000) problems.push(`the ID decodes to ${out.issuedAt}, not about now`);
  if (app.database) {
    if (out.row === null || !/^[1-9]\d*$/.test(out.row.saved) || out.row.saved !== out.row.readBack) {
      problems.push(`the TypeORM row ${JSON.stringify(out.row)} did not read back its generated ID`);
    }
  }
  if (app.prisma) {
    const { saved = [], readBack = [] } = out.prisma ?? {};
    if (saved.length !== 3 || new Set(saved).size !== 3 || JSON.stringify(saved) !== JSON.stringify(readBack)) {
      problems.push(`the Prisma thing and its parts ${JSON.stringify(out.prisma)} did not read back their IDs`);
    }
  }
  if (out.health?.snowflake?.status !== 'up') problems.push(`health ${JSON.stringify(out.health)}`);
  return { out, problems };
}

async function runApp(app, { work, tarball, redisUrl, postgres }) {
  const dir = join(work, app.name);
  cpSync(join(APPS_DIR, app.from), dir, { recursive: true, filter: (src) => !/node_modules|dist/.test(src) });
  for (const file of app.remove ?? []) rmSync(join(dir, file));
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(appPackage(app, tarball), null, 2)}\n`);
  // The user's own npm settings could hide a conflict: this run asks for npm's defaults.
  const env = { ...process.env, npm_config_legacy_peer_deps: 'false', npm_config_force: 'false' };
  await timed(`${app.name}: npm install`, () =>
    sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: dir, env }),
  );
  // Prisma's engine binaries cannot be downloaded on every machine (binaries.prisma.sh): the app's generator uses the
  // TypeScript query compiler, so nothing needs them, and these settings stop `prisma generate` from fetching them.
  const buildEnv = {
    ...env,
    DATABASE_URL,
    PRISMA_QUERY_ENGINE_LIBRARY: '/bin/false',
    PRISMA_SCHEMA_ENGINE_BINARY: '/bin/false',
    PRISMA_ENGINES_CHECKSUM_IGNORE_MISSING: '1',
  };
  await timed(`${app.name}: build`, () => sh('npm', ['run', 'build'], { cwd: dir, env: buildEnv }));
  const schema = `matrix_${app.name.replace(/\W/g, '_')}_${process.pid}`;
  const useDatabase = app.database && postgres;
  if (useDatabase) await withPostgres((client) => client.query(`CREATE SCHEMA "${schema}"`));
  try {
    const appEnv = {
      ...env,
      REDIS_URL: redisUrl,
      MATRIX_SKIP_ENTRIES: (app.skipEntries ?? []).join(','),
      ...(useDatabase ? { DATABASE_URL, DATABASE_SCHEMA: schema } : {}),
    };
    const output = await timed(`${app.name}: run`, () => sh('node', ['dist/main.js'], { cwd: dir, env: appEnv }));
    const line = output.trim().split('\n').at(-1);
    const { out, problems } = checkOutput({ ...app, database: useDatabase, prisma: app.prisma && useDatabase }, line);
    if (problems.length > 0) throw new Error(`${app.name}: ${problems.join('; ')}\n${output}`);
    console.log(
      `matrix: ${app.name}: ID ${out.id}, row ${JSON.stringify(out.row)}` +
        `${out.prisma ? `, prisma ${JSON.stringify(out.prisma.saved)}` : ''}, health up`,
    );
  } finally {
    if (useDatabase) await withPostgres((client) => client.query(`DROP SCHEMA "${schema}" CASCADE`));
  }
  for (const script of app.tests) {
    await timed(`${app.name}: npm run ${script}`, () => sh('npm', ['run', script], { cwd: dir, env }));
  }
  const versions = await run('npm', ['ls', '--depth=0', '--json'], { cwd: dir }).then(({ stdout }) => {
    const { dependencies } = JSON.parse(stdout);
    const pick = ['@nestjs/core', 'typeorm', 'ioredis', 'typescript', 'jest', 'vitest', '@prisma/client'];
    return pick.filter((name) => dependencies[name]).map((name) => `${name}@${dependencies[name].version}`);
  });
  console.log(`matrix: ${app.name}: passed with ${versions.join(', ')}`);
}

/**
 * The scripted newcomer: writes the app from the docs, runs the documented install lines one after the other with a
 * plain `npm install`, builds it with the documented tsconfig, then runs the Quickstart (an ID and its decoding) and
 * the TypeORM page's module (a row saved and read back by its generated ID, and /health).
 */
async function runNewcomer(app, { work, tarball, redisUrl, postgres }) {
  if (!postgres) throw new Error('the newcomer needs PostgreSQL: the TypeORM block connects to it');
  const dir = join(work, app.name);
  const sources = newcomerSources(ROOT);
  writeNewcomerApp(dir, app.newcomer, sources, `matrix-${app.name}`);
  for (const gap of sources.gaps) console.log(`matrix: ${app.name}: DOCS GAP, worked around: ${gap}`);
  const env = { ...process.env, npm_config_legacy_peer_deps: 'false', npm_config_force: 'false' };
  for (const { where, args } of installCommands(sources, tarball)) {
    await timed(`${app.name}: npm install (${where})`, () =>
      sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...args], { cwd: dir, env }),
    );
  }
  await timed(`${app.name}: build`, () => sh('npm', ['run', 'build'], { cwd: dir, env }));

  const port = await freePort();
  const appEnv = { ...env, REDIS_URL: redisUrl, PORT: String(port) };
  await timed(`${app.name}: Quickstart`, async () => {
    const quickstart = startApp(dir, 'dist/main.js', appEnv);
    try {
      // The first start in a namespace settles for 12 s before it listens.
      const next = await request(quickstart, port, 'GET', '/ids/next', { waitMs: 60_000 });
      if (next.status !== 200 || !/^[1-9]\d*$/.test(next.json?.id)) {
        throw new Error(`GET /ids/next answered ${next.status} ${JSON.stringify(next.json)}\n${quickstart.output()}`);
      }
      const decoded = await request(quickstart, port, 'GET', `/ids/${next.json.id}`);
      if (
        decoded.status !== 200 ||
        decoded.json?.id !== next.json.id ||
        Math.abs(decoded.json.timestamp - Date.now()) > 120_000
      ) {
        throw new Error(`GET /ids/${next.json.id} answered ${decoded.status} ${JSON.stringify(decoded.json)}`);
      }
      console.log(`matrix: ${app.name}: Quickstart served ID ${next.json.id}, decoded to ${decoded.json.date}`);
    } finally {
      await quickstart.stop();
    }
  });

  const database = `matrix_${app.name.replace(/\W/g, '_')}_${process.pid}`;
  await withPostgres((client) => client.query(`CREATE DATABASE "${database}"`));
  try {
    const url = new URL(DATABASE_URL);
    url.pathname = `/${database}`;
    await timed(`${app.name}: TypeORM and health`, async () => {
      const server = startApp(dir, 'dist/typeorm-main.js', { ...appEnv, DATABASE_URL: url.href });
      try {
        const health = await request(server, port, 'GET', '/health', { waitMs: 60_000 });
        if (health.status !== 200 || health.json?.info?.snowflake?.status !== 'up') {
          throw new Error(`GET /health answered ${health.status} ${JSON.stringify(health.json)}\n${server.output()}`);
        }
        const email = `newcomer-${process.pid}@example.com`;
        const saved = await request(server, port, 'POST', '/users', { body: { email } });
        const ids = [saved.json?.id, saved.json?.publicId, ...(saved.json?.orders ?? [])];
        if (
          saved.status !== 201 ||
          ids.length !== 3 ||
          !ids.every((id) => /^[1-9]\d*$/.test(id)) ||
          new Set(ids).size !== 3
        ) {
          throw new Error(`POST /users answered ${saved.status} ${JSON.stringify(saved.json)}\n${server.output()}`);
        }
        const read = await request(server, port, 'GET', `/users/${saved.json.id}`);
        if (read.status !== 200 || JSON.stringify(read.json) !== JSON.stringify(saved.json)) {
          throw new Error(
            `GET /users/${saved.json.id} answered ${read.status} ${JSON.stringify(read.json)}, saved ${JSON.stringify(saved.json)}`,
          );
        }
        console.log(`matrix: ${app.name}: TypeORM row ${JSON.stringify(read.json)} read back, health up`);
      } finally {
        await server.stop();
      }
    });
  } finally {
    await withPostgres((client) => client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));
  }
  const versions = await run('npm', ['ls', '--depth=0', '--json'], { cwd: dir }).then(({ stdout }) => {
    const { dependencies } = JSON.parse(stdout);
    const pick = ['@nestjs/core', '@nestjs/terminus', 'typeorm', 'ioredis', 'typescript', 'pg'];
    return pick.filter((name) => dependencies[name]).map((name) => `${name}@${dependencies[name].version}`);
  });
  console.log(`matrix: ${app.name}: passed with ${versions.join(', ')}`);
}

/** @arethetypeswrong/cli on the tarball, every entry. */
async function checkTypes(tarball) {
  // esm-only: the package is ESM only, on purpose. CommonJS apps reach it through require(esm) (Node >= 20.19) and
  // TypeScript >= 5.8 with `module: nodenext`, which the nest11-cjs app builds and runs; attw's node16-cjs check
  // would report that route as "CJS resolves to ESM". node10 resolution has no subpath exports at all.
  const attw = join(ROOT, 'node_modules', '.bin', 'attw');
  const output = await sh(
    attw,
    ['--pack', '--profile', 'esm-only', '--format', 'table-flipped', '--no-color', tarball],
    {
      cwd: ROOT,
    },
  ).catch((error) => {
    throw new Error(`@arethetypeswrong/cli found problems:\n${error.message}`);
  });
  console.log(output.trim());
}

async function main() {
  const started = Date.now();
  const selected = process.env.MATRIX_APPS?.split(',') ?? APPS.map((app) => app.name);
  const work = mkdtempSync(join(tmpdir(), 'snowflake-matrix-'));
  const packed = await timed('npm pack', () =>
    sh('npm', ['pack', '--json', '--pack-destination', work], { cwd: ROOT }),
  );
  const tarball = join(work, JSON.parse(packed)[0].filename);
  const postgres = await postgresReachable();
  if (!postgres) {
    console.log(`matrix: NOT CHECKED: the TypeORM row (no PostgreSQL at ${DATABASE_URL}; set MATRIX_DATABASE_URL).`);
  }
  const redis = new RedisProcess({ name: 'matrix', port: await freePort(), dir: join(work, 'redis') });
  await redis.start();
  try {
    for (const app of APPS.filter((candidate) => selected.includes(candidate.name))) {
      console.log(`matrix: ${app.name}: ${app.note}`);
      try {
        await (app.newcomer ? runNewcomer : runApp)(app, { work, tarball, redisUrl: redis.url, postgres });
      } catch (error) {
        failures.push(app.name);
        console.error(`matrix: ${app.name}: FAILED\n${error.message}`);
      }
    }
    await timed('attw', () => checkTypes(tarball)).catch((error) => {
      failures.push('attw');
      console.error(`matrix: attw: FAILED\n${error.message}`);
    });
  } finally {
    await redis.kill();
    if (process.env.MATRIX_KEEP) console.log(`matrix: kept ${work}`);
    else await timed('clean up', async () => rmSync(work, { recursive: true, force: true }));
  }
  console.log(`matrix: total ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (failures.length > 0) {
    console.error(`matrix: FAILED: ${failures.join(', ')}`);
    process.exitCode = 1;
  } else {
    console.log('matrix: all apps installed without flags, built, ran and passed their tests; attw clean');
  }
}

await main();
