/**
 * The documentation's TypeScript, as a reader pastes it: every ```ts block of README.md, docs/*.md, ARCHITECTURE.md,
 * CONTRIBUTING.md and sample-app/README.md becomes a module under `.tmp/readme/src/` (inside the repository, so that
 * `nestjs-snowflake/…` resolves through the package's own `exports` to the built `dist/`), is compiled with the
 * project's TypeScript and compiler options (strict, nodenext, decorators), and the blocks marked `ts-run` are run as
 * apps against a redis-server of the test.
 * The markers are described in `readme-blocks.ts`.
 *
 * `./generated/prisma/client.js`, which the Prisma example imports, is a client generated from the documentation's
 * own ```prisma schema (its `output` is `../src/generated/prisma`, next to the blocks; docs/prisma.md has it), so the
 * schema is checked too.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, RedisServer } from '../support/redis-server.js';
import { markdownBlocks, markdownLine, moduleSource, typeScriptBlocks, type MarkdownBlock } from './readme-blocks.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const WORK = join(root, '.tmp/readme');
/** Every page a reader may copy code from: the README, the docs pages, the guides for contributors, the sample's. */
const MARKDOWN = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
  'ARCHITECTURE.md',
  'CONTRIBUTING.md',
  'sample-app/README.md',
];
/** Compiling Nest, TypeORM and a generated Prisma client on a busy 2-core machine. */
const COMPILE_TIMEOUT_MS = 180_000;
/** Booting the app plus 12 s of settling in the fresh namespace of a new redis-server. */
const SERVE_TIMEOUT_MS = 40_000;

const blocks = MARKDOWN.flatMap((file) => markdownBlocks(file, readFileSync(join(root, file), 'utf8')));
const tsBlocks = typeScriptBlocks(blocks);
const runnable = tsBlocks.filter((block) => block.run !== undefined);
const prismaSchemas = blocks.filter((block) => block.lang === 'prisma' && /^\s*generator\s/m.test(block.code));

/** Where a block is written, relative to WORK. */
function modulePath(block: MarkdownBlock): string {
  return `src/${block.file
    .replace(/\.md$/i, '')
    .replace(/[^\w]+/g, '-')
    .toLowerCase()}-${block.line}.ts`;
}
const name = (block: MarkdownBlock) => `${block.file}:${block.line}`;

/** Compiler messages per module (relative to WORK), and those of no block. */
let diagnostics = new Map<string, string[]>();
const prismaFailures: string[] = [];

beforeAll(() => {
  if (!existsSync(join(root, 'dist/index.js'))) {
    throw new Error("The documentation's blocks are compiled against the built package: run `npm run build` first.");
  }
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(join(WORK, 'src'), { recursive: true });
  mkdirSync(join(WORK, 'prisma'), { recursive: true });
  for (const block of tsBlocks) writeFileSync(join(WORK, modulePath(block)), moduleSource(block));

  for (const schema of prismaSchemas) {
    const path = join(
      WORK,
      `prisma/${modulePath(schema)
        .replace(/^src\//, '')
        .replace(/\.ts$/, '.prisma')}`,
    );
    writeFileSync(path, schema.code);
    const generate = spawnSync(
      process.execPath,
      [join(root, 'node_modules/prisma/build/index.js'), 'generate', '--schema', path],
      // As in package.json's prisma:generate: generating needs no schema engine, whose download fails offline.
      { cwd: WORK, env: { ...childEnv(), PRISMA_SCHEMA_ENGINE_BINARY: '/bin/false' }, encoding: 'utf8' },
    );
    if (generate.status !== 0) {
      prismaFailures.push(`${name(schema)}: prisma generate failed:\n${generate.stdout}${generate.stderr}`);
    }
  }

  diagnostics = compile(tsBlocks.map(modulePath));
}, COMPILE_TIMEOUT_MS);

describe('the documentation as written', () => {
  it('has TypeScript blocks, and a runnable one', () => {
    expect(tsBlocks.length).toBeGreaterThan(0);
    expect(runnable.length).toBeGreaterThan(0);
  });

  it('has Prisma schemas that generate a client', () => {
    expect(prismaFailures).toEqual([]);
  });

  it.each(tsBlocks.map((block) => [name(block), block] as const))(
    '%s compiles against the built package',
    (_name, block) => {
      const errors = (diagnostics.get(modulePath(block)) ?? []).map((message) => located(block, message));
      expect(errors).toEqual([]);
    },
  );

  it('has no compiler error outside the blocks (the generated Prisma client, the configuration)', () => {
    const blockFiles = new Set(tsBlocks.map(modulePath));
    const others = [...diagnostics].filter(([file]) => !blockFiles.has(file)).flatMap(([, messages]) => messages);
    expect(others).toEqual([]);
  });

  describe('runnable blocks', () => {
    let redis: RedisServer;

    beforeAll(async () => {
      redis = await RedisServer.start();
    });

    afterAll(async () => {
      await redis?.dispose();
    });

    it.each(runnable.map((block) => [name(block), block.run!.join(', '), block] as const))(
      '%s runs and answers %s',
      async (label, _requests, block) => {
        const port = await freePort();
        const script = join(WORK, 'out/.tmp/readme', modulePath(block).replace(/\.ts$/, '.js'));
        const app = spawn(process.execPath, [script], {
          cwd: WORK,
          env: { ...childEnv(), REDIS_URL: redis.url, PORT: String(port), NO_COLOR: '1' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        app.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
        app.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
          app.once('exit', (code, signal) => done({ code, signal })),
        );
        try {
          let previous: Record<string, unknown> = {};
          for (const [index, request] of block.run!.entries()) {
            const path = request.replace(/^GET /, '').replace('{id}', () => String(previous.id));
            const response = await get(`http://127.0.0.1:${port}${path}`, index === 0 ? SERVE_TIMEOUT_MS : 0, () =>
              app.exitCode !== null ? `${label} exited with ${app.exitCode}:\n${output}` : undefined,
            );
            const body = await response.text();
            expect({ request: path, status: response.status, body }).toEqual({ request: path, status: 200, body });
            previous = JSON.parse(body) as Record<string, unknown>;
            // IDs travel as decimal strings: a JSON number would round them.
            if ('id' in previous) expect(previous.id).toMatch(/^\d+$/);
          }
          // The quickstart enables shutdown hooks: SIGTERM closes the app, which then ends by the same signal.
          app.kill('SIGTERM');
          const exit = await Promise.race([exited, timeout(10_000)]);
          expect({ exit, output }).toEqual({ exit: { code: null, signal: 'SIGTERM' }, output });
        } finally {
          if (app.exitCode === null && app.signalCode === null) app.kill('SIGKILL');
        }
      },
      SERVE_TIMEOUT_MS + 30_000,
    );
  });
});

/**
 * Compiles the modules (and emits them to `out/`) with the project's TypeScript, returning the messages per file.
 * tsc reports only syntax errors while any file has one, so the files with messages are set aside and the others
 * compiled again, until a round finds nothing new: one block's typo never hides another block's type error.
 */
function compile(files: string[]): Map<string, string[]> {
  const found = new Map<string, string[]>();
  let remaining = files;
  while (remaining.length > 0) {
    writeFileSync(
      join(WORK, 'tsconfig.json'),
      JSON.stringify({
        extends: '../../tsconfig.json',
        // rootDir is the repository, so that nothing is ever emitted beside a source outside WORK.
        compilerOptions: { rootDir: '../..', outDir: 'out', noEmit: false, declaration: false, sourceMap: false },
        files: remaining,
        include: [],
      }),
    );
    const tsc = spawnSync(
      process.execPath,
      [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json', '--pretty', 'false'],
      { cwd: WORK, env: childEnv(), encoding: 'utf8' },
    );
    const round = parseDiagnostics(tsc.stdout + tsc.stderr);
    if (tsc.status !== 0 && round.size === 0) throw new Error(`tsc failed without a diagnostic:\n${tsc.stdout}`);
    for (const [file, messages] of round) found.set(file, [...(found.get(file) ?? []), ...messages]);
    const next = remaining.filter((file) => !round.has(file));
    if (next.length === remaining.length) break;
    remaining = next;
  }
  return found;
}

/** The environment of a child: Jest's NODE_OPTIONS (--experimental-vm-modules) is not for it. */
function childEnv(): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _jestFlags, ...env } = process.env;
  return env;
}

/**
 * `file(line,col): error TSnnnn: message` lines of `tsc --pretty false`, with their indented continuation lines,
 * grouped by file (relative to WORK); messages without a file under the key `''`.
 */
function parseDiagnostics(output: string): Map<string, string[]> {
  const byFile = new Map<string, string[]>();
  let last: string[] | undefined;
  for (const line of output.split('\n')) {
    const located = /^(.+?)\((\d+),(\d+)\): (error|warning) (TS\d+): (.*)$/.exec(line);
    const global = /^(error|warning) (TS\d+): (.*)$/.exec(line);
    if (located !== null) {
      const [, file, row, column, , code, message] = located;
      last = byFile.get(file) ?? [];
      byFile.set(file, last);
      last.push(`${row}:${column} ${code}: ${message}`);
    } else if (global !== null) {
      last = byFile.get('') ?? [];
      byFile.set('', last);
      last.push(`${global[2]}: ${global[3]}`);
    } else if (/^\s+\S/.test(line) && last !== undefined) {
      last[last.length - 1] += `\n${line}`;
    }
  }
  return byFile;
}

/** A message of the block's module, located at the markdown line it comes from. */
function located(block: MarkdownBlock, message: string): string {
  const [, row, column, rest] = /^(\d+):(\d+) ([\s\S]*)$/.exec(message)!;
  const line = markdownLine(block, Number(row));
  const where =
    line < block.line ? `the ts-prelude of the block at line ${block.line}` : `the block at line ${block.line}`;
  return `${block.file}:${line}:${column} (${where}): ${rest}`;
}

/** GET, retried while nothing listens yet (up to `waitMs`), failing early when `gone()` says the app has exited. */
async function get(url: string, waitMs: number, gone: () => string | undefined): Promise<Response> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await fetch(url, { signal: AbortSignal.timeout(10_000) });
    } catch (error) {
      const exited = gone();
      if (exited !== undefined) throw new Error(exited, { cause: error });
      if (Date.now() > deadline) throw new Error(`GET ${url}: no answer within ${waitMs} ms`, { cause: error });
      await new Promise((done) => setTimeout(done, 200));
    }
  }
}

function timeout(ms: number): Promise<'timeout'> {
  return new Promise((done) => setTimeout(() => done('timeout'), ms).unref());
}
