import { bothClocks, type Clocks } from '../core/clock.js';
import { WorkerUnavailableError } from '../core/errors.js';
import type { IssuePermit } from '../core/permit.js';
import { msAtTicks, ticksAtMs } from '../core/time-units.js';
import { ceilingOwner, ceilingRecord, readCeilingFile, writeCeilingFile, type CeilingRecord } from './ceiling-file.js';
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
 * for the clock to pass it; a graceful stop writes the exact last timestamp, so that a restart need not wait. The
 * ceiling is raised `aheadMs` beyond the clock whenever the clock comes within `aheadMs / 2` of it: one small write
 * and fsync every few seconds, off the issuing path, while `next()` compares two numbers.
 */
export class FileCeilingWorkerSource implements WorkerIdSource {
  /** The ceiling on disk, in ticks: the permit allows nothing above it. */
  private ceilingTicks = -1;
  /** Wall-clock ms from which the permit asks for a raise; never before start. */
  private raiseAtMs = Number.POSITIVE_INFINITY;
  /** The ceiling the previous run left, in ticks: this run issues strictly above it. */
  private floorTicks = -1;
  private raising: Promise<void> | undefined;
  /** Writes to the file, one after the other, so that a slower earlier write never lands over a later one. */
  private writes: Promise<unknown> = Promise.resolve();
  private failure: Error | undefined;
  private context: WorkerSourceContext | undefined;
  private clocks: Clocks | undefined;
  private stopped = false;
  private readonly counters = { raises: 0 };

  /** What the generator asks before every ID: two comparisons, and a raise set off (not awaited) when due. */
  private readonly permit: IssuePermit = {
    ceiling: (nowMs) => {
      if (nowMs >= this.raiseAtMs) this.raise();
      return this.ceilingTicks;
    },
    ceilingReached: () => this.raise(),
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

  /** Writes of the file since start that raised the ceiling (the first write at start is not counted). */
  get raises(): number {
    return this.counters.raises;
  }

  async start(context: WorkerSourceContext): Promise<WorkerAssignment> {
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
    if (this.context === undefined) return;
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
    if (this.context === undefined || this.clocks === undefined) return;
    const { layout } = this.context;
    const needed = Math.max(ticksAtMs(layout, this.clocks.now()), this.context.lastTimestamp() + 1);
    if (needed <= this.ceilingTicks) return;
    this.raise();
    await this.raising;
    if (this.failure !== undefined && needed > this.ceilingTicks) throw this.failure;
  }

  /** Sets off a raise unless one is under way (or the source has stopped); never throws. */
  private raise(): void {
    if (this.raising !== undefined || this.stopped || this.context === undefined || this.clocks === undefined) return;
    const { layout, logger } = this.context;
    const nowMs = this.clocks.now();
    const target = nextCeilingTicks(layout, nowMs, this.context.lastTimestamp(), this.settings.aheadMs);
    // Nothing more until this raise ends: the permit would otherwise set off another on every ID.
    this.raiseAtMs = Number.POSITIVE_INFINITY;
    this.raising = this.write(target, 'running')
      .then(
        () => {
          this.counters.raises++;
          this.failure = undefined;
          if (!this.stopped) this.setCeiling(Math.max(this.ceilingTicks, target));
        },
        (error: Error) => {
          this.failure = error;
          logger.error(
            `${error.message} IDs go on up to the ceiling already written (${new Date(msAtTicks(layout, this.ceilingTicks)).toISOString()}); ` +
              `retrying in ${RETRY_MS} ms.`,
          );
          if (!this.stopped) this.raiseAtMs = this.clocks!.now() + RETRY_MS;
        },
      )
      .finally(() => {
        this.raising = undefined;
      });
  }

  private setCeiling(ceilingTicks: number): void {
    this.ceilingTicks = ceilingTicks;
    this.raiseAtMs = raiseDueMs(this.context!.layout, ceilingTicks, this.settings.aheadMs / 2);
  }

  private write(ceilingTicks: number, state: CeilingRecord['state']): Promise<void> {
    const { layout } = this.context!;
    const owner = ceilingOwner(layout, this.workerId, this.datacenterId);
    const write = this.writes.then(() =>
      writeCeilingFile(this.file, ceilingRecord(layout, owner, ceilingTicks, state, this.clocks!.now())),
    );
    this.writes = write.catch(() => undefined);
    return write;
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
