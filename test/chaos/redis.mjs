// redis-server processes the chaos run owns: each on a free loopback port (never 6379), in its own directory, with
// no automatic persistence, so that the run can kill, restart, roll back and flush them without touching any other
// Redis on the machine.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';

export const REDIS_SERVER_BINARY = process.env.REDIS_SERVER_BINARY ?? 'redis-server';

/** A free TCP port on loopback, chosen by the OS. */
export function freePort() {
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

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether something on the port answers PING with PONG. */
export function answersPing(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const timer = setTimeout(() => finish(false), 1000);
    const finish = (ok) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => finish(data.toString().startsWith('+PONG')));
    socket.once('error', () => finish(false));
  });
}

/**
 * One redis-server (or Sentinel) process. `kill()` is SIGKILL: nothing is saved on the way down. The server loads
 * `dump.rdb` from its directory at start, so the run decides what a restart comes back with by what it leaves there:
 * nothing (data loss) or an older snapshot (rollback).
 */
export class RedisProcess {
  /**
   * @param {{ name: string, port: number, dir: string, args?: string[], sentinel?: string[] }} options
   * `sentinel`: the lines of a Sentinel configuration; the process then runs as a Sentinel.
   */
  constructor({ name, port, dir, args = [], sentinel }) {
    this.name = name;
    this.port = port;
    this.dir = dir;
    this.args = args;
    this.sentinel = sentinel;
    this.child = undefined;
    this.starts = 0;
    this.stderr = '';
    mkdirSync(dir, { recursive: true });
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid() {
    return this.child?.pid;
  }

  get running() {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  get dumpFile() {
    return join(this.dir, 'dump.rdb');
  }

  get snapshotFile() {
    return join(this.dir, 'snapshot.rdb');
  }

  /** Starts the process (with extra arguments for this start only) and waits until it answers PING. */
  async start(extraArgs = []) {
    let argv;
    if (this.sentinel !== undefined) {
      const config = join(this.dir, 'sentinel.conf');
      // Sentinel rewrites its configuration as it learns; a restart starts from the original again.
      if (this.starts === 0) writeFileSync(config, `${[`port ${this.port}`, ...this.sentinel].join('\n')}\n`);
      argv = [config, '--sentinel', '--bind', '127.0.0.1', '--dir', this.dir];
    } else {
      argv = [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        // No automatic saves and no AOF: a kill -9 loses everything since the last snapshot the run took itself.
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        this.dir,
        '--dbfilename',
        'dump.rdb',
        '--daemonize',
        'no',
        // DEBUG RELOAD: a rollback within the same process (the rollback fault).
        '--enable-debug-command',
        'yes',
        ...this.args,
        ...extraArgs,
      ];
    }
    this.starts += 1;
    const child = spawn(REDIS_SERVER_BINARY, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    let spawnError;
    child.once('error', (error) => (spawnError = error));
    child.stderr.on('data', (chunk) => (this.stderr = (this.stderr + chunk.toString()).slice(-2000)));
    const deadline = performance.now() + 10_000;
    for (;;) {
      if (spawnError !== undefined) {
        this.child = undefined;
        throw new Error(
          spawnError.code === 'ENOENT'
            ? `${REDIS_SERVER_BINARY} not found: install it (apt-get install -y redis-server) or set REDIS_SERVER_BINARY`
            : `${this.name}: ${REDIS_SERVER_BINARY} could not be started: ${spawnError.message}`,
        );
      }
      if (child.exitCode !== null) {
        throw new Error(`${this.name} (port ${this.port}) exited with ${child.exitCode}: ${this.stderr}`);
      }
      if (await answersPing(this.port)) return;
      if (performance.now() > deadline) throw new Error(`${this.name} did not answer within 10 s: ${this.stderr}`);
      await sleep(20);
    }
  }

  /** SIGKILL, and waits for the exit. */
  async kill() {
    const child = this.child;
    this.child = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  /** SAVE, and keeps the file aside as the snapshot a later rollback returns to. */
  async takeSnapshot() {
    await withClient(this.port, (client) => client.call('SAVE'));
    copyFileSync(this.dumpFile, this.snapshotFile);
  }

  get hasSnapshot() {
    return existsSync(this.snapshotFile);
  }

  /** SAVE: the snapshot DEBUG RELOAD NOSAVE returns to, and what the next start loads unless forgotten. */
  async save() {
    await withClient(this.port, (client) => client.call('SAVE'));
  }

  /** Leaves nothing to load at the next start. */
  forgetData() {
    rmSync(this.dumpFile, { force: true });
  }

  /** Puts the snapshot back, so that the next start loads it. */
  restoreSnapshot() {
    copyFileSync(this.snapshotFile, this.dumpFile);
  }
}

/** Runs `work` with a short-lived admin connection to the server on `port`. */
export async function withClient(port, work) {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    connectTimeout: 1000,
    commandTimeout: 5000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await work(client);
  } finally {
    client.disconnect();
  }
}
