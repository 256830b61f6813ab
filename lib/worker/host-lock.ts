import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { beaconMayAnswer, openBeacon, removeBeacon, sweepBeacons } from './lock-beacon.js';
import { currentHolder, holderState, type HolderState, type LockHolder } from './lock-holder.js';
import { heldHostLocks } from './process-workers.js';

/**
 * A lock file that one process (one thread) of a host holds at a time, and that dies with its holder: it is never
 * trusted by age, only by whether the process and thread named in it still run (see {@link holderState}). Node has
 * no `flock`, and an `O_EXCL` file alone outlives a crash; this is both, with a takeover that two processes racing
 * for the same stale lock cannot both win.
 *
 * - **Take**: the record is written and fsynced to a file of its own, then hard-linked to the lock's path: the link
 *   fails if the path exists, and a reader never sees a half-written lock.
 * - **Take over**: a lock whose holder is gone is replaced by renaming a fresh record over it, but only by the one
 *   process that first created `<path>.<token>.takeover` (`O_EXCL`) for the stale token, and only after it read the
 *   path again and found that token still there. A takeover file whose own creator died is taken over the same way,
 *   under the creator's token, so a crash in the middle never wedges the lock.
 * - **Release**: at stop, or when the process (or the worker thread, by `process.exit()`) exits, the file is removed
 *   if it still holds this lock's token.
 * - **Holders in another PID namespace** (containers sharing the directory and the host name) cannot be checked by
 *   pid: each holder listens on a Unix socket beside the lock while it holds it (lock-beacon.ts), and such a holder
 *   is taken over only once its socket refuses a connection. One without a socket (none could be bound) counts
 *   as running, as a holder of another host name does. A worker thread ended by `worker.terminate()` runs no exit handler: where
 *   `/proc` shows threads (Linux) the next claimant sees the thread gone; elsewhere the lock lasts until its process
 *   exits.
 */

/** What a lock file holds. */
export interface HostLockRecord {
  format: typeof FORMAT;
  version: 1;
  /** Unique per take: the one proof that a file is this lock's. */
  token: string;
  holder: LockHolder;
  /** What is locked, for a reader of the file: the worker ID, or the ceiling file. */
  subject: Record<string, unknown>;
}

/** The outcome of a take. */
export type HostLockOutcome =
  | { kind: 'taken'; release: () => void }
  /** Another process or thread holds it (or, `here`, another module instance of this thread). */
  | { kind: 'held'; holder: LockHolder; here: boolean }
  /** The path holds something that is not a lock of this library: never overwritten. */
  | { kind: 'unreadable'; reason: string };

const FORMAT = 'nestjs-snowflake/host-lock';
/** How long a take waits for a takeover under way in another live process to end, in all. */
const BUSY_WAIT_MS = 2000;
const BUSY_STEP_MS = 10;

/** Takes the lock at `path` for this process and thread, taking over a stale one. */
export async function takeHostLock(path: string, subject: Record<string, unknown>): Promise<HostLockOutcome> {
  const token = randomUUID();
  const holder = currentHolder();
  // Only where a holder can be in another PID namespace of this host (Linux): there its pid proves nothing.
  const beacon = holder.pidNamespace === undefined ? undefined : await openBeacon(path, token);
  if (beacon !== undefined) holder.beacon = true;
  const record: HostLockRecord = { format: FORMAT, version: 1, token, holder, subject };
  let outcome: HostLockOutcome;
  try {
    outcome = await takeWithin(path, record);
  } catch (error) {
    beacon?.close();
    throw error;
  }
  if (beacon === undefined) return outcome;
  if (outcome.kind !== 'taken') {
    beacon.close();
    return outcome;
  }
  await sweepBeacons(path, token);
  // The socket goes with the lock, at stop as at exit (the exit handler calls what the held map holds).
  const release = () => {
    outcome.release();
    beacon.close();
  };
  heldHostLocks().set(token, release);
  return { kind: 'taken', release };
}

async function takeWithin(path: string, record: HostLockRecord): Promise<HostLockOutcome> {
  const deadline = Date.now() + BUSY_WAIT_MS;
  for (;;) {
    const step = await tryTake(path, record);
    if (step.kind !== 'busy') return step;
    if (Date.now() >= deadline) {
      return step.holder === undefined
        ? { kind: 'unreadable', reason: step.reason }
        : { kind: 'held', holder: step.holder, here: false };
    }
    await sleep(BUSY_STEP_MS);
  }
}

/** How the holder of `record` (a lock at `path`) stands, one in another PID namespace asked through its beacon. */
async function stateOf(path: string, record: HostLockRecord, self: LockHolder): Promise<HolderState> {
  const state = holderState(record.holder, self);
  if (state !== 'unseen' || record.holder.beacon !== true) return state;
  return (await beaconMayAnswer(path, record.token)) ? 'unseen' : 'gone';
}

type Step = HostLockOutcome | { kind: 'busy'; reason: string; holder?: LockHolder };

/** One attempt: take the free path, refuse a live holder, or take over a gone one. */
async function tryTake(path: string, record: HostLockRecord): Promise<Step> {
  if (create(path, record)) return taken(path, record.token);
  const current = readRecord(path);
  if (current === null) return { kind: 'busy', reason: 'released meanwhile' };
  if (typeof current === 'string') return { kind: 'busy', reason: current };
  switch (await stateOf(path, current, record.holder)) {
    case 'alive':
    case 'foreign':
    case 'unseen':
      return { kind: 'held', holder: current.holder, here: false };
    case 'this-thread':
      // This thread's own module instances are the in-process guard's to judge; one the guard does not know (an
      // earlier process that had this pid and thread, a Jest test file's context) left a stale lock.
      if (heldHostLocks().has(current.token)) return { kind: 'held', holder: current.holder, here: true };
      return takeOver(path, record, current.token);
    case 'gone': {
      const step = await takeOver(path, record, current.token);
      if (step.kind === 'taken') removeBeacon(path, current.token);
      return step;
    }
  }
}

/** Replaces the lock holding `staleToken`, if this process wins the right to; the chain of takeover files ensures one does. */
async function takeOver(path: string, record: HostLockRecord, staleToken: string): Promise<Step> {
  let claimToken = staleToken;
  const passed: string[] = [];
  for (;;) {
    const claim = `${path}.${claimToken}.takeover`;
    if (create(claim, record)) {
      const current = readRecord(path);
      if (typeof current !== 'object' || current?.token !== staleToken) {
        // Replaced or released meanwhile: start again from what the path holds now.
        removeIfOwn(claim, record.token);
        return { kind: 'busy', reason: 'taken over meanwhile' };
      }
      try {
        renameSync(write(`${path}.${record.token}.tmp`, record), path);
      } finally {
        removeIfOwn(claim, record.token);
      }
      for (const stale of passed) removeQuietly(stale);
      return taken(path, record.token);
    }
    const claimant = readRecord(claim);
    if (claimant === null || typeof claimant === 'string') {
      return { kind: 'busy', reason: 'a takeover file is being written or was just removed' };
    }
    const state = await stateOf(path, claimant, record.holder);
    if (state !== 'gone' && !(state === 'this-thread' && !heldHostLocks().has(claimant.token))) {
      return { kind: 'busy', reason: 'another process is taking it over', holder: claimant.holder };
    }
    passed.push(claim);
    claimToken = claimant.token;
  }
}

function taken(path: string, token: string): HostLockOutcome {
  const held = heldHostLocks();
  const release = () => {
    if (!held.delete(token)) return;
    removeIfOwn(path, token);
  };
  held.set(token, release);
  return { kind: 'taken', release };
}

/** Creates `path` holding `record`, complete at once; false when it exists. */
function create(path: string, record: HostLockRecord): boolean {
  const temporary = write(`${path}.${record.token}.tmp`, record);
  try {
    linkSync(temporary, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    return createExclusive(path, record);
  } finally {
    removeQuietly(temporary);
  }
}

/** Where hard links are not supported: `O_EXCL`, and a reader that finds the file empty waits and reads again. */
function createExclusive(path: string, record: HostLockRecord): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(fd, `${JSON.stringify(record)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return true;
}

function write(path: string, record: HostLockRecord): string {
  const fd = openSync(path, 'w', 0o644);
  try {
    writeSync(fd, `${JSON.stringify(record)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return path;
}

/** The record at `path`: null when there is none, a reason it is not a lock record, or the record. */
function readRecord(path: string): HostLockRecord | null | string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return `it cannot be read (${(error as Error).message})`;
  }
  try {
    const value = JSON.parse(text) as Partial<HostLockRecord>;
    const holder = value?.holder;
    if (value?.format === FORMAT && typeof value.token === 'string' && typeof holder?.pid === 'number') {
      return value as HostLockRecord;
    }
  } catch {
    // Not JSON: reported below.
  }
  return text === '' ? 'it is empty' : 'it is not a lock file of nestjs-snowflake';
}

function removeIfOwn(path: string, token: string): void {
  const current = readRecord(path);
  if (typeof current === 'object' && current?.token === token) removeQuietly(path);
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
