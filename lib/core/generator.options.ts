import type { Clock } from './clock.js';
import type { Layout } from './layout.js';
import type { IssuePermit } from './permit.js';

/**
 * Options of a {@link SnowflakeGenerator}.
 *
 * @publicApi
 */
export interface GeneratorOptions {
  layout: Layout;
  /** @default 0 */
  workerId?: number;
  /** @default 0 */
  datacenterId?: number;
  /** The wall clock. @default systemClock */
  clock?: Clock;
  /** How far the clock may step back before the generator refuses to issue. @default 1000 */
  clockBackToleranceMs?: number;
  /** The longest a synchronous call may wait for the next time unit when the sequence is used up. @default 10 */
  maxSyncWaitMs?: number;
  /** Issue only timestamps strictly above this one (in ticks): the previous holder's ceiling of a reused worker ID. */
  floor?: number;
  /** Asked before every ID; see {@link IssuePermit}. */
  permit?: IssuePermit;
}

/**
 * Counters of a generator since it was created.
 *
 * @publicApi
 */
export interface GeneratorStats {
  /** IDs issued. */
  issued: number;
  /** Times the sequence ran out and the generator waited for the next time unit. */
  overflowWaits: number;
  /** Times the clock was seen behind the last issued timestamp. */
  clockBackEvents: number;
  /** The largest step back seen, in milliseconds. */
  maxClockBackMs: number;
  /** The last issued timestamp, in ticks (or the floor before the first ID). */
  lastTimestamp: number;
}

/** @throws RangeError unless `count` is a non-negative safe integer: a fractional count would corrupt the sequence. */
export function assertBatchCount(count: number, method: string): void {
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new RangeError(`${method}(count): expected a non-negative integer, got ${String(count)}.`);
  }
}
