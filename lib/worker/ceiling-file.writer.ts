/**
 * The ceiling file's writes ahead of use: the ceiling the permit may hand out is only ever one already on disk. An
 * unref'd timer writes the next one half a step before the ceiling is reached, off the event loop; a call that
 * reaches the ceiling first writes it itself; a failed write is retried after a pause. The source
 * (`ceiling-file.source.ts`) takes the locks, reads the file at start and stops this at shutdown.
 */
import type { LoggerService } from '@nestjs/common';
import { bothClocks, type Clocks } from '../core/clock.js';
import type { Layout } from '../core/layout.js';
import { msAtTicks, ticksAtMs } from '../core/time-units.js';
import {
  commitCeiling,
  discardCeiling,
  prepareCeiling,
  writeCeiling,
  type CeilingRecord,
} from './ceiling-file.store.js';

/** After a failed write, how long before the next attempt. */
const RETRY_MS = 1000;

/** What the writer writes for, known once the source has started. */
export interface CeilingWriterTarget {
  layout: Layout;
  logger: LoggerService;
  clocks: Clocks;
  /** The record's fields other than the ceiling: the layout's label, the worker and datacenter IDs. */
  owner: Omit<CeilingRecord, 'ceilingTicks'>;
  /** The last issued timestamp, or the floor if higher, in ticks. */
  lastTicks(): number;
}

/** Writes one worker's ceiling file ahead of the clock. */
export class CeilingWriter {
  /** The highest timestamp written and synced: what the permit allows. */
  ceilingTicks = -1;
  /** The ceiling as wall ms: the permit's one comparison. */
  ceilingMs = -Infinity;
  private target: CeilingWriterTarget | undefined;
  private clocks: Clocks = bothClocks();
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

  constructor(
    private readonly path: string,
    /** How far ahead of the clock each write puts the ceiling, ms. */
    private readonly stepMs: number,
  ) {}

  /** Raises since start: by the timer, off the event loop, and on the calling thread (the event loop was held). */
  get raises(): { background: number; blocking: number } {
    return { ...this.counters };
  }

  /** What to write for, and the clocks to read, from the source's start on. */
  attach(target: CeilingWriterTarget): void {
    this.target = target;
    this.clocks = target.clocks;
  }

  /** No more writes: the timer is cleared, and a background write under way drops its file. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /**
   * Asked after a refusal at the ceiling: writes now if the timer has not (a write only when one is due). Returns how
   * long to wait before asking again: after a failed write, until the next attempt rather than spin.
   */
  dueWaitMs(): number {
    if (this.clocks.now() >= this.raiseAtMs) this.raise();
    return Math.max(0, this.retryAtMs - this.clocks.now());
  }

  /** At stop, `exact` (the last issued timestamp), so that the next start waits for nothing. */
  writeExact(exact: number): void {
    const { layout, logger, owner } = this.target!;
    // Nothing issued and nothing before: the ceiling written at start (if any) stays, which is only higher than needed.
    if (exact < 0 || this.ceilingTicks < 0) return;
    try {
      writeCeiling(this.path, { ...owner, ceilingTicks: exact }, layout);
    } catch (error) {
      logger.warn(
        `${(error as Error).message} The ceiling written before stays: the next start may wait up to ` +
          `${this.stepMs} ms for the clock to pass it.`,
      );
    }
  }

  /** Writes the next ceiling now, unless stopped or a failed write waits for its retry time. */
  raise(): void {
    if (this.stopped || this.clocks.now() < this.retryAtMs) return;
    try {
      this.writeAhead();
      this.counters.blocking++;
    } catch (error) {
      this.failed(error as Error);
    }
  }

  /**
   * Writes a ceiling one step above the clock (or above the last issued timestamp, if the clock stands behind it),
   * and only once it is on disk lets the permit hand it out; then sets the timer for the next one.
   */
  writeAhead(): void {
    const { layout, owner } = this.target!;
    const target = this.nextTarget();
    // A background write under way must not rename its older ceiling over this one.
    this.generation++;
    writeCeiling(this.path, { ...owner, ceilingTicks: target }, layout);
    this.accept(target);
  }

  /**
   * The timer's raise: the same write, off the event loop (the thread pool writes and fsyncs a temporary file; the
   * rename happens back on the event loop, in order). A synchronous write that lands first makes it drop its file.
   */
  private raiseInBackground(): void {
    if (this.stopped || this.background !== undefined || this.target === undefined) return;
    if (this.clocks.now() < this.retryAtMs) return this.schedule(this.retryAtMs - this.clocks.now());
    const { layout, owner } = this.target;
    const { path } = this;
    const target = this.nextTarget();
    const generation = this.generation;
    this.background = prepareCeiling(path, { ...owner, ceilingTicks: target }, layout)
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
    this.target!.logger.error(
      `${error.message} IDs above ${new Date(this.ceilingMs).toISOString()} wait until a write ` +
        `succeeds; retrying in ${RETRY_MS} ms`,
    );
  }

  /**
   * One step above the clock, or above the last issued timestamp if the clock stands behind it; never below the
   * ceiling the permit already allows. The timer runs on the monotonic clock: after the wall clock stepped back, a
   * step above it can lie below that ceiling, and the file would then miss IDs issued up to it.
   */
  private nextTarget(): number {
    const { layout } = this.target!;
    const lastTicks = this.target!.lastTicks();
    const ahead = Math.max(ticksAtMs(layout, this.clocks.now()), lastTicks) + this.stepTicks(layout);
    return Math.max(ahead, this.ceilingTicks);
  }

  /** Lets the permit hand out a ceiling that is on disk, and sets the timer for the next raise. */
  private accept(target: number): void {
    const { layout } = this.target!;
    this.ceilingTicks = Math.max(this.ceilingTicks, target);
    // The last millisecond of the ceiling's tick: the permit writes ahead only once the clock leaves it.
    this.ceilingMs = msAtTicks(layout, this.ceilingTicks + 1);
    this.raiseAtMs = msAtTicks(layout, this.ceilingTicks - Math.floor(this.stepTicks(layout) / 2));
    this.schedule(this.raiseAtMs - this.clocks.now());
  }

  private stepTicks(layout: Layout): number {
    return Math.max(2, Math.ceil(this.stepMs / layout.timeUnitMs));
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    this.timer = setTimeout(() => this.raiseInBackground(), Math.max(0, delayMs));
    // The app's own handles keep the process alive; a pending raise must not.
    this.timer.unref();
  }
}
