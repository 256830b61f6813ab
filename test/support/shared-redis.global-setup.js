import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The e2e project's global setup: one redis-server per Jest worker process, so that suites which need a plain Redis
 * (no restarts, no special configuration) share it instead of starting their own, each test in a namespace of its
 * own (test/support/shared-redis.ts). A worker runs one test file at a time, so a file may still FLUSHALL its
 * worker's server. The ports reach the workers through the environment, which they inherit; the global teardown
 * stops the servers.
 */
export default async function startSharedRedisServers(globalConfig) {
  const binary = process.env.REDIS_SERVER_BINARY ?? 'redis-server';
  const count = Math.max(1, Number(globalConfig.maxWorkers) || 1);
  const dir = mkdtempSync(join(tmpdir(), 'snowflake-shared-redis-'));
  const servers = [];
  globalThis.__SNOWFLAKE_SHARED_REDIS__ = { servers, dir };
  for (let i = 0; i < count; i++) servers.push(await start(binary, dir, i));
  process.env.SNOWFLAKE_TEST_REDIS_PORTS = servers.map((server) => server.port).join(',');
}

async function start(binary, dir, index) {
  const port = await freePort();
  const child = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let failure;
  child.once('error', (error) => (failure = error));
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk.toString()));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (failure !== undefined) {
      throw new Error(
        failure.code === 'ENOENT'
          ? `redis-server not found (REDIS_SERVER_BINARY=${binary}): install it, e.g. apt-get install -y redis-server`
          : `redis-server could not be started (REDIS_SERVER_BINARY=${binary}): ${failure.message}`,
      );
    }
    if (child.exitCode !== null)
      throw new Error(`shared redis-server ${index} exited with ${child.exitCode}: ${stderr}`);
    if (await answersPing(port)) return { port, child };
    if (Date.now() > deadline) throw new Error(`shared redis-server ${index} did not start within 10 s: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function answersPing(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
  });
}
