/**
 * The generator's answers to a clock that does not move on: a reading behind the last issued timestamp (noted, and
 * refused beyond the tolerance), a used-up time unit to wait out (spinning within a bound), and the async variants'
 * sleep until the next unit. The counters are those `stats()` reports.
 */
import type { Clocks } from './clock.js';
import { ClockMovedBackError, SequenceExhaustedError } from './errors.js';
import type { Layout } from './layout.js';
import { msAtTicks, ticksAtMs } from './time-units.js';

/** Stalls and steps back of one generator's clock; every timestamp here is in ticks, `last` the last issued one. */
export class ClockStalls {
  readonly counters = { overflowWaits: 0, clockBackEvents: 0, maxClockBackMs: 0 };
  private readonly toleranceTicks: number;
  /** The clock stands behind `last`: a step back counts once however many readings fall behind. */
  private behind = false;

  constructor(
    private readonly layout: Layout,
    private readonly clock: Clocks,
    /** How far the clock may stand behind `last` before the generator refuses, in ms. */
    private readonly toleranceMs: number,
  ) {
    this.toleranceTicks = Math.floor(toleranceMs / layout.timeUnitMs);
  }

  /** The clock reached a unit after `last` (or the generator was assigned anew): a later step back is a new one. */
  caughtUp(): void {
    this.behind = false;
  }

  /** Counts a reading `t` behind `last`. @throws ClockMovedBackError when it lies beyond the tolerance */
  noteClockBack(last: number, t: number): void {
    const behindMs = (last - t) * this.layout.timeUnitMs;
    if (!this.behind) {
      this.behind = true;
      this.counters.clockBackEvents++;
    }
    if (behindMs > this.counters.maxClockBackMs) this.counters.maxClockBackMs = behindMs;
    if (last - t > this.toleranceTicks) throw this.clockBackError(last, t);
  }

  /**
   * With the clock at `t`, behind `last`, and the sequence of `last` used up: may the next ID borrow the unit after
   * `last`? @throws ClockMovedBackError when that unit lies beyond the tolerance
   */
  checkBorrow(last: number, t: number): void {
    if (last + 1 - t > this.toleranceTicks) throw this.clockBackError(last, t, 1);
  }

  /** `borrow`: the units beyond `last` the refused ID would have needed, reported as how far it would run ahead. */
  private clockBackError(last: number, t: number, borrow = 0): ClockMovedBackError {
    const unit = this.layout.timeUnitMs;
    return new ClockMovedBackError((last - t) * unit, this.toleranceMs, (last + borrow - t) * unit);
  }

  /** Spins until the clock reaches the tick after `last`, for at most `maxWaitMs` of monotonic time. */
  waitForNextTick(last: number, maxWaitMs: number): number {
    const target = last + 1;
    const waitMs = msAtTicks(this.layout, target) - this.clock.now();
    if (waitMs > maxWaitMs) throw new SequenceExhaustedError(waitMs, maxWaitMs);
    this.counters.overflowWaits++;
    // One more millisecond: the wall clock counts whole ones, so a wait of exactly maxWaitMs must still fit.
    const deadline = this.clock.monotonicNow() + maxWaitMs + 1;
    for (;;) {
      // Deadline before clock: a pause (GC, preemption) between the two reads must not fail a wait that succeeded.
      const expired = this.clock.monotonicNow() > deadline;
      const t = ticksAtMs(this.layout, this.clock.now());
      if (t >= target) return t;
      if (t < last) {
        // Stepped back while waiting: continue in clock-back mode.
        this.noteClockBack(last, t);
        this.checkBorrow(last, t);
        return target;
      }
      if (expired) throw new SequenceExhaustedError(waitMs, maxWaitMs);
    }
  }
}

/** Runs `attempt` until it does not find the sequence used up, sleeping (not spinning) until the next time unit. */
export async function waitingForTheSequence<T>(attempt: () => T): Promise<T> {
  for (;;) {
    try {
      return attempt();
    } catch (error) {
      if (!(error instanceof SequenceExhaustedError)) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.ceil(error.waitMs))));
    }
  }
}
