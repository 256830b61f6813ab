/**
 * Starts a throwaway `redis-server` on a free loopback port for a benchmark, and stops it again. It keeps nothing:
 * no snapshots, no append-only file, and an empty directory of its own, so that a server killed and started again
 * on the same port comes back without its data, as after a crash of a Redis that does not persist.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';

/** Servers still running, killed when the bench process exits however it ends. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A running throwaway redis-server (see {@link startRedis}). */
export interface RedisProcess {
  url: string;
  port: number;
  readonly client: Redis;
  start(): Promise<void>;
  kill(): Promise<void>;
  restart(downtimeMs: number): Promise<{ killedAt: number; answeredAt: number }>;
  stop(): Promise<void>;
}

/**
 * A redis-server on a free port, answering once this resolves.
 *
 * - `client`: an admin connection to the server as it runs now (a new one after each `start()`).
 * - `kill()`: SIGKILL, and waits for the exit; the data is gone.
 * - `start()`: starts it again on the same port, empty, and waits until it answers.
 * - `restart(downtimeMs)`: `kill()`, `downtimeMs` of nothing listening, `start()`; resolves with the monotonic times
 *   (`performance.now()`) at which the server was killed and answered again.
 * - `stop()`: kills it for good and removes its directory.
 */
export async function startRedis(): Promise<RedisProcess> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'bench-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let probe: Redis | undefined;

  async function start(): Promise<void> {
    if (child !== undefined) throw new Error('redis-server is already running');
    const spawned = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: 'ignore' },
    );
    child = spawned;
    live.add(spawned);
    spawned.once('exit', () => live.delete(spawned));
    let spawnError: Error | undefined;
    spawned.once('error', (error) => (spawnError = error));
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (spawnError !== undefined) throw new Error(`redis-server could not be started: ${spawnError.message}`);
      probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        return;
      } catch {
        probe.disconnect();
        if (Date.now() > deadline) throw new Error('redis-server did not start');
        await sleep(10);
      }
    }
  }

  async function kill(): Promise<void> {
    probe?.disconnect();
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill('SIGKILL');
    });
  }

  await start();
  return {
    url,
    port,
    get client() {
      return probe!;
    },
    start,
    kill,
    async restart(downtimeMs: number) {
      const killedAt = performance.now();
      await kill();
      await sleep(Math.max(0, downtimeMs - (performance.now() - killedAt)));
      await start();
      return { killedAt, answeredAt: performance.now() };
    },
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
