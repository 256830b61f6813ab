import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { resolveLayout, SnowflakeCodec, type SnowflakeParts } from 'nestjs-snowflake';
import { leaseKeys } from '../../lib/lease/lease.keys.js';
import { settledSharedNamespace, sharedRedisUrl } from '../support/shared-redis.js';
import { tempDirectory } from './sample-app.harness.js';

/**
 * The sample's real entry point (`sample-app/src/main.ts`, built by `npm run sample:build`; `npm test` builds it) as
 * a child process: its own bootstrap, `enableShutdownHooks()`, PORT and the line that says where it listens.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const MAIN = join(root, 'sample-app/dist/src/main.js');
const TTL_MS = 1000;
/** Loading Nest, TypeORM and Prisma on a busy 2-core machine. */
const START_TIMEOUT_MS = 40_000;
/** Shutdown closes the HTTP server, the databases and Redis, and releases the lease: well under this. */
const EXIT_TIMEOUT_MS = 5_000;

const codec = new SnowflakeCodec(resolveLayout({ preset: 'default' }));

type Exit = { code: number | null; signal: NodeJS.Signals | null };

describe('sample app entry point (node sample-app/dist/src/main.js)', () => {
  let admin: Redis;
  const dir = tempDirectory();
  let child: ChildProcessByStdio<null, Readable, Readable> | undefined;

  beforeAll(async () => {
    if (!existsSync(MAIN)) {
      throw new Error(`${MAIN} is missing: run \`npm run build && npm run sample:build\` before this test.`);
    }
    admin = new Redis(sharedRedisUrl());
  });

  afterEach(() => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  afterAll(async () => {
    admin?.disconnect();
    dir.remove();
  });

  /** Redis's own clock, the one lease expiries are written in. */
  async function redisNow(): Promise<number> {
    const [seconds, micros] = await admin.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  it('serves IDs of the worker ID it leased, and releases that ID on SIGTERM', async () => {
    const { url: redisUrl, namespace } = await settledSharedNamespace('sample-main');
    const { NODE_OPTIONS: _jestFlags, ...inherited } = process.env;
    const app = spawn(process.execPath, [MAIN], {
      // A directory of its own, so that no .env file of the checkout is read.
      cwd: dir.path('.'),
      env: {
        ...inherited,
        NO_COLOR: '1',
        REDIS_URL: redisUrl,
        PORT: '0',
        DATABASE_URL: `file:${dir.path('sample.sqlite')}`,
        SNOWFLAKE_NAMESPACE: namespace,
        SNOWFLAKE_LEASE_TTL_MS: String(TTL_MS),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = app;
    let output = '';
    app.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    app.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<Exit>((resolve) => app.once('exit', (code, signal) => resolve({ code, signal })));

    const listening = /Listening on (http:\/\/\S+) as worker (\d+) \(namespace "([^"]+)"/;
    const deadline = Date.now() + START_TIMEOUT_MS;
    let match: RegExpExecArray | null;
    while ((match = listening.exec(output)) === null) {
      if (app.exitCode !== null || app.signalCode !== null) throw new Error(`The sample app exited:\n${output}`);
      if (Date.now() > deadline) throw new Error(`No "Listening on" line within ${START_TIMEOUT_MS} ms:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const [, url, worker, printedNamespace] = match;
    const workerId = Number(worker);
    expect(printedNamespace).toBe(namespace);

    const response = await fetch(`${url}/ids/next`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as Omit<SnowflakeParts, 'id' | 'date'> & { id: string };
    const parts = codec.decode(body.id);
    expect(parts.workerId).toBe(workerId);
    expect(parts.datacenterId).toBe(0);
    expect(body).toMatchObject({ workerId, timestamp: parts.timestamp, sequence: parts.sequence });

    // While it runs, the record names this process and its expiry lies ahead.
    const keys = leaseKeys({ namespace, allocateDatacenter: false }, 0);
    const record = `${keys.recordPrefix}${workerId}`;
    const held = await admin.hgetall(record);
    expect(held.pid).toBe(String(app.pid));
    expect(held.token).toMatch(/\S/);
    expect(Number(await admin.zscore(keys.expiry, String(workerId)))).toBeGreaterThan(await redisNow());

    const signalledAt = Date.now();
    app.kill('SIGTERM');
    const exit = await Promise.race([
      exited,
      new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), EXIT_TIMEOUT_MS).unref()),
    ]);
    // Nest runs the shutdown hooks, then exits (useProcessExit, so that 'exit' handlers run): a clean shutdown ends
    // with exit code 0, a failed one with 1.
    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(EXIT_TIMEOUT_MS);
    expect(output).toContain(`Released worker ID ${workerId} in namespace "${namespace}"`);

    // Released: no token, the exact last timestamp as the ceiling, and an expiry that has passed.
    const released = await admin.hgetall(record);
    expect(released.token).toBeUndefined();
    expect(released.pid).toBe(String(app.pid));
    expect(Number(released.ceiling)).toBe(parts.timestamp);
    expect(Number(await admin.zscore(keys.expiry, String(workerId)))).toBeLessThanOrEqual(await redisNow());
  });
});
