/**
 * Synchronous batches: the check that a batch's time units start within the wait bound, and the loop that draws the
 * batch unit by unit, reading the clock once per unit. The generator hands in its own issuing as a {@link UnitDraw}.
 */
import type { Clocks } from './clock.js';
import { SequenceExhaustedError } from './errors.js';
import type { Layout } from './layout.js';
import { ticksAtMs } from './time-units.js';

/** The generator's issuing, as a batch uses it. */
export interface UnitDraw {
  /**
   * One ID from the clock reading `now`: the next of the current unit, or the first of a new one, waiting for the
   * next unit until `deadline` (monotonic ms) at the latest.
   */
  issueBefore(now: number, deadline: number): bigint;
  /** The rest of the current unit's sequence, up to `count` IDs in `out`, without reading the clock. */
  fillUnit(out: bigint[], count: number): void;
}

/** Where the generator stands when a batch begins, in ticks. */
export interface BatchStart {
  /** The last issued timestamp. */
  last: number;
  /** The IDs left in the unit `last`. */
  leftInLast: number;
  /** The IDs a new unit holds at least. */
  perUnit: number;
}

/**
 * Throws {@link SequenceExhaustedError} before drawing anything when `count` IDs would need time units that start
 * later than `maxSyncWaitMs` after `now`, such as a batch begun late in a 1 s unit: drawn IDs would be thrown away.
 */
export function checkBatchFitsWait(
  layout: Layout,
  start: BatchStart,
  count: number,
  now: number,
  maxSyncWaitMs: number,
): void {
  const t = ticksAtMs(layout, now);
  // A clock behind the last timestamp borrows units without waiting, within the tolerance: nothing to check.
  if (t < start.last) return;
  const left = t === start.last ? start.leftInLast : start.perUnit;
  if (count <= left) return;
  const furtherUnits = Math.ceil((count - left) / start.perUnit);
  const waitMs = (t + furtherUnits) * layout.timeUnitMs + layout.epoch - now;
  if (waitMs > maxSyncWaitMs) throw new SequenceExhaustedError(waitMs, maxSyncWaitMs);
}

/**
 * `count` IDs drawn unit by unit, whose waits for the next unit add up to `maxSyncWaitMs` at most.
 *
 * @param firstReading the clock reading the batch was checked with, which serves the first unit
 */
export function drawBatch(
  draw: UnitDraw,
  clock: Clocks,
  count: number,
  firstReading: number,
  maxSyncWaitMs: number,
): bigint[] {
  const out: bigint[] = [];
  // One more millisecond, as in waitForNextTick: the wall clock counts whole ones.
  const deadline = clock.monotonicNow() + maxSyncWaitMs + 1;
  let reading: number | undefined = firstReading;
  while (out.length < count) {
    const now = reading ?? clock.now();
    reading = undefined;
    out.push(draw.issueBefore(now, deadline));
    draw.fillUnit(out, count);
  }
  return out;
}
