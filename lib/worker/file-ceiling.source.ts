import { bothClocks, type Clocks } from '../core/clock.js';
import { WorkerUnavailableError } from '../core/errors.js';
import type { IssuePermit } from '../core/permit.js';
import { msAtTicks, ticksAtMs } from '../core/time-units.js';
import {
  ceilingOwner,
  ceilingRecord,
  commitCeilingFile,
  discardCeilingFile,
  prepareCeilingFile,
  readCeilingFile,
  syncCeilingDirectory,
  writeCeilingFileSync,
  type CeilingRecord,
} from './ceiling-file.js';
import { CeilingAheadOfClockError } from './ceiling-file.errors.js';
import { nextCeilingTicks, raiseDueMs, startDecision } from './ceiling-file.math.js';
import type { CeilingFileSettings } from './ceiling-file.settings.js';
import type { WorkerAssignment, WorkerIdSource, WorkerSourceContext } from './worker-source.js';

/** How soon a failed raise is tried again. */
const RETRY_MS = 1000;

/**
 * A fixed worker ID (from options or a host name) that keeps its ceiling in a local file, so that a restart never
 * issues below what an earlier run of the same worker may have issued, even with the clock set back.
 *
 * The rule is the lease's, with a file for Redis: the ceiling is written ahead of use (a new ceiling is on disk
 * before any ID above the old one is issued); a start issues only above the ceiling the file holds, waiting (bounded)
 * for the clock to pass it; a graceful stop writes the exact last timestamp, so that a restart need not wait.
 *
 * The ceiling is raised `aheadMs` beyond the clock whenever the clock comes within `aheadMs / 2` of it: one small
 * write and fsync every few seconds, off the event loop, while `next()` compares two numbers. Only a process whose
 * event loop has not turned since the raise fell due (a synchronous loop of IDs running for seconds) reaches the
 * ceiling before that write lands; it then writes on the calling thread, once per `aheadMs`, instead of failing.
 */
export class FileCeilingWorkerSource implements WorkerIdSource {
  /** The ceiling on disk, in ticks: the permit allows nothing above it. */
  private ceilingTicks = -1;
  /** Wall-clock ms from which the permit looks further (a raise due, or the ceiling reached); never before start. */
  private raiseAtMs = Number.POSITIVE_INFINITY;
  /** The ceiling the previous run left, in ticks: this run issues strictly above it. */
  private floorTicks = -1;
  private raising: Promise<void> | undefined;
  /** Counts synchronous writes: a write off the event loop that sees it change drops its file instead of renaming. */
  private generation = 0;
  /** Monotonic ms before which a failed synchronous write is not tried again. */
  private blockingRetryAt = Number.NEGATIVE_INFINITY;
  private failure: Error | undefined;
  private context: WorkerSourceContext | undefined;
  private clocks: Clocks | undefined;
  private starting: Promise<WorkerAssignment> | undefined;
  /** Set once start has read the file, waited for the clock and written this run's first ceiling. */
  private started = false;
  private stopped = false;
  private readonly counters = { raises: 0, blockingRaises: 0 };

  /** What the generator asks before every ID: one comparison, unless a raise is due. */
  private readonly permit: IssuePermit = {
    ceiling: (nowMs) => {
      if (nowMs >= this.raiseAtMs) this.due(nowMs);
      return this.ceilingTicks;
    },
    ceilingReached: () => this.raiseBlocking(),
  };

  constructor(
    readonly kind: 'static' | 'hostname',
    private readonly workerId: number,
    private readonly datacenterId: number,
    private readonly settings: CeilingFileSettings,
  ) {}

  /** The file, as an absolute path. */
  get file(): string {
    return this.settings.path;
  }

  /**
   * Raises of the ceiling since start (the write at start is not one), and how many of them were written on the
   * calling thread because the event loop had not turned.
   */
  get raises(): { total: number; blocking: number } {
    return { total: this.counters.raises, blocking: this.counters.blockingRaises };
  }

  start(context: WorkerSourceContext): Promise<WorkerAssignment> {
    this.starting ??= this.begin(context).then((assignment) => {
      this.started = true;
      return assignment;
    });
    return this.starting;
  }

  private async begin(context: WorkerSourceContext): Promise<WorkerAssignment> {
    this.context = context;
    this.clocks = bothClocks(context.clock);
    const { layout } = context;
    const owner = ceilingOwner(layout, this.workerId, this.datacenterId);
    const previous = await readCeilingFile(this.file, owner);
    this.floorTicks = previous?.ceiling ?? -1;
    context.logger.log(
      `Using ${this.kind} worker ID ${this.workerId} (datacenter ${this.datacenterId}) with ceiling file ` +
        `${this.file}: ${describePrevious(previous)}`,
    );
    await this.waitForClock();
    // Stopped while waiting: the file keeps the previous run's ceiling, untouched.
    if (this.stopped) throw new WorkerUnavailableError('stopped');
    // Written ahead of use: the first ID may be issued only once this ceiling is on disk.
    const ceiling = nextCeilingTicks(layout, this.clocks.now(), this.floorTicks, this.settings.aheadMs);
    await this.write(ceiling, 'running');
    this.setCeiling(ceiling);
    return {
      workerId: this.workerId,
      datacenterId: this.datacenterId,
      floor: this.floorTicks,
      permit: this.permit,
    };
  }

  /** Writes the exact last timestamp, once any raise under way has landed: a restart then starts right above it. */
  async stop(lastTimestamp: number): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.raiseAtMs = Number.POSITIVE_INFINITY;
    // Before its start completed, this run wrote nothing and issued nothing: the file keeps its ceiling.
    if (!this.started) return;
    await this.raising;
    await this.write(Math.max(lastTimestamp, this.floorTicks), 'stopped');
  }

  requestSwitch(): boolean {
    return false;
  }

  /**
   * Resolves once the ceiling lies above the clock again (after the raise that reaching it set off); rejects with
   * the write's error when the file cannot be written, since waiting would not help then.
   */
  async whenReady(): Promise<void> {
    if (this.stopped) throw new WorkerUnavailableError('stopped');
    if (!this.started) {
      await this.starting;
      return;
    }
    const { layout } = this.context!;
    const needed = Math.max(ticksAtMs(layout, this.clocks!.now()), this.context!.lastTimestamp() + 1);
    if (needed <= this.ceilingTicks) return;
    this.raise();
    await this.raising;
    if (needed > this.ceilingTicks) {
      throw this.failure ?? new WorkerUnavailableError('ceiling', `the ceiling file ${this.file} was not raised`);
    }
  }

  /** The permit's slow path: the clock has reached the point where a raise is due, or the ceiling itself. */
  private due(nowMs: number): void {
    if (ticksAtMs(this.context!.layout, nowMs) > this.ceilingTicks) this.raiseBlocking();
    else this.raise();
  }

  /** Sets off a raise off the event loop, unless one is under way (or the source has stopped); never throws. */
  private raise(): void {
    // Never before start has read the file and written this run's first ceiling: a raise from a clock behind the
    // previous run's ceiling would lower it.
    if (this.stopped || !this.started || this.context === undefined || this.clocks === undefined) return;
    const { layout, logger } = this.context;
    // Until a raise under way lands, the permit looks further only once the clock passes the ceiling.
    this.raiseAtMs = msAtTicks(layout, this.ceilingTicks + 1);
    if (this.raising !== undefined) return;
    const target = nextCeilingTicks(layout, this.clocks.now(), this.context.lastTimestamp(), this.settings.aheadMs);
    this.raising = this.write(target, 'running')
      .then(
        (written) => {
          if (!written || this.stopped) return;
          this.counters.raises++;
          this.failure = undefined;
          this.setCeiling(Math.max(this.ceilingTicks, target));
        },
        (error: Error) => {
          this.failure = error;
          logger.error(`${error.message} ${this.goingOn()}`);
          if (!this.stopped) {
            this.raiseAtMs = Math.min(this.clocks!.now() + RETRY_MS, msAtTicks(layout, this.ceilingTicks + 1));
          }
        },
      )
      .finally(() => {
        this.raising = undefined;
      });
  }

  /**
   * Raises the ceiling on the calling thread: the clock has passed it before the raise off the event loop landed
   * (the event loop has not turned since it fell due). A raise under way then drops its file instead of renaming it
   * over this one.
   */
  private raiseBlocking(): void {
    if (this.stopped || !this.started || this.context === undefined || this.clocks === undefined) return;
    if (this.clocks.monotonicNow() < this.blockingRetryAt) return;
    const { layout, logger } = this.context;
    const nowMs = this.clocks.now();
    const target = nextCeilingTicks(layout, nowMs, this.context.lastTimestamp(), this.settings.aheadMs);
    if (target <= this.ceilingTicks) return;
    this.generation++;
    try {
      writeCeilingFileSync(this.file, this.record(target, 'running', nowMs));
    } catch (error) {
      this.failure = error as Error;
      this.blockingRetryAt = this.clocks.monotonicNow() + RETRY_MS;
      logger.error(`${(error as Error).message} ${this.goingOn()}`);
      return;
    }
    this.counters.raises++;
    this.counters.blockingRaises++;
    this.failure = undefined;
    this.setCeiling(target);
  }

  private goingOn(): string {
    const at = new Date(msAtTicks(this.context!.layout, this.ceilingTicks)).toISOString();
    return `IDs go on up to the ceiling already written (${at}); retrying in ${RETRY_MS} ms.`;
  }

  private setCeiling(ceilingTicks: number): void {
    this.ceilingTicks = ceilingTicks;
    this.raiseAtMs = raiseDueMs(this.context!.layout, ceilingTicks, this.settings.aheadMs / 2);
  }

  private record(ceilingTicks: number, state: CeilingRecord['state'], nowMs: number): CeilingRecord {
    const { layout } = this.context!;
    return ceilingRecord(layout, ceilingOwner(layout, this.workerId, this.datacenterId), ceilingTicks, state, nowMs);
  }

  /**
   * Replaces the file off the event loop. Resolves false, leaving the file alone, when a synchronous raise wrote a
   * higher ceiling while this one was being written; renames happen on the event loop, in the order decided here.
   */
  private async write(ceilingTicks: number, state: CeilingRecord['state']): Promise<boolean> {
    const generation = this.generation;
    const temporary = await prepareCeilingFile(this.file, this.record(ceilingTicks, state, this.clocks!.now()));
    if (generation !== this.generation) {
      await discardCeilingFile(temporary);
      return false;
    }
    commitCeilingFile(temporary, this.file);
    await syncCeilingDirectory(this.file);
    return true;
  }

  /**
   * Waits until the clock has passed the ceiling the previous run left, for at most `maxWaitMs` on the monotonic
   * clock; a clock further behind than that is refused, and the file is left as it was.
   */
  private async waitForClock(): Promise<void> {
    const { layout, logger } = this.context!;
    const clocks = this.clocks!;
    const deadline = clocks.monotonicNow() + this.settings.maxWaitMs;
    let said = false;
    for (;;) {
      const left = Math.max(0, deadline - clocks.monotonicNow());
      const decision = startDecision(layout, clocks.now(), this.floorTicks, left);
      if (decision.kind === 'go') return;
      if (decision.kind === 'refuse') {
        throw new CeilingAheadOfClockError(
          this.file,
          decision.behindMs,
          this.settings.maxWaitMs,
          new Date(msAtTicks(layout, this.floorTicks)),
        );
      }
      if (!said) {
        said = true;
        logger.log(`Waiting ${decision.waitMs} ms for the clock to pass the ceiling in ${this.file}`);
      }
      await sleep(Math.max(1, decision.waitMs));
    }
  }
}

function describePrevious(previous: CeilingRecord | undefined): string {
  if (previous === undefined) return 'none yet, it is created now';
  const at = previous.ceilingAt === '' ? 'nothing issued' : previous.ceilingAt;
  return previous.state === 'stopped'
    ? `the previous run stopped at ${at}`
    : `the previous run did not stop cleanly; its ceiling is ${at}, and this run issues above it`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
