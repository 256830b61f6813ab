import { inspect } from 'node:util';
import type { Clock } from './clock.js';
import { DEFAULTS } from './defaults.js';
import { describeInput } from './describe-input.js';
import { SnowflakeConfigError } from './errors.js';
import type { Layout } from './layout.js';
import { nonNegativeOption } from './option-checks.js';
import type { IssuePermit } from './permit.js';
import type { ShardKey } from './shard-key.js';

/**
 * Where each time unit's sequence starts.
 *
 * - `'zero'`: at 0, as every snowflake does. At low traffic nearly every ID then ends in the same bits, so `id % N`
 *   partitioning puts almost every row on one partition.
 * - `'random'`: at a random offset below `2^(sequenceBits - 1)`, drawn when a unit starts.
 * - `'rotating'`: at an offset that moves on by one each time a unit starts, wrapping below `2^(sequenceBits - 1)`.
 *
 * With either of the last two the low `sequenceBits - 1` bits spread evenly, so `id % N` spreads for every power of
 * two `N` up to `2^(sequenceBits - 1)` (2,048 on `default`). The price is at peak traffic: a unit that starts at
 * offset `k` holds `2^sequenceBits - k` IDs, at least half of them.
 *
 * @publicApi
 */
export type SequenceStart = 'zero' | 'random' | 'rotating';

const SEQUENCE_STARTS: readonly unknown[] = ['zero', 'random', 'rotating'] satisfies SequenceStart[];

/** The `sequenceStart` option checked: `'zero'` when absent. @throws SnowflakeConfigError naming the option @internal */
export function sequenceStartOption(value: unknown): SequenceStart {
  if (value === undefined) return 'zero';
  if (SEQUENCE_STARTS.includes(value)) return value as SequenceStart;
  throw new SnowflakeConfigError(
    'sequenceStart',
    `expected one of ${SEQUENCE_STARTS.map((m) => `'${String(m)}'`).join(', ')}, got ${inspect(value)}.`,
  );
}

/**
 * Options of one call that issues IDs.
 *
 * @publicApi
 */
export interface NextIdOptions {
  /**
   * The business key (a user ID, a tenant) whose shard the ID carries in the layout's shard field: IDs of one key
   * share a shard in every process. Present but `undefined` or `null` is refused, never read as shard 0.
   */
  shardKey?: ShardKey;
}

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
  /** Asked before the first ID of each time unit; see {@link IssuePermit}. */
  permit?: IssuePermit;
  /** Where each time unit's sequence starts; see {@link SequenceStart}. @default 'zero' */
  sequenceStart?: SequenceStart;
  /** Random numbers in [0, 1) for `sequenceStart: 'random'`, for tests. @default Math.random */
  random?: () => number;
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
    throw new SnowflakeConfigError(
      'count',
      `${method}(count) expected a non-negative integer, got ${describeInput(count)}.`,
    );
  }
}

/** The generator's waits, checked in this order, with their defaults: the clock-back tolerance and the sync bound. */
export function waitOptions(options: GeneratorOptions): { clockBackToleranceMs: number; maxSyncWaitMs: number } {
  return {
    clockBackToleranceMs: nonNegativeOption(
      'clockBackToleranceMs',
      options.clockBackToleranceMs,
      DEFAULTS.clockBackToleranceMs,
    ),
    maxSyncWaitMs: nonNegativeOption('maxSyncWaitMs', options.maxSyncWaitMs, DEFAULTS.maxSyncWaitMs),
  };
}
