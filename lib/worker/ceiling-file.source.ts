import { bothClocks, type Clocks } from '../core/clock.js';
import { WorkerUnavailableError } from '../core/errors.js';
import type { Layout } from '../core/layout.js';
import type { IssuePermit } from '../core/permit.js';
import { msAtTicks } from '../core/time-units.js';
import { CeilingFileError } from './ceiling-file.errors.js';
import { lockCeilingFile } from './ceiling-file.lock.js';
import { layoutLabel, readCeiling, type CeilingRecord } from './ceiling-file.store.js';
import { CeilingWriter } from './ceiling-file.writer.js';
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
 * that waits until the clock passes the last ceiling (up to `stepMs`). The writes are {@link CeilingWriter}'s
 * (`ceiling-file.writer.ts`); this class holds the locks, reads the file at start and writes the exact ceiling at stop.
 */
export class CeilingFileWorkerSource implements WorkerIdSource {
  private context: WorkerSourceContext | undefined;
  private clocks: Clocks = bothClocks();
  private floorTicks = -1;
  /** Writes the ceiling ahead of the clock, and lets the permit hand out only what is on disk. */
  private readonly writer: CeilingWriter;
  private stopped = false;
  /** Release the worker-ID lock and the file's lock, in that order of taking. */
  private readonly unlocks: (() => void)[] = [];
  private readonly permit: IssuePermit = {
    ceiling: (nowMs) => {
      // Reached only when the timer could not run (the event loop was held): write here rather than refuse.
      if (nowMs >= this.writer.ceilingMs) this.writer.raise();
      return this.writer.ceilingTicks;
    },
    ceilingReached: () => this.writer.raise(),
  };

  constructor(
    readonly kind: 'static' | 'hostname',
    private readonly workerId: number,
    private readonly datacenterId: number,
    private readonly settings: CeilingFileSettings,
    /** The host lock's directory; `null` (no worker-ID lock) where the caller keeps exclusivity itself. */
    private readonly lock: WorkerLockSettings = null,
  ) {
    this.writer = new CeilingWriter(settings.path, settings.stepMs);
  }

  /** Raises since start: by the timer, off the event loop, and on the calling thread (the event loop was held). */
  get raises(): { background: number; blocking: number } {
    return this.writer.raises;
  }

  async start(context: WorkerSourceContext): Promise<WorkerAssignment> {
    this.context = context;
    this.clocks = bothClocks(context.clock);
    this.writer.attach({
      layout: context.layout,
      logger: context.logger,
      clocks: this.clocks,
      owner: this.owner(context.layout),
      lastTicks: () => Math.max(context.lastTimestamp(), this.floorTicks),
    });
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
    this.writer.writeAhead();
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
    this.writer.stop();
    try {
      // The exact last issued timestamp, so that the next start waits for nothing.
      this.writer.writeExact(Math.max(lastTimestamp, this.floorTicks));
    } finally {
      // The file is free for the next holder only once its exact ceiling is on disk.
      this.unlock();
    }
    return Promise.resolve();
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
    const waitMs = this.writer.dueWaitMs();
    return waitMs === 0 ? Promise.resolve() : sleep(waitMs);
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
