/**
 * The scripted newcomer: an app built from the documentation's own blocks, not from hand-written sources, so that a
 * block or an install line that drifts from the package fails here.
 *
 * Taken from the markdown at run time:
 * - README.md "Install": the `npm install` line, run as written (with the packed tarball for `nestjs-snowflake`);
 * - README.md "Quickstart": the ```ts block, saved as src/main.ts;
 * - docs/typeorm.md: its first ```ts block (entities and module) as src/typeorm.module.ts, and the `npm install` line
 *   of "Adopting it in an existing app";
 * - docs/health.md: its first ```ts block as src/health.module.ts; its install line is getting-started's
 *   `npm install @nestjs/terminus` line (the one whose comment names nestjs-snowflake/health);
 * - docs/getting-started.md "tsconfig": the ```json block, as tsconfig.json for both apps. Under `module: nodenext`
 *   package.json's `type` decides the output, so the same file compiles the CommonJS app as CommonJS.
 *
 * Glue, the least that makes the blocks an app, and said so where it is:
 * - CommonJS: the Quickstart ends with top-level `await`, which a CommonJS module cannot have (TS1378); its
 *   statements from `const app = await NestFactory.create` on are wrapped in an async `bootstrap()`, nothing else.
 * - The TypeORM block is a module, not an app: src/typeorm-main.ts (below) boots its AppModule with the health
 *   block's HealthModule and a controller that runs the line the page shows as a comment
 *   (`users.save(users.create({ email, orders: [orders.create({})] }))`) and reads the row back.
 * - The TypeORM block connects with `type: 'postgres'`, but the page's install line names no driver: `pg` is installed
 *   on top of the documented lines (reported as missing from the page).
 * - While docs/typeorm.md's install line says a bare `ioredis` (npm then takes 6, and TypeORM's optional peer
 *   ioredis@^5.0.4 fails the install with ERESOLVE), every documented `ioredis` is installed as `ioredis@5`, as the
 *   page's prose says ("Keep ioredis 5 beside TypeORM"). Each such gap is printed as "DOCS GAP" on every run.
 * - The apps start from a project as people have one before they read the README: the Nest starter's packages
 *   (Nest 11 with TypeScript 5.8, CommonJS; Nest 12 with TypeScript 6, ESM). The Nest 11 app is "an existing app"
 *   as docs/typeorm.md describes it, already on TypeORM 0.3 and terminus 11: the install lines then keep its ranges.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, sleep } from '../chaos/redis.mjs';
import { blockUnder, fencedBlocks, installedPackages } from './markdown-sections.mjs';

/** The project before the README: what `nest new` gives (and, for Nest 11, the TypeORM and terminus it already has). */
const STARTERS = {
  cjs: {
    dependencies: {
      '@nestjs/common': '^11.0.1',
      '@nestjs/core': '^11.0.1',
      '@nestjs/platform-express': '^11.0.1',
      '@nestjs/terminus': '^11.0.0',
      '@nestjs/typeorm': '^11.0.0',
      'reflect-metadata': '^0.2.2',
      rxjs: '^7.8.1',
      typeorm: '^0.3.20',
    },
    devDependencies: { '@types/node': '^20.19.0', typescript: '~5.8.3' },
  },
  esm: {
    type: 'module',
    dependencies: {
      '@nestjs/common': '^12.0.0',
      '@nestjs/core': '^12.0.0',
      '@nestjs/platform-express': '^12.0.0',
      'reflect-metadata': '^0.2.2',
      rxjs: '^7.8.1',
    },
    devDependencies: { '@types/node': '^20.19.0', typescript: '^6.0.0' },
  },
};

/** Glue: the TypeORM page's module as an app with its health module, one route that saves and one that reads. */
const TYPEORM_MAIN = `// Glue (test/matrix/newcomer.mjs): boots docs/typeorm.md's AppModule with docs/health.md's HealthModule.
import { Body, Controller, Get, Module, NotFoundException, Param, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InjectRepository, TypeOrmModule } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { BigIntSerializerInterceptor } from 'nestjs-snowflake/http';
import { HealthModule } from './health.module.js';
import { AppModule, Order, User } from './typeorm.module.js';

@Controller('users')
class UsersController {
  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    @InjectRepository(Order) private readonly orders: Repository<Order>,
  ) {}

  @Post()
  async create(@Body() body: { email: string }) {
    const { email } = body;
    const user = await this.users.save(this.users.create({ email, orders: [this.orders.create({})] }));
    return { id: user.id, publicId: user.publicId, orders: user.orders.map((order) => order.id) };
  }

  @Get(':id')
  async read(@Param('id') id: string) {
    const user = await this.users.findOne({ where: { id }, relations: { orders: true } });
    if (user === null) throw new NotFoundException();
    return { id: user.id, publicId: user.publicId, orders: user.orders.map((order) => order.id) };
  }
}

@Module({
  imports: [AppModule, HealthModule, TypeOrmModule.forFeature([User, Order])],
  controllers: [UsersController],
})
class NewcomerModule {}

async function bootstrap() {
  const app = await NestFactory.create(NewcomerModule);
  app.useGlobalInterceptors(new BigIntSerializerInterceptor());
  app.enableShutdownHooks();
  await app.listen(process.env.PORT ?? 3000);
}
void bootstrap();
`;

/** Reads the documentation: sources, tsconfig and install lines, each with where it came from. */
export function newcomerSources(root) {
  const read = (file) => readFileSync(join(root, file), 'utf8');
  const readme = read('README.md');
  const typeorm = read('docs/typeorm.md');
  const health = read('docs/health.md');
  const gettingStarted = read('docs/getting-started.md');
  const firstTs = (file, text) => {
    const block = fencedBlocks(text).find((candidate) => candidate.lang === 'ts');
    if (block === undefined) throw new Error(`${file}: no \`\`\`ts block.`);
    return { ...block, where: `${file}:${block.line}` };
  };
  const quickstart = blockUnder('README.md', readme, 'Quickstart', 'ts');
  const install = blockUnder('README.md', readme, 'Install', 'sh');
  const typeormInstall = blockUnder('docs/typeorm.md', typeorm, 'Adopting it in an existing app', 'sh');
  const integrations = blockUnder('docs/getting-started.md', gettingStarted, 'Adopting it in an existing app', 'sh');
  const tsconfig = blockUnder('docs/getting-started.md', gettingStarted, 'tsconfig', 'json');
  const installs = [
    { where: install.where, packages: installedPackages(install) },
    { where: typeormInstall.where, packages: installedPackages(typeormInstall) },
    { where: integrations.where, packages: installedPackages(integrations, 'nestjs-snowflake/health') },
    // Glue: the TypeORM block connects to PostgreSQL, and no documented install line names its driver.
    { where: 'glue: the driver of the TypeORM block (type: postgres)', packages: ['pg'] },
  ];
  // Glue, while the page's install line says only `ioredis`: bare, npm takes ioredis 6, and TypeORM's optional peer
  // ioredis@^5.0.4 then fails the install with ERESOLVE (in the Nest 11 app already at the README's line). The page
  // says in prose to keep ioredis 5 beside TypeORM, so the newcomer does what it says, and the run says so each time.
  const gaps = [];
  const pinned = installedPackages(typeormInstall).some((name) => /^ioredis@/.test(name));
  if (!pinned) {
    if (!/Keep ioredis 5\s+beside TypeORM/.test(typeorm)) {
      throw new Error(
        `${typeormInstall.where}: the install line takes ioredis 6, and the page no longer says to keep 5.`,
      );
    }
    for (const line of installs) line.packages = line.packages.map((name) => (name === 'ioredis' ? 'ioredis@5' : name));
    gaps.push(
      `${typeormInstall.where}: the install line says \`ioredis\` (npm takes 6: ERESOLVE beside TypeORM); ` +
        'installed as ioredis@5, as the page says in prose ("Keep ioredis 5 beside TypeORM")',
    );
  }
  if (!installs.some((line) => !line.where.startsWith('glue') && line.packages.includes('pg'))) {
    gaps.push(`${typeormInstall.where}: no install line names \`pg\`, which the block's \`type: 'postgres'\` needs`);
  }
  return {
    gaps,
    installs,
    quickstart,
    typeormModule: firstTs('docs/typeorm.md', typeorm),
    healthModule: firstTs('docs/health.md', health),
    tsconfig,
  };
}

/**
 * CommonJS glue: a CommonJS module cannot use top-level await (TS1378), so the Quickstart's statements from
 * `const app = await NestFactory.create` on go into an async function. Throws when that statement is not there.
 */
export function asCommonJs(quickstart) {
  const lines = quickstart.code.split('\n');
  const start = lines.findIndex((line) => /^const app = await NestFactory\.create\(/.test(line));
  if (start === -1) {
    throw new Error(
      `${quickstart.where}: the Quickstart no longer boots with \`const app = await NestFactory.create(\`.`,
    );
  }
  const body = lines
    .slice(start)
    .filter((line) => line.trim() !== '')
    .map((line) => `  ${line}`);
  return [
    ...lines.slice(0, start),
    '// Glue (test/matrix/newcomer.mjs): CommonJS has no top-level await, so the bootstrap is a function.',
    'async function bootstrap() {',
    ...body,
    '}',
    'void bootstrap();',
    '',
  ].join('\n');
}

/** Writes the app: package.json of the starter, tsconfig and sources from the docs. */
export function writeNewcomerApp(dir, flavour, sources, name) {
  mkdirSync(join(dir, 'src'), { recursive: true });
  const starter = STARTERS[flavour];
  const manifest = {
    name,
    private: true,
    ...(starter.type ? { type: starter.type } : {}),
    scripts: { build: 'tsc -p tsconfig.json' },
    dependencies: starter.dependencies,
    devDependencies: starter.devDependencies,
  };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(dir, 'tsconfig.json'), `${sources.tsconfig.code}\n`);
  const main = flavour === 'cjs' ? asCommonJs(sources.quickstart) : `${sources.quickstart.code}\n`;
  writeFileSync(join(dir, 'src/main.ts'), `// ${sources.quickstart.where}\n${main}`);
  writeFileSync(
    join(dir, 'src/typeorm.module.ts'),
    `// ${sources.typeormModule.where}\n${sources.typeormModule.code}\n`,
  );
  writeFileSync(join(dir, 'src/health.module.ts'), `// ${sources.healthModule.where}\n${sources.healthModule.code}\n`);
  writeFileSync(join(dir, 'src/typeorm-main.ts'), TYPEORM_MAIN);
}

/** `npm install <packages>` for each documented line, in order, `nestjs-snowflake` being the packed tarball. */
export function installCommands(sources, tarball) {
  return sources.installs.map(({ where, packages }) => ({
    where,
    args: packages.map((name) => (name === 'nestjs-snowflake' ? tarball : name)),
  }));
}

/** Starts `node <script>` in `dir`; resolves to a handle that stops it with SIGTERM and returns its output. */
export function startApp(dir, script, env) {
  const child = spawn('node', [script], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let exited = null;
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const done = new Promise((resolve) => child.on('close', (code, signal) => resolve((exited = { code, signal }))));
  return {
    output: () => output,
    exited: () => exited,
    async stop() {
      if (exited === null) child.kill('SIGTERM');
      return done;
    },
  };
}

/** GETs (or POSTs JSON to) the app until it answers, for at most `waitMs` (the first start settles for 12 s). */
export async function request(app, port, method, path, { body, waitMs = 0 } = {}) {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, json: await response.json().catch(() => null) };
    } catch (error) {
      if (app.exited() !== null || Date.now() >= deadline) {
        throw new Error(`${method} ${path}: ${error.cause?.code ?? error.message}\n${app.output()}`, { cause: error });
      }
      await sleep(250);
    }
  }
}

export { freePort };
