import { readFileSync, readlinkSync } from 'node:fs';
import { hostname as osHostname } from 'node:os';
import { threadId } from 'node:worker_threads';

/**
 * Who holds a host lock: enough to tell, from another process or thread of the same host, whether the holder still
 * runs. On Linux the process and the thread are named by their start times too, so that a pid (or thread id) reused
 * after a crash, such as pid 1 of a restarted container, does not pass for the holder.
 *
 * @internal
 */
export interface LockHolder {
  pid: number;
  /** The holder's `worker_threads` thread (0: the main thread). */
  threadId: number;
  hostname: string;
  /** When the holder took the lock (ISO 8601). */
  startedAt: string;
  /** Linux only: the kernel's boot ID, the process's start (clock ticks since boot), its OS thread and that start. */
  bootId?: string;
  processStart?: string;
  tid?: number;
  threadStart?: string;
  /** Linux only: the holder's PID namespace (`/proc/self/ns/pid`), within which its pid means something. */
  pidNamespace?: string;
  /**
   * The holder listens on a Unix socket beside the lock while it holds it (lock-beacon.ts: its path follows from the
   * lock's path and token), where it could open one.
   */
  beacon?: boolean;
}

/** How a holder stands, seen from here. */
export type HolderState =
  /** It runs (or cannot be shown not to). */
  | 'alive'
  /** Written under another host name: its processes cannot be seen from here, so it counts as running. */
  | 'foreign'
  /**
   * Written on this host, in another PID namespace (a container sharing the directory and the host name): its pid
   * names nothing here, and only its beacon can tell whether it runs.
   */
  | 'unseen'
  /** It ran in this very thread, in a module instance the in-process guard decides about. */
  | 'this-thread'
  /** Its process or thread is gone. */
  | 'gone';

/** This process and thread, as a lock records them. */
export function currentHolder(): LockHolder {
  const holder: LockHolder = {
    pid: process.pid,
    threadId,
    hostname: osHostname(),
    startedAt: new Date().toISOString(),
  };
  const bootId = readText('/proc/sys/kernel/random/boot_id');
  const processStart = startOf('/proc/self/stat');
  const tid = ownTid();
  const threadStart = startOf('/proc/thread-self/stat');
  const pidNamespace = readLink('/proc/self/ns/pid');
  if (bootId !== undefined) holder.bootId = bootId;
  if (pidNamespace !== undefined) holder.pidNamespace = pidNamespace;
  if (processStart !== undefined) holder.processStart = processStart;
  if (tid !== undefined && threadStart !== undefined) Object.assign(holder, { tid, threadStart });
  return holder;
}

/**
 * Whether `holder` still runs. Errs towards `alive`: a lock is judged gone only on proof (no such process, a boot of
 * this host before its last, a pid or thread id that now names a process or thread started at another time). Without `/proc` (macOS) a
 * worker thread of a live process counts as alive until its process exits.
 */
export function holderState(holder: LockHolder, self: LockHolder = currentHolder()): HolderState {
  if (holder.hostname !== self.hostname) return 'foreign';
  switch (unseenFrom(holder, self)) {
    case 'before-boot':
      return 'gone';
    case 'machine':
      return 'foreign';
    case 'pid-namespace':
      return 'unseen';
  }
  if (holder.pid === self.pid && sameStart(holder.processStart, self.processStart)) {
    if (holder.threadId === self.threadId) return 'this-thread';
    return threadRuns(holder) ? 'alive' : 'gone';
  }
  if (!processRuns(holder.pid)) return 'gone';
  const start = startOf(`/proc/${holder.pid}/stat`);
  // Hidden from this user (`hidepid`): the process runs, and nothing more can be learned.
  if (start === undefined) return 'alive';
  if (holder.processStart !== undefined && start !== holder.processStart) return 'gone';
  return threadRuns(holder) ? 'alive' : 'gone';
}

/**
 * Where `holder`, of this host name, runs when its pid means nothing here (Linux): in another PID namespace of this
 * host, or on another machine; undefined when its pid can be checked (or nothing is known).
 */
export function holderElsewhere(holder: LockHolder): 'pid-namespace' | 'machine' | undefined {
  const self = currentHolder();
  if (holder.hostname !== self.hostname) return undefined;
  const where = unseenFrom(holder, self);
  return where === 'before-boot' ? undefined : where;
}

/**
 * Why a holder of this host name cannot be judged by its pid: another boot ID (this host's before its last boot, or,
 * when it took the lock since this host booted, another machine of the same host name sharing the directory over a
 * network file system), or another PID namespace of this host; undefined when its pid can be checked.
 */
function unseenFrom(holder: LockHolder, self: LockHolder): 'before-boot' | 'machine' | 'pid-namespace' | undefined {
  if (holder.bootId !== undefined && self.bootId !== undefined && holder.bootId !== self.bootId) {
    return tookLockSinceBoot(holder) ? 'machine' : 'before-boot';
  }
  const { pidNamespace } = holder;
  if (pidNamespace !== undefined && self.pidNamespace !== undefined && pidNamespace !== self.pidNamespace) {
    return 'pid-namespace';
  }
  return undefined;
}

/** A holder as a reader sees it: `pid 123 (thread 2) on host api-3, since 2026-…`. */
export function describeHolder(holder: LockHolder): string {
  const thread = holder.threadId === 0 ? '' : ` (worker thread ${holder.threadId})`;
  return `process ${holder.pid}${thread} on host ${holder.hostname}, since ${holder.startedAt}`;
}

/** How far apart two machines' clocks may be when a lock's start is compared with this host's boot. */
const BOOT_COMPARISON_SLACK_MS = 60_000;

/** Whether `holder` took its lock after this host booted (`btime` in `/proc/stat`), by more than clock slack. */
function tookLockSinceBoot(holder: LockHolder): boolean {
  const btime = /^btime (\d+)$/m.exec(readText('/proc/stat') ?? '')?.[1];
  const startedAt = Date.parse(holder.startedAt);
  if (btime === undefined || Number.isNaN(startedAt)) return false;
  return startedAt > Number(btime) * 1000 + BOOT_COMPARISON_SLACK_MS;
}

function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, under another user.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Whether the holder's OS thread still runs, when it was recorded and `/proc` shows it. */
function threadRuns(holder: LockHolder): boolean {
  if (holder.tid === undefined || holder.threadStart === undefined) return true;
  const path = `/proc/${holder.pid}/task/${holder.tid}/stat`;
  const start = startOf(path);
  if (start === undefined) return readText(`/proc/${holder.pid}/stat`) === undefined;
  return start === holder.threadStart;
}

function sameStart(a: string | undefined, b: string | undefined): boolean {
  return a === undefined || b === undefined || a === b;
}

/** Field 22 of a `/proc/…/stat` file, the start time; the name before it may hold spaces and parentheses. */
function startOf(path: string): string | undefined {
  const text = readText(path);
  if (text === undefined) return undefined;
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return fields[19];
}

function ownTid(): number | undefined {
  const tid = Number(readLink('/proc/thread-self')?.split('/').pop());
  return Number.isSafeInteger(tid) ? tid : undefined;
}

function readLink(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}
