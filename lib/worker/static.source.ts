import type { Clock } from '../core/clock.js';
import { SnowflakeConfigError } from '../core/errors.js';
import { msAtTicks, ticksAtMs, type TimeFrame } from '../core/time-units.js';
import { abortableSleep } from './issue-wait.js';
import { lockWorkerId, type WorkerLockSettings } from './worker-lock.js';
import type { WorkerAssignment, WorkerIdSource, WorkerSourceContext } from './worker-source.js';

/**
 * A fixed worker ID: from options, or from the ordinal of a StatefulSet pod's host name. From start to stop it
 * holds the host-wide lock on the worker ID (option `workerLock`), so that a second process or worker thread of
 * the host on the same ID fails to start instead of issuing the same IDs.
 */
export class StaticWorkerSource implements WorkerIdSource {
  private unlock: (() => void) | undefined;
  private stopped = false;

  constructor(
    readonly kind: 'static' | 'hostname',
    private readonly workerId: number,
    private readonly datacenterId: number,
    /** The host lock's directory; `null` (no lock) where the caller keeps exclusivity itself. */
    private readonly lock: WorkerLockSettings = null,
  ) {}

  /** The one assignment a fixed worker ID has: known before start, so that a generator can use it at once. */
  get assignment(): WorkerAssignment {
    return { workerId: this.workerId, datacenterId: this.datacenterId, floor: -1 };
  }

  async start(context: WorkerSourceContext): Promise<WorkerAssignment> {
    const unlock = await lockWorkerId(this.lock, this.datacenterId, this.workerId);
    // Stopped while the lock was being taken: it is not kept.
    if (this.stopped) unlock();
    else this.unlock = unlock;
    const floor = await startAfterHandover(context.layout, context.clock);
    context.logger.log(`Using ${this.kind} worker ID ${this.workerId} (datacenter ${this.datacenterId})`);
    return { ...this.assignment, floor };
  }

  stop(): Promise<void> {
    this.stopped = true;
    this.unlock?.();
    this.unlock = undefined;
    return Promise.resolve();
  }

  requestSwitch(): boolean {
    return false;
  }

  whenReady(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * The floor of a fixed worker ID: the time unit it was taken in (through the host lock, or without it), waited out.
 * The holder before (a process restarted on the host, a worker thread the lock passed to) may have issued in that very
 * unit, and nothing records how far its sequence went, so this holder starts in the next one: a wait of at most one
 * time unit at boot (1 ms by default, 10 ms on `js-safe`). A clock set back across the handover is the ceiling file's to cover.
 * A clock that stands still (a test's fixed clock, whose time the test moves itself) reads no machine's time that
 * another holder shared: one that has not moved at all after one time unit and {@link STANDING_CLOCK_MS} of real
 * time gets no floor. A clock that moved, if slowly or back, keeps it.
 */
async function startAfterHandover(frame: TimeFrame, clock: Clock): Promise<number> {
  const takenAtMs = clock.now();
  const takenIn = ticksAtMs(frame, takenAtMs);
  const giveUpAt = performance.now() + frame.timeUnitMs + STANDING_CLOCK_MS;
  let moved = false;
  for (;;) {
    const nowMs = clock.now();
    moved ||= nowMs !== takenAtMs;
    if (ticksAtMs(frame, nowMs) > takenIn) return takenIn;
    if (performance.now() > giveUpAt) return moved ? takenIn : -1;
    // Node's timers run on whole milliseconds of the loop's time, so a 1 ms timer may fire before the clock moves.
    // Never past the give-up time: a clock stepped back meanwhile would otherwise hold the start for the whole step.
    const untilNextUnitMs = Math.ceil(msAtTicks(frame, takenIn + 1) - nowMs);
    await abortableSleep(Math.max(1, Math.min(untilNextUnitMs, Math.ceil(giveUpAt - performance.now()))), undefined);
  }
}

/** How long past one time unit a clock may stay unmoved before it counts as one that stands still. */
const STANDING_CLOCK_MS = 50;

/**
 * A StatefulSet pod name, `<name>-<ordinal>`: only digits after the last dash, no leading zeros except in `0` itself.
 * Docker's default host names (`a1b2c3d4e5f6`) and Deployment pods (`api-7d9f8b6c5-x2k45`) carry no stable,
 * unique number, so taking whatever digits they end in would make replicas collide.
 */
const STATEFULSET_POD = /^.+-(0|[1-9]\d*)$/;

/**
 * The worker ID from a Kubernetes StatefulSet pod name `<name>-<ordinal>`: pod `api-3` is worker 3.
 *
 * @throws SnowflakeConfigError when the name is not of that form
 * @publicApi
 */
export function workerIdFromHostname(hostname: string): number {
  const match = STATEFULSET_POD.exec(hostname);
  if (match === null) {
    throw new SnowflakeConfigError(
      'workerId',
      `'hostname' expects a StatefulSet pod name, \`<name>-<ordinal>\` such as "api-3" (digits only after the last dash, ` +
        `no leading zeros), but the host name (option \`hostname\`, by default os.hostname()) is ${JSON.stringify(hostname)}. ` +
        'Other names, such as Docker container IDs or Deployment pods ("api-7d9f8b6c5-x2k45"), carry no stable unique number. ' +
        'Run as a StatefulSet, set `workerId` to a number, or use a Redis lease (`redis`).',
    );
  }
  return Number(match[1]);
}
