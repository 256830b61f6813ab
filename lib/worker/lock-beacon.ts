import { chmodSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';

/**
 * A lock holder's beacon: a Unix socket beside its lock file that it listens on for as long as it holds the lock. The
 * kernel closes it with the process, however that ends, so a process that cannot see the holder (another PID
 * namespace: a container sharing the lock directory and the host name) still learns whether it runs: a connection
 * is accepted while it does, and refused once it is gone. Only on one kernel: a socket file on a network file system
 * answers nothing from another machine.
 */
export interface LockBeacon {
  readonly path: string;
  close(): void;
}

/** Socket paths longer than this do not fit `sockaddr_un` (108 bytes on Linux, with its NUL; 104 elsewhere). */
const MAX_SOCKET_PATH = 100;
/** How long a probe waits for an answer before it counts the holder as running. */
const PROBE_TIMEOUT_MS = 1000;

/** Listens on `path`; undefined where it cannot (the path too long, the directory not writable, no Unix sockets). */
export async function openBeacon(path: string): Promise<LockBeacon | undefined> {
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH || process.platform === 'win32') return undefined;
  const server: Server = createServer((socket) => socket.destroy());
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(path, () => resolve(true));
  });
  if (!listening) return undefined;
  server.unref();
  // A process of another user that shares the directory must be able to connect (a refusal would read as gone).
  quietly(() => chmodSync(path, 0o666));
  let open = true;
  return {
    path,
    close: () => {
      if (!open) return;
      open = false;
      server.close();
      quietly(() => unlinkSync(path));
    },
  };
}

/**
 * Whether the holder whose beacon is at `path` may still run: false only on proof that nothing listens there (the
 * connection refused: the socket file outlived its process); any other answer, or none in time, counts as running.
 * A socket file that is gone proves nothing (a cleaner of old files in `/tmp` may have removed a live one).
 */
export function beaconMayAnswer(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path);
    const done = (running: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(running);
    };
    const timer = setTimeout(() => done(true), PROBE_TIMEOUT_MS);
    socket.once('connect', () => done(true));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code !== 'ECONNREFUSED'));
  });
}

/** Removes the socket file of a holder shown gone. */
export function removeBeacon(path: string): void {
  quietly(() => unlinkSync(path));
}

function quietly(action: () => void): void {
  try {
    action();
  } catch {
    // Gone already, or not ours to change: nothing depends on it.
  }
}
