import { chmodSync, closeSync, lstatSync, openSync, readdirSync, renameSync, unlinkSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { basename, dirname, join } from 'node:path';

/**
 * A lock holder's beacon: a Unix socket beside its lock file that it listens on for as long as it holds the lock. The
 * kernel closes it with the process, however that ends, so a process that cannot see the holder (another PID
 * namespace: a container sharing the lock directory and the host name) still learns whether it runs: a connection is
 * accepted while it does, and refused once it is gone. Only on one kernel: a socket file on a network file system
 * answers nothing from another machine.
 *
 * The socket's path is never read from the lock file: a reader derives it from its own path of the lock and the
 * lock's token (`<lock>.<first 8 hex digits of the token>.sock`), so that a lock file written by anyone cannot point
 * it at another file, and a directory mounted at another path in each container still names the same socket. A
 * socket counts as refused only when it is a socket, owned by the lock file's owner.
 */
export interface LockBeacon {
  close(): void;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** How long a probe waits for an answer before it counts the holder as running. */
const PROBE_TIMEOUT_MS = 1000;
/** A socket path must fit `sockaddr_un` (108 bytes on Linux); longer ones are reached through a directory descriptor. */
const MAX_SOCKET_PATH = 100;

/** Where the holder of the lock at `lockPath` with `token` listens; undefined for a token that is not a UUID. */
export function beaconPath(lockPath: string, token: string): string | undefined {
  return UUID.test(token) ? `${lockPath}.${token.slice(0, 8)}.sock` : undefined;
}

/**
 * Listens on the beacon of the lock at `lockPath` for `token`; undefined where it cannot (no Unix sockets, the
 * directory not writable). The socket is bound under a temporary name and renamed into place: libuv deletes the name
 * it bound when the handle closes (a worker thread terminated, a process's handles torn down), and the socket file
 * must stay, refusing connections, until a claimant sees it refused or the holder removes it at release.
 */
export async function openBeacon(lockPath: string, token: string): Promise<LockBeacon | undefined> {
  const path = beaconPath(lockPath, token);
  if (path === undefined || process.platform === 'win32') return undefined;
  const bound = `${path}.new`;
  const server = createServer((socket) => socket.destroy());
  // `exclusive`: a `node:cluster` worker binds the socket itself, not through its primary (which outlives it).
  const listening = await viaDirectory(bound, (short) => {
    return new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen({ path: short, exclusive: true }, () => resolve(true));
    });
  }).catch(() => false);
  if (!listening) return undefined;
  try {
    renameSync(bound, path);
  } catch {
    server.close();
    return undefined;
  }
  server.unref();
  // A process of another user that shares the directory must be able to connect (a refusal would read as gone).
  quietly(() => chmodSync(path, 0o666));
  let open = true;
  return {
    close: () => {
      if (!open) return;
      open = false;
      server.close();
      quietly(() => unlinkSync(path));
    },
  };
}

/**
 * Whether the holder of the lock at `lockPath` with `token` may still run: false only on proof, a socket of the lock
 * file's owner at the derived path that refuses a connection (it outlived its process). A socket that is missing (a
 * cleaner of old files in `/tmp` may remove a live one), not a socket, or another user's, and any answer but a
 * refusal in time, count as running.
 */
export async function beaconMayAnswer(lockPath: string, token: string): Promise<boolean> {
  const path = beaconPath(lockPath, token);
  if (path === undefined || !isOwnersSocket(path, lockPath)) return true;
  const refused = await viaDirectory(path, (short) => refusedAt(short)).catch(() => false);
  return !refused;
}

/** Removes the beacon of a holder shown gone (only a socket of the lock's owner, as the probe required). */
export function removeBeacon(lockPath: string, token: string): void {
  const path = beaconPath(lockPath, token);
  if (path !== undefined && isOwnersSocket(path, lockPath)) quietly(() => unlinkSync(path));
}

/** Removes the beacons beside `lockPath` that refuse connections: left by claimants killed while they waited. */
export async function sweepBeacons(lockPath: string, ownToken: string): Promise<void> {
  const prefix = `${basename(lockPath)}.`;
  let names: string[];
  try {
    names = readdirSync(dirname(lockPath));
  } catch {
    return;
  }
  for (const name of names) {
    const match = /^([0-9a-f]{8})\.sock$/.exec(name.slice(prefix.length));
    if (!name.startsWith(prefix) || match === null || ownToken.startsWith(match[1])) continue;
    const path = join(dirname(lockPath), name);
    // Any user's socket of this lock's naming that refuses: only this lock's claimants bind such names.
    if (!isSocket(path)) continue;
    if (await viaDirectory(path, (short) => refusedAt(short)).catch(() => false)) quietly(() => unlinkSync(path));
  }
}

function refusedAt(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path);
    const done = (refused: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(refused);
    };
    const timer = setTimeout(() => done(false), PROBE_TIMEOUT_MS);
    socket.once('connect', () => done(false));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED'));
  });
}

/** Whether `path` is a Unix socket owned by the owner of `ownerOf` (the lock file). */
function isOwnersSocket(path: string, ownerOf: string): boolean {
  try {
    const socket = lstatSync(path);
    return socket.isSocket() && socket.uid === lstatSync(ownerOf).uid;
  } catch {
    return false;
  }
}

function isSocket(path: string): boolean {
  try {
    return lstatSync(path).isSocket();
  } catch {
    return false;
  }
}

/**
 * Runs `use` with a path to `path` short enough for a socket: itself, or (Linux) `/proc/self/fd/<n>/<name>` through a
 * descriptor of its directory, held open until `use` has bound or connected.
 */
async function viaDirectory<T>(path: string, use: (short: string) => Promise<T>): Promise<T> {
  if (Buffer.byteLength(path) <= MAX_SOCKET_PATH) return use(path);
  const directory = openSync(dirname(path), 'r');
  try {
    return await use(`/proc/self/fd/${directory}/${basename(path)}`);
  } finally {
    closeSync(directory);
  }
}

function quietly(action: () => void): void {
  try {
    action();
  } catch {
    // Gone already, or not ours to change: nothing depends on it.
  }
}
