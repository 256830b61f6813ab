/**
 * `npm run sample` on a machine with nothing running: without REDIS_URL the sample's entry point
 * (`sample-app/dist/src/main.js`, built by `npm run sample:build`) starts a redis-server of its own, serves within
 * seconds, answers the commands of sample-app/README.md as they are written, and stops that redis-server when it
 * exits.
 */
import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { markdownBlocks } from '../readme/readme-blocks.js';
import { tempDirectory } from './sample-app.harness.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const MAIN = join(root, 'sample-app/dist/src/main.js');
/**
 * Loading Nest, TypeORM and Prisma (about 3 s on an idle 2-core machine, more when it is busy) plus the 2 s of
 * settling of the run's fresh Redis.
 */
/** Loading the app, then the fresh namespace's settling (12 s). */
const SERVE_WITHIN_MS = 30_000;
/** Shutdown closes the HTTP server and the databases and releases the lease: well under this. */
const EXIT_WITHIN_MS = 5_000;

type Exit = { code: number | null; signal: NodeJS.Signals | null };
type Sample = { child: ChildProcessByStdio<null, Readable, Readable>; output(): string; exited: Promise<Exit> };

/** The sample's environment: the test's own, without anything that would point it at a Redis or a database. */
function sampleEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const {
    NODE_OPTIONS: _jestFlags,
    REDIS_URL: _redis,
    SNOWFLAKE_LEASE_TTL_MS: _ttl,
    SNOWFLAKE_NAMESPACE: _namespace,
    DATABASE_URL: _database,
    ...inherited
  } = process.env;
  return { ...inherited, NO_COLOR: '1', PORT: '0', ...extra };
}

function startSample(cwd: string, env: NodeJS.ProcessEnv): Sample {
  // A directory of its own as the working directory, so that no .env file of the checkout is read.
  const child = spawn(process.execPath, [MAIN], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<Exit>((done) => child.once('exit', (code, signal) => done({ code, signal })));
  return { child, output: () => output, exited };
}

async function waitFor(sample: Sample, pattern: RegExp, withinMs: number): Promise<RegExpExecArray> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const match = pattern.exec(sample.output());
    if (match !== null) return match;
    if (sample.child.exitCode !== null)
      throw new Error(`The sample exited (${sample.child.exitCode}):\n${sample.output()}`);
    if (Date.now() > deadline) throw new Error(`No ${String(pattern)} within ${withinMs} ms:\n${sample.output()}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  return Promise.race([promise, new Promise<'timeout'>((done) => setTimeout(() => done('timeout'), ms).unref())]);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

/** Whether a process runs: a zombie (exited, not yet reaped by whoever adopted it) does not. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** The redis-server is sent SIGTERM as the sample exits: it gets a moment to close its port and go. */
async function expectGone(pid: number, port: number): Promise<void> {
  const deadline = Date.now() + EXIT_WITHIN_MS;
  while ((running(pid) || (await accepts(port))) && Date.now() < deadline) {
    await new Promise((done) => setTimeout(done, 50));
  }
  expect({ running: running(pid), accepts: await accepts(port) }).toEqual({ running: false, accepts: false });
}

/** The sample README's commands, run by bash against `port`, with curl failing on any HTTP error. */
function runReadmeCommands(script: string, port: number): Promise<{ code: number; stdout: string; stderr: string }> {
  const prelude = [
    'set -euo pipefail',
    // -f: an answer of 400 or above fails the script; one answer per line.
    'curl() { command curl -fsS --max-time 10 "$@"; echo; }',
  ].join('\n');
  const body = script.replaceAll('localhost:3000', `localhost:${port}`);
  return new Promise((done) => {
    execFile('bash', ['-c', `${prelude}\n${body}`], { timeout: 60_000 }, (error, stdout, stderr) => {
      done({ code: error === null ? 0 : ((error as { code?: number }).code ?? -1), stdout, stderr });
    });
  });
}

describe('npm run sample without REDIS_URL', () => {
  const dir = tempDirectory();
  let sample: Sample | undefined;

  beforeAll(() => {
    if (!existsSync(MAIN)) {
      throw new Error(`${MAIN} is missing: run \`npm run build && npm run sample:build\` before this test.`);
    }
  });

  afterEach(() => {
    if (sample !== undefined && sample.child.exitCode === null && sample.child.signalCode === null) {
      sample.child.kill('SIGKILL');
    }
  });

  afterAll(() => dir.remove());

  it('starts a redis-server of its own, serves within seconds, runs the README commands, and stops both on SIGTERM', async () => {
    const startedAt = Date.now();
    sample = startSample(dir.path('.'), sampleEnv({ DATABASE_URL: `file:${dir.path('sample.sqlite')}` }));
    const [, port, pid] = await waitFor(
      sample,
      /Started redis-server on 127\.0\.0\.1:(\d+) \(pid (\d+)\) for this run, lease TTL 2000 ms; set REDIS_URL to use your own\./,
      SERVE_WITHIN_MS,
    );
    const redisPort = Number(port);
    const redisPid = Number(pid);
    const [, url] = await waitFor(
      sample,
      /Listening on (http:\/\/\S+) as worker 0 \(namespace "sample-app"/,
      SERVE_WITHIN_MS,
    );
    const servedAfterMs = Date.now() - startedAt;
    expect(servedAfterMs).toBeLessThan(SERVE_WITHIN_MS);
    // The sample's worker ID lease lives in that server, in the namespace it settled for (12 s, whatever the TTL).
    expect(sample.output()).toMatch(/waiting 1\d{4} ms so that earlier holders have stopped/);
    expect(running(redisPid)).toBe(true);
    expect(await accepts(redisPort)).toBe(true);

    const next = await fetch(`${url}/ids/next`);
    expect(next.status).toBe(200);
    expect(((await next.json()) as { id: unknown }).id).toMatch(/^\d+$/);
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    const details = ((await health.json()) as { details: { snowflake: Record<string, unknown> } }).details.snowflake;
    expect(details).toMatchObject({ status: 'up', source: 'redis', leaseState: 'held' });
    expect(details.leaseExpiresInMs).toBeLessThanOrEqual(2000);

    // The commands of sample-app/README.md, as written: each ID is taken from the answer before it.
    const readme = markdownBlocks('sample-app/README.md', readFileSync(join(root, 'sample-app/README.md'), 'utf8'));
    const commands = readme.filter((block) => block.lang === 'sh' && block.code.includes('jq -r .id'));
    expect(commands).toHaveLength(1);
    const appPort = Number(new URL(url).port);
    const result = await runReadmeCommands(commands[0].code, appPort);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const answers = result.stdout.split('\n').filter((line) => line !== '');
    // The range of the last hour lists the user just created, and the notes about it the note just written.
    expect(answers.filter((line) => line.startsWith('[') && line.includes('"email":"ada@example.com"'))).toHaveLength(
      1,
    );
    expect(answers.filter((line) => line.startsWith('[') && line.includes('"text":"signed up"'))).toHaveLength(1);
    // GET /orders/$ref answered with the order whose reference the user's answer carried.
    const orders = answers
      .filter((line) => line.startsWith('{"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((body) => body.item === 'book' && !('email' in body));
    expect(orders).toEqual([expect.objectContaining({ quantity: 2, reference: expect.stringMatching(/^ord_/) })]);
    expect(answers.at(-1)).toMatch(/^\{"status":"ok"/);

    sample.child.kill('SIGTERM');
    const exit = await within(sample.exited, EXIT_WITHIN_MS);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(sample.output()).toContain('Released worker ID 0 in namespace "sample-app"');
    await expectGone(redisPid, redisPort);
  });

  it('stops the redis-server it started when the app fails to start', async () => {
    sample = startSample(dir.path('.'), sampleEnv({ DATABASE_URL: 'http://not-a-database' }));
    const [, port, pid] = await waitFor(
      sample,
      /Started redis-server on 127\.0\.0\.1:(\d+) \(pid (\d+)\)/,
      SERVE_WITHIN_MS,
    );
    const exit = await within(sample.exited, SERVE_WITHIN_MS);
    expect(exit).toEqual({ code: 1, signal: null });
    expect(sample.output()).toContain('DATABASE_URL "http://not-a-database"');
    await expectGone(Number(pid), Number(port));
  });

  it('without redis-server on PATH, fails at once saying to install it or set REDIS_URL', async () => {
    sample = startSample(
      dir.path('.'),
      sampleEnv({ PATH: dir.path('empty-path'), DATABASE_URL: `file:${dir.path('other.sqlite')}` }),
    );
    const exit = await within(sample.exited, SERVE_WITHIN_MS);
    expect(exit).toEqual({ code: 1, signal: null });
    expect(sample.output()).toContain('REDIS_URL is not set and no redis-server was found on PATH');
    expect(sample.output()).toContain('sudo apt-get install -y redis-server');
    expect(sample.output()).toContain('set REDIS_URL to a Redis you run');
  });
});
