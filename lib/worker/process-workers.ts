import type { LoggerService } from '@nestjs/common';
import { systemClock } from '../core/clock.js';
import { WorkerIdInUseError } from '../core/errors.js';

/**
 * What this process knows about the worker IDs its generators use, whatever module instance runs them. This is the
 * one piece of process-wide state in the library, on purpose: a duplicate between two generators of one process, or
 * a process repeating IDs under a worker ID it held before, can only be seen from the process. Entries are keyed by
 * worker ID within their ID space (a static datacenter and worker pair, or a lease namespace's record), so modules
 * with different namespaces never meet here. It hangs off `globalThis` under a registered symbol, so two copies of
 * the library loaded in one process still share it.
 */
interface ProcessWorkers {
  /** Static and host-name worker IDs in use, by `<datacenter>:<worker>`. */
  staticInUse: Set<string>;
  /**
   * The highest timestamp (Unix ms) a stopped generator of this process issued under a static worker ID, by the
   * clock it read: a mark bounds only generators that read the same clock (the system clock in an app; a test's own
   * fake clock stands apart, so a test may start an app in the past after another ran on the real clock).
   */
  staticMarks?: WeakMap<object, Map<string, number>>;
  /**
   * The key the system clock's marks are kept under: each copy of the library has a system clock object of its own,
   * and all of them read the one clock of the process, so an app of one copy continues above the IDs of another's.
   */
  systemClockKey?: object;
  /** The highest timestamp (the layout's ms) this process issued under a leased ID it no longer holds, by record key. */
  marks: Map<string, number>;
  /** Leased IDs held now, by record key: their last issued timestamp, read when asked. */
  held: Map<string, () => number>;
  /** Lease sources running, by namespace key set. */
  leasesByNamespace: Map<string, number>;
  /**
   * Host locks this isolate holds (worker IDs, ceiling files), by token: their release functions, which an exit of
   * the process or worker thread runs too, so that a lock does not outlive its holder where it could be removed.
   */
  hostLocks?: Map<string, () => void>;
}

const KEY = Symbol.for('nestjs-snowflake.process-workers');

function workers(): ProcessWorkers {
  const global = globalThis as { [KEY]?: ProcessWorkers };
  global[KEY] ??= { staticInUse: new Set(), marks: new Map(), held: new Map(), leasesByNamespace: new Map() };
  return global[KEY];
}

/**
 * Reserves a static worker ID for one generator of this process.
 *
 * @returns the release function, for shutdown
 * @throws WorkerIdInUseError when another generator of this process uses it
 */
export function reserveStaticWorker(datacenterId: number, workerId: number): () => void {
  const key = `${datacenterId}:${workerId}`;
  const { staticInUse } = workers();
  if (staticInUse.has(key)) throw new WorkerIdInUseError(workerId, datacenterId);
  staticInUse.add(key);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    staticInUse.delete(key);
  };
}

/** The host locks this isolate holds, by token; the first call sets up their release at exit. */
export function heldHostLocks(): Map<string, () => void> {
  const all = workers();
  if (all.hostLocks === undefined) {
    const locks = (all.hostLocks = new Map<string, () => void>());
    process.once('exit', () => {
      for (const release of [...locks.values()]) release();
    });
  }
  return all.hostLocks;
}

/**
 * The highest timestamp (Unix ms) this process issued under the static worker ID before, on `clock`, by a generator
 * since stopped; -1 when none. A generator started again on it (an app closed and created again in the same process)
 * continues above it instead of repeating that generator's IDs.
 */
export function staticHighWaterMs(clock: object, datacenterId: number, workerId: number): number {
  const all = workers();
  return all.staticMarks?.get(markKey(all, clock))?.get(`${datacenterId}:${workerId}`) ?? -1;
}

/** Where the marks of `clock` are kept: the system clock of every copy of the library under one key. */
function markKey(all: ProcessWorkers, clock: object): object {
  return clock === systemClock ? (all.systemClockKey ??= {}) : clock;
}

/**
 * Records that a generator of this process issued up to `lastMs`, on `clock`, under the static worker ID (never
 * lowers it).
 */
export function noteStaticHighWaterMs(clock: object, datacenterId: number, workerId: number, lastMs: number): void {
  const all = workers();
  const byClock = (all.staticMarks ??= new WeakMap());
  const key = markKey(all, clock);
  let marks = byClock.get(key);
  if (marks === undefined) byClock.set(key, (marks = new Map<string, number>()));
  const worker = `${datacenterId}:${workerId}`;
  if (lastMs > (marks.get(worker) ?? -1)) marks.set(worker, lastMs);
}

/**
 * Counts a lease of a namespace in this process, saying (log) when there are several: each holds a worker ID of its
 * own. Returns the function that uncounts it.
 */
export function countLease(namespaceKey: string, namespace: string, logger: LoggerService): () => void {
  const { leasesByNamespace } = workers();
  const running = (leasesByNamespace.get(namespaceKey) ?? 0) + 1;
  leasesByNamespace.set(namespaceKey, running);
  if (running > 1) {
    logger.warn(
      `This process now runs ${running} Redis leases in namespace "${namespace}", one per SnowflakeModule ` +
        'registration, and holds as many worker IDs. Unless these are named registrations meant to share the ' +
        'namespace, import SnowflakeModule.forRoot() once, with `isGlobal: true`, and inject IdService wherever it ' +
        'is needed.',
    );
  }
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const left = (leasesByNamespace.get(namespaceKey) ?? 1) - 1;
    if (left <= 0) leasesByNamespace.delete(namespaceKey);
    else leasesByNamespace.set(namespaceKey, left);
  };
}

/**
 * The highest timestamp (ms) this process ever issued under the leased ID `recordKey`, including one it holds now
 * in another module; -1 when none. A re-claimed ID starts above it, whatever Redis says.
 */
export function ownHighWaterMs(recordKey: string): number {
  const { marks, held } = workers();
  const live = held.get(recordKey);
  return Math.max(marks.get(recordKey) ?? -1, live === undefined ? -1 : live());
}

/** Records that this process issued up to `lastMs` under `recordKey` (never lowers the mark). */
export function noteOwnHighWaterMs(recordKey: string, lastMs: number): void {
  const { marks } = workers();
  if (lastMs > (marks.get(recordKey) ?? -1)) marks.set(recordKey, lastMs);
}

/**
 * Tracks a leased ID while it is held; the returned function ends the tracking, keeping `lastMs` as its mark.
 */
export function trackHeld(recordKey: string, lastMs: () => number): (finalMs: number) => void {
  const { held } = workers();
  held.set(recordKey, lastMs);
  return (finalMs) => {
    if (held.get(recordKey) === lastMs) held.delete(recordKey);
    noteOwnHighWaterMs(recordKey, Math.max(finalMs, safe(lastMs)));
  };
}

function safe(read: () => number): number {
  try {
    return read();
  } catch {
    return -1;
  }
}
