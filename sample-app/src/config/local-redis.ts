import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** How long a fresh redis-server gets to accept connections; it usually takes a few milliseconds. */
const READY_TIMEOUT_MS = 5_000;
/** Another process may take the free port between the check and redis-server's bind: then try another. */
const PORT_ATTEMPTS = 3;

/**
 * A `redis-server` started for one run of the sample when no REDIS_URL is given, so that `npm run sample` works on a
 * machine with nothing running. It listens on a free loopback port, keeps nothing on disk (`--save ""`,
 * `--appendonly no`), and is stopped by {@link LocalRedis.stop} when the sample's process exits.
 */
export class LocalRedis {
  private constructor(
    readonly port: number,
    private readonly child: ChildProcess,
    private readonly dir: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * Starts `redis-server` from PATH and waits until it answers PING.
   * @throws Error saying to install redis-server or to set REDIS_URL when there is no redis-server on PATH
   */
  static async start(): Promise<LocalRedis> {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const dir = mkdtempSync(join(tmpdir(), 'snowflake-sample-redis-'));
      const log = join(dir, 'redis.log');
      const child = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--save',
          '',
          '--appendonly',
          'no',
          '--dir',
          dir,
          '--logfile',
          log,
        ],
        // A process group of its own: Ctrl-C in the terminal reaches the sample only, which releases its worker
        // ID in this Redis before it stops the server.
        { detached: true, stdio: 'ignore' },
      );
      const redis = new LocalRedis(port, child, dir);
      try {
        await redis.whenReady();
        child.unref();
        return redis;
      } catch (error) {
        const output = readFileSafely(log);
        redis.stop();
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw notInstalled(error);
        if (attempt < PORT_ATTEMPTS && /address already in use/i.test(output)) continue;
        throw new Error(
          `redis-server could not be started on 127.0.0.1:${port}: ${(error as Error).message}\n${output}`,
          { cause: error },
        );
      }
    }
  }

  /** Stops the server and removes its directory. Synchronous, so that it can run in a process 'exit' handler. */
  stop(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async whenReady(): Promise<void> {
    let failure: Error | undefined;
    this.child.once('error', (error) => (failure = error));
    this.child.once('exit', (code, signal) => (failure ??= new Error(`it exited (${signal ?? `code ${code}`})`)));
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (failure !== undefined) throw failure;
      if (await answersPing(this.port)) return;
      if (Date.now() > deadline) throw new Error(`no answer within ${READY_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

function notInstalled(cause: unknown): Error {
  return new Error(
    'REDIS_URL is not set and no redis-server was found on PATH to start one for this run. Install it ' +
      '(Debian/Ubuntu: sudo apt-get install -y redis-server; macOS: brew install redis), or set REDIS_URL to a ' +
      'Redis you run (REDIS_URL=redis://127.0.0.1:6379).',
    { cause },
  );
}

function readFileSafely(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** A free TCP port on loopback, chosen by the OS. */
function freePort(): Promise<number> {
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

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
  });
}
