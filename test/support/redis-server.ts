import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where the tests find `redis-server` (Debian: /usr/bin/redis-server). */
export const REDIS_SERVER_BINARY = process.env.REDIS_SERVER_BINARY ?? 'redis-server';

/** A free TCP port on loopback, chosen by the OS. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A real `redis-server` on a free loopback port, without automatic persistence, that a test can stop, restart
 * (losing its data, or back to a snapshot it saved) and dispose of.
 */
export class RedisServer {
  private process: ChildProcess | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), 'snowflake-redis-'));

  private constructor(
    readonly port: number,
    private readonly extraArgs: string[],
    private readonly env: Record<string, string>,
  ) {}

  /**
   * Starts a server on a free port (or the given one) and waits until it accepts connections; `env` adds to the
   * environment it inherits (Redis takes its collation, which orders strings in Lua, from `LC_ALL` or `LANG`).
   */
  static async start(
    options: { port?: number; args?: string[]; env?: Record<string, string> } = {},
  ): Promise<RedisServer> {
    const server = new RedisServer(options.port ?? (await freePort()), options.args ?? [], options.env ?? {});
    await server.launch();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** Stops the server (SIGKILL: no chance to save anything) and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (child === undefined || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  /**
   * Stops the server (SIGKILL) and starts a new one on the same port: Redis forgetting every key, or, when the test
   * saved a snapshot with `SAVE`, going back to that snapshot.
   */
  async restart(): Promise<void> {
    await this.stop();
    await this.launch();
  }

  /** Like {@link restart}, with the server away for `awayMs` in between: an outage that ends with Redis empty. */
  async restartAfter(awayMs: number): Promise<void> {
    await this.stop();
    await new Promise((resolve) => setTimeout(resolve, awayMs));
    await this.launch();
  }

  /** Stops the server and removes its working directory. */
  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async launch(): Promise<void> {
    const child = spawn(
      REDIS_SERVER_BINARY,
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        this.dir,
        '--daemonize',
        'no',
        ...this.extraArgs,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...this.env } },
    );
    this.process = child;
    // A binary that cannot be started reports it as an 'error' event; unhandled, it would crash the test run.
    let spawnError: Error | undefined;
    child.once('error', (error) => (spawnError = error));
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (spawnError !== undefined) {
        this.process = undefined;
        throw cannotStart(spawnError);
      }
      if (child.exitCode !== null) {
        throw new Error(`redis-server on port ${this.port} exited with ${child.exitCode}: ${stderr}`);
      }
      if (await accepts(this.port)) return;
      if (Date.now() > deadline)
        throw new Error(`redis-server on port ${this.port} did not start within 10 s: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

function cannotStart(error: NodeJS.ErrnoException): Error {
  const binary = `REDIS_SERVER_BINARY=${REDIS_SERVER_BINARY}`;
  if (error.code === 'ENOENT') {
    return new Error(`redis-server not found (${binary}): install it, e.g. apt-get install -y redis-server`);
  }
  return new Error(`redis-server could not be started (${binary}): ${error.message}`);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.write('PING\r\n');
    });
    socket.once('data', (data) => {
      socket.destroy();
      // A server with a password answers NOAUTH: it is up all the same.
      resolve(/^(\+PONG|-NOAUTH)/.test(data.toString()));
    });
    socket.once('error', () => resolve(false));
  });
}
