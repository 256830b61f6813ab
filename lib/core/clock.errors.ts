/** Errors of time: a clock stepped back, a used-up sequence, a batch too large to wait for, a full timestamp field. */
import { SnowflakeError, TransientSnowflakeError } from './base.errors.js';

/**
 * The clock stands further behind the last issued timestamp than the configured tolerance allows.
 * Issuing would either repeat IDs or push timestamps far into the future, so the generator refuses.
 *
 * @publicApi
 */
export class ClockMovedBackError extends TransientSnowflakeError {
  constructor(
    /** How far the clock stands behind the last issued timestamp, in milliseconds. */
    readonly behindMs: number,
    /** The tolerance that was exceeded, in milliseconds. */
    readonly toleranceMs: number,
    /**
     * How far ahead of the clock the refused ID's timestamp would have been: `behindMs`, or more when the sequence
     * of the last timestamp was used up and the next ID had to borrow the following time unit.
     */
    readonly aheadMs: number = behindMs,
  ) {
    super(
      (aheadMs > behindMs
        ? `The clock stands ${behindMs} ms behind the last issued ID, and the next ID would run ${aheadMs} ms ` +
          `ahead of it, more than the tolerance of ${toleranceMs} ms. `
        : `The clock moved back ${behindMs} ms, more than the tolerance of ${toleranceMs} ms. `) +
        'Check the host clock (NTP steps), raise `clockBackToleranceMs`, or use a Redis lease, ' +
        'which switches to another worker ID instead.',
    );
  }
}

/**
 * All sequence numbers of the current time unit are used and the next unit is further away than the
 * synchronous wait bound. Use `nextAsync()`, or a layout with more sequence bits or a shorter time unit.
 *
 * @publicApi
 */
export class SequenceExhaustedError extends TransientSnowflakeError {
  constructor(
    /** The milliseconds until the next time unit starts. */
    readonly waitMs: number,
    /** The synchronous wait bound, in milliseconds. */
    readonly maxWaitMs: number,
  ) {
    super(
      `All sequence numbers of this time unit are used and the next unit is ${waitMs} ms away ` +
        `(synchronous wait bound: ${maxWaitMs} ms). Use nextAsync(), raise \`maxSyncWaitMs\`, ` +
        'or choose a layout with more sequence bits or a shorter time unit.',
    );
  }
}

/**
 * A synchronous batch would need more time units than fit in the synchronous wait bound.
 *
 * @publicApi
 */
export class BatchTooLargeError extends SnowflakeError {
  constructor(
    /** The IDs asked for. */
    readonly count: number,
    /** The most one synchronous batch issues with this layout and `maxSyncWaitMs`. */
    readonly max: number,
    /** The synchronous wait bound, in milliseconds. */
    readonly maxWaitMs: number,
  ) {
    super(
      `nextBatch(${count}) asks for more IDs than this layout issues within the synchronous wait bound ` +
        `(${max} within ${maxWaitMs} ms), and would hold the event loop longer. Use nextBatchAsync(${count}), ` +
        'split the batch, or raise `maxSyncWaitMs`.',
    );
  }
}

/**
 * The timestamp field of the layout is full: the layout has run out of time.
 *
 * @publicApi
 */
export class TimestampOverflowError extends SnowflakeError {
  constructor(readonly lastDate: Date) {
    super(
      `The layout's timestamp field ran out on ${lastDate.toISOString()}. ` +
        'Choose a later epoch or more timestamp bits (this changes the ID format: plan a migration).',
    );
  }
}
