import { bothClocks, type Clocks } from '../core/clock.js';
import { WorkerUnavailableError } from '../core/errors.js';
import type { Layout } from '../core/layout.js';
import type { IssuePermit } from '../core/permit.js';
import { msAtTicks, ticksAtMs } from '../core/time-units.js';
import { CeilingFileError } from './ceiling-file.errors.js';
import { lockCeilingFile } from './ceiling-file.lock.js';
import {
  commitCeiling,
  discardCeiling,
  layoutLabel,
  prepareCeiling,
  readCeiling,
  writeCeiling,
  type CeilingRecord,
} from './ceiling-file.store.js';
import { lockWorkerId, type WorkerLockSettings } from './worker-lock.js';
import type { WorkerAssignment, WorkerIdSource, WorkerSourceContext } from './worker-source.js';

/** The option `ceilingFile` after validation. @internal */
export interface CeilingFileSettings {
  path: string;
  /** How far ahead of the clock each write puts the ceiling. */
  stepMs: number;
  /** The longest the start waits for the clock to pass the recorded ceiling. */
  maxWaitMs: number;
  /** Whether a missing file is a first start (`create`) or fails the start (`refuse`). */
  ifMissing: 'refuse' | 'create';
}

/** After a failed write, how long before the next attempt. */
const RETRY_MS = 1000;

/**
 * A fixed worker ID (from options or a StatefulSet host name) that survives restarts with the clock set back: the
 * worker's ceiling, the highest timestamp it may issue, is kept in a local file and written ahead of use, as the
 * Redis lease keeps its ceiling in Redis.
 *
 * - At start it takes the host lock on the worker ID (option `workerLock`) and the file's own lock (`<path>.lock`),
 *   held until stop; then it reads the file (none: a first start only with `ifMissing: 'create'`; another worker's
 *   or layout's, or unreadable: a {@link CeilingFileError}), waits (bounded by `maxWaitMs`) for the clock to pass
 *   the recorded ceiling, and issues only above it.
 * - Before any ID it writes a ceiling `stepMs` ahead of the clock and fsyncs it. An unref'd timer writes the next
 *   one half a step before the ceiling is reached, off the event loop (the thread pool writes and fsyncs, the rename
 *   follows in order), so neither `next()` nor the app's requests wait for the disk; only
 *   when a synchronous loop of `next()` holds the event loop past the timer does the call that reaches the ceiling
 *   write it itself.
 * - At a graceful stop it writes the exact last issued timestamp, so that the next start waits for nothing.
 *
 * The cost: one small write and two fsyncs (the file, its directory) every `stepMs / 2`, and after a crash a restart
 * that waits until the clock passes the last ceiling (up to `stepMs`).
 */
export class CeilingFileWorkerSource implements WorkerIdSource {
  private context: WorkerSourceContext | undefined;
  private clocks: Clocks = bothClocks();
  private floorTicks = -1;
  /** The highest timestamp written and synced: what the permit allows. */
  private ceilingTicks = -1;
  /** The ceiling as wall ms: the permit's one comparison. */
  private ceilingMs = -Infinity;
  /** Wall ms at which the next write is due: half a step before the ceiling. */
  private raiseAtMs = Infinity;
  /** After a failed write: no new attempt before this wall ms. */
  private retryAtMs = -Infinity;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The timer's write, while it is under way. */
  private background: Promise<void> | undefined;
  /** Counts synchronous writes: a background write that sees it change drops its file instead of renaming it. */
  private generation = 0;
  private readonly counters = { background: 0, blocking: 0 };
  private stopped = false;
  /** Release the worker-ID lock and the file's lock, in that order of taking. */
  private readonly unlocks: (() => void)[] = [];
  private readonly permit: IssuePermit = {
    ceiling: (nowMs) => {
      // Reached only when the timer could not run (the event loop was held): write here rather than refuse.
      if (nowMs >= this.ceilingMs) this.raise();
      return this.ceilingTicks;
    },
    ceilingReached: () => this.raise(),
  };

  constructor(
    readonly kind: 'static' | 'hostname',
    private readonly workerId: number,
    private readonly datacenterId: number,
    private readonly settings: CeilingFileSettings,
    /** The host lock's directory; `null` (no worker-ID lock) where the caller keeps exclusivity itself. */
    private readonly lock: WorkerLockSettings = null,
  ) {}

  /** Raises since start: by the timer, off the event loop, and on the calling thread (the event loop was held). */
  get raises(): { background: number; blocking: number } {
    return { ...this.counters };
  }

  async start(context: WorkerSourceContext): Promise<WorkerAssignment> {
    this.context = context;
    this.clocks = bothClocks(context.clock);
    try {
      return await this.startLocked(context);
    } catch (error) {
      this.unlock();
      throw error;
    }
  }

  private async startLocked(context: WorkerSourceContext): Promise<WorkerAssignment> {
    const { layout, logger } = context;
    const { path } = this.settings;
    this.unlocks.push(await lockWorkerId(this.lock, this.datacenterId, this.workerId));
    this.unlocks.push(await lockCeilingFile(path, this.workerId, this.datacenterId));
    const recorded = await readCeiling(path, this.owner(layout));
    if (recorded === null) {
      if (this.settings.ifMissing !== 'create') throw this.missing();
      logger.log(`Ceiling file ${path} does not exist yet: worker ID ${this.workerId} starts a new one`);
    } else {
      await this.waitToPass(recorded, layout);
      this.floorTicks = recorded;
    }
    // Stopped while the locks were taken or the clock was awaited (the app shut down): the file, no longer locked,
    // is not written, and the binding, stopped too, ignores the assignment.
    if (this.stopped) {
      this.unlock();
      return { workerId: this.workerId, datacenterId: this.datacenterId, floor: this.floorTicks, permit: this.permit };
    }
    this.writeAhead();
    logger.log(
      `Using ${this.kind} worker ID ${this.workerId} (datacenter ${this.datacenterId}), above ` +
        `${recorded === null ? 'nothing issued before' : new Date(msAtTicks(layout, recorded)).toISOString()}, ` +
        `its ceiling kept in ${path}`,
    );
    return { workerId: this.workerId, datacenterId: this.datacenterId, floor: this.floorTicks, permit: this.permit };
  }

  stop(lastTimestamp: number): Promise<void> {
    if (this.stopped || this.context === undefined) return Promise.resolve();
    this.stopped = true;
    clearTimeout(this.timer);
    try {
      this.writeExact(lastTimestamp);
    } finally {
      // The file is free for the next holder only once its exact ceiling is on disk.
      this.unlock();
    }
    return Promise.resolve();
  }

  /** At stop, the exact last issued timestamp, so that the next start waits for nothing. */
  private writeExact(lastTimestamp: number): void {
    const { layout, logger } = this.context!;
    const exact = Math.max(lastTimestamp, this.floorTicks);
    // Nothing issued and nothing before: the ceiling written at start (if any) stays, which is only higher than needed.
    if (exact < 0 || this.ceilingTicks < 0) return;
    try {
      writeCeiling(this.settings.path, { ...this.owner(layout), ceilingTicks: exact }, layout);
    } catch (error) {
      logger.warn(
        `${(error as Error).message} The ceiling written before stays: the next start may wait up to ` +
          `${this.settings.stepMs} ms for the clock to pass it.`,
      );
    }
  }

  private unlock(): void {
    for (const release of this.unlocks.splice(0).reverse()) release();
  }

  private missing(): CeilingFileError {
    const { path } = this.settings;
    return new CeilingFileError(
      path,
      'missing',
      `does not exist. A missing ceiling file is read as worker ID ${this.workerId}'s first start only with ` +
        "`ceilingFile.ifMissing: 'create'`: a volume that failed to mount, or a mistyped path, looks the same, and " +
        'the worker would issue with no floor under the IDs it issued before. Check that the path lies on the ' +
        "persistent volume; on the worker's very first start, set `ceilingFile: { path, ifMissing: 'create' }` " +
        '(from the first deploy only, or where that directory is known to persist).',
    );
  }

  requestSwitch(): boolean {
    return false;
  }

  whenReady(): Promise<void> {
    if (this.stopped) return Promise.reject(new WorkerUnavailableError('stopped'));
    // Asked after a refusal at the ceiling: write now if the timer has not (a write only when one is due).
    if (this.clocks.now() >= this.raiseAtMs) this.raise();
    // After a failed write, wait for the next attempt rather than spin.
    const waitMs = Math.max(0, this.retryAtMs - this.clocks.now());
    return waitMs === 0 ? Promise.resolve() : sleep(waitMs);
  }

  /** Writes the next ceiling now, unless stopped or a failed write waits for its retry time. */
  private raise(): void {
    if (this.stopped || this.clocks.now() < this.retryAtMs) return;
    try {
      this.writeAhead();
      this.counters.blocking++;
    } catch (error) {
      this.failed(error as Error);
    }
  }

  /**
   * The timer's raise: the same write, off the event loop (the thread pool writes and fsyncs a temporary file; the
   * rename happens back on the event loop, in order). A synchronous write that lands first makes it drop its file.
   */
  private raiseInBackground(): void {
    if (this.stopped || this.background !== undefined || this.context === undefined) return;
    if (this.clocks.now() < this.retryAtMs) return this.schedule(this.retryAtMs - this.clocks.now());
    const { layout } = this.context;
    const { path } = this.settings;
    const target = this.nextTarget();
    const generation = this.generation;
    this.background = prepareCeiling(path, { ...this.owner(layout), ceilingTicks: target }, layout)
      .then(async (temporary) => {
        // Superseded by a synchronous write of a higher ceiling, or by the stop's exact one: never rename over it.
        if (this.stopped || generation !== this.generation) return discardCeiling(temporary);
        await commitCeiling(temporary, path);
        if (this.stopped) return;
        this.counters.background++;
        this.accept(target);
      })
      .catch((error: Error) => this.failed(error))
      .finally(() => {
        this.background = undefined;
      });
  }

  private failed(error: Error): void {
    this.retryAtMs = this.clocks.now() + RETRY_MS;
    this.schedule(RETRY_MS);
    this.context!.logger.error(
      `${error.message} IDs above ${new Date(this.ceilingMs).toISOString()} wait until a write ` +
        `succeeds; retrying in ${RETRY_MS} ms`,
    );
  }

  /**
   * Writes a ceiling one step above the clock (or above the last issued timestamp, if the clock stands behind it),
   * and only once it is on disk lets the permit hand it out; then sets the timer for the next one.
   */
  private writeAhead(): void {
    const { layout } = this.context!;
    const target = this.nextTarget();
    // A background write under way must not rename its older ceiling over this one.
    this.generation++;
    writeCeiling(this.settings.path, { ...this.owner(layout), ceilingTicks: target }, layout);
    this.accept(target);
  }

  /**
   * One step above the clock, or above the last issued timestamp if the clock stands behind it; never below the
   * ceiling the permit already allows. The timer runs on the monotonic clock: after the wall clock stepped back, a
   * step above it can lie below that ceiling, and the file would then miss IDs issued up to it.
   */
  private nextTarget(): number {
    const { layout } = this.context!;
    const lastTicks = Math.max(this.context!.lastTimestamp(), this.floorTicks);
    const ahead = Math.max(ticksAtMs(layout, this.clocks.now()), lastTicks) + this.stepTicks(layout);
    return Math.max(ahead, this.ceilingTicks);
  }

  /** Lets the permit hand out a ceiling that is on disk, and sets the timer for the next raise. */
  private accept(target: number): void {
    const { layout } = this.context!;
    this.ceilingTicks = Math.max(this.ceilingTicks, target);
    // The last millisecond of the ceiling's tick: the permit writes ahead only once the clock leaves it.
    this.ceilingMs = msAtTicks(layout, this.ceilingTicks + 1);
    this.raiseAtMs = msAtTicks(layout, this.ceilingTicks - Math.floor(this.stepTicks(layout) / 2));
    this.schedule(this.raiseAtMs - this.clocks.now());
  }

  private stepTicks(layout: Layout): number {
    return Math.max(2, Math.ceil(this.settings.stepMs / layout.timeUnitMs));
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    this.timer = setTimeout(() => this.raiseInBackground(), Math.max(0, delayMs));
    // The app's own handles keep the process alive; a pending raise must not.
    this.timer.unref();
  }

  /**
   * Waits for the clock to pass the recorded ceiling, bounded by `maxWaitMs` on the monotonic clock: the clock was
   * set back, or the process restarts within a step of a crash.
   */
  private async waitToPass(recorded: number, layout: Layout): Promise<void> {
    const firstAllowedMs = msAtTicks(layout, recorded + 1);
    const aheadMs = firstAllowedMs - this.clocks.now();
    if (aheadMs <= 0) return;
    const { path, maxWaitMs } = this.settings;
    const behind = () =>
      new CeilingFileError(
        path,
        'clock-behind',
        `worker ID ${this.workerId} may have issued IDs up to ${new Date(msAtTicks(layout, recorded)).toISOString()}, ` +
          `${Math.ceil(firstAllowedMs - this.clocks.now())} ms ahead of this clock, beyond ` +
          `ceilingFile.maxWaitMs (${maxWaitMs} ms). Correct the clock (NTP) and start again; or, if the clock is right ` +
          'and the IDs above it are certain never to have been issued, raise ceilingFile.maxWaitMs to wait for it.',
      );
    if (aheadMs > maxWaitMs) throw behind();
    this.context!.logger.log(
      `Waiting ${Math.ceil(aheadMs)} ms for the clock to pass worker ID ${this.workerId}'s ceiling in ${path}`,
    );
    const deadline = this.clocks.monotonicNow() + maxWaitMs;
    while (this.clocks.now() < firstAllowedMs) {
      if (this.clocks.monotonicNow() >= deadline) throw behind();
      await sleep(Math.min(firstAllowedMs - this.clocks.now(), deadline - this.clocks.monotonicNow()) + 1);
    }
  }

  private owner(layout: Layout): Omit<CeilingRecord, 'ceilingTicks'> {
    return { layout: layoutLabel(layout), workerId: this.workerId, datacenterId: this.datacenterId };
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
