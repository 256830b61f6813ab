import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Test, type TestingModule } from '@nestjs/testing';
import { SnowflakeModule } from '../../lib/index.js';
import { RedisServer } from '../support/redis-server.js';
import { settledNamespace } from '../support/settled-namespace.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/waiting-boot.mjs', import.meta.url));
const LAYOUT = { timestampBits: 41, datacenterBits: 0, workerBits: 1, sequenceBits: 12 } as const;
const TTL = 3000;

/**
 * An instance whose bootstrap waits for a worker ID (here: every ID held) must keep its process alive while it waits,
 * and end with a typed error, never exit silently, when Redis goes away under it: an app's main() awaits the boot, and
 * Node ends a process with nothing left to wait for (exit code 13 for a top-level await, 0 otherwise).
 */
describe('a bootstrap that waits for a worker ID (child process, real redis-server)', () => {
  let server: RedisServer;
  const modules: TestingModule[] = [];

  beforeAll(async () => {
    server = await RedisServer.start();
    await settledNamespace(server.url, 'waiting');
    for (let i = 0; i < 2; i++) {
      const module = await Test.createTestingModule({
        imports: [
          SnowflakeModule.forRoot({ layout: LAYOUT, redis: { url: server.url, namespace: 'waiting', ttlMs: TTL } }),
        ],
      }).compile();
      await module.init();
      modules.push(module);
    }
  });

  afterAll(async () => {
    await Promise.all(modules.map((m) => m.close().catch(() => undefined)));
    await server.dispose();
  });

  it.each([
    ['a URL', false],
    ['a client that does not reconnect', true],
  ])(
    'with %s, Redis killed under the wait: the process fails with a typed error, not silently',
    async (_, noReconnect) => {
      const child = spawn(
        process.execPath,
        [
          FIXTURE,
          JSON.stringify({
            url: server.url,
            namespace: 'waiting',
            ttlMs: TTL,
            layout: LAYOUT,
            noReconnect,
            redis: { waitForFreeWorkerIdMs: 4000, bootstrapAttempts: 2, retryBackoffMs: 100 },
          }),
        ],
        { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_OPTIONS: '' } },
      );
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      // Long enough for the child to load Nest and find every ID held.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const port = server.port;
      await server.stop();
      const code = await exited;
      await server.restart();
      expect(server.port).toBe(port);
      expect({ code, output }).toEqual({
        code: 2,
        output: expect.stringMatching(/"event":"error","name":"(LeaseExhaustedError|RedisUnavailableError)"/),
      });
    },
    30_000,
  );
});
