import { msAtTicks, ticksAtMs, type TimeFrame } from '../core/time-units.js';

/**
 * The arithmetic of a ceiling file, on plain numbers: what to write, when to write again, and whether a start may
 * issue yet. Wall-clock times are Unix ms (`…Ms`), timestamps are layout ticks (`…Ticks`).
 */

/**
 * The ceiling to write: `aheadMs` beyond the later of the clock and the last issued timestamp (which runs ahead of
 * the clock after a step back), so that the worker may issue that long before it must write again.
 */
export function nextCeilingTicks(frame: TimeFrame, nowMs: number, lastTicks: number, aheadMs: number): number {
  return ticksAtMs(frame, Math.max(nowMs, msAtTicks(frame, lastTicks)) + aheadMs);
}

/**
 * When a raise of `ceilingTicks` falls due: once the clock is within `marginMs` of it. The raise then has that long
 * to reach the disk before the generator would run into the ceiling.
 */
export function raiseDueMs(frame: TimeFrame, ceilingTicks: number, marginMs: number): number {
  return msAtTicks(frame, ceilingTicks) - marginMs;
}

/** Whether a start may issue above `floorTicks` now, must wait for the clock, or must refuse. */
export type StartDecision = { kind: 'go' } | { kind: 'wait'; waitMs: number } | { kind: 'refuse'; behindMs: number };

/**
 * A start issues only once the clock has passed the ceiling the previous run left (`floorTicks`, -1 for none): it
 * waits for that when it is at most `maxWaitMs` away, and refuses otherwise.
 */
export function startDecision(frame: TimeFrame, nowMs: number, floorTicks: number, maxWaitMs: number): StartDecision {
  if (floorTicks < 0 || ticksAtMs(frame, nowMs) > floorTicks) return { kind: 'go' };
  const waitMs = msAtTicks(frame, floorTicks + 1) - nowMs;
  return waitMs <= maxWaitMs ? { kind: 'wait', waitMs } : { kind: 'refuse', behindMs: waitMs };
}
