import { bothClocks, type Clocks } from './clock.js';
import { DEFAULTS } from './defaults.js';
import { msAtTicks, ticksAtMs } from './time-units.js';
import {
  BatchTooLargeError,
  ClockMovedBackError,
  SequenceExhaustedError,
  TimestampOverflowError,
  UnsafeNumberError,
  WorkerUnavailableError,
} from './errors.js';
import { checkNodeFitsLayout, type Layout } from './layout.js';
import { nonNegativeOption } from './option-checks.js';
import type { IssuePermit } from './permit.js';
import { SequenceStarts } from './sequence-start.js';
import { shardFieldOf, withShard } from './shard-key.js';
import {
  assertBatchCount,
  sequenceStartOption,
  type GeneratorOptions,
  type GeneratorStats,
  type NextIdOptions,
} from './generator.options.js';

export {
  assertBatchCount,
  type GeneratorOptions,
  type GeneratorStats,
  type NextIdOptions,
  type SequenceStart,
} from './generator.options.js';

const NO_CEILING = Number.MAX_SAFE_INTEGER;

/**
 * The ID generator: pure, synchronous, free of Nest and Redis.
 *
 * Rules, with `L` the last issued timestamp and `R` the clock now (both in ticks):
 * - `R > L`: issue at `R` with sequence 0.
 * - `R == L`: next sequence; when it runs out, wait for the next tick (bounded) and issue there. The old timestamp
 *   is never reused with a wrapped sequence.
 * - `R < L` (the clock stepped back): continue at `L`; when the sequence runs out, borrow the next tick as long as
 *   `L - R` stays within the tolerance, else throw {@link ClockMovedBackError}.
 * - Never issue above the permit's ceiling.
 *
 * IDs of one generator therefore strictly increase.
 *
 * A layout with a shard field keeps one sequence per worker, shared by every shard, above the shard bits: an ID is
 * `[timestamp][datacenter][worker][sequence][shard]`. IDs of one worker therefore still strictly increase and never
 * repeat whatever shards they carry, and a unit's `2^sequenceBits` IDs are shared by all shards.
 *
 * @publicApi
 */
export class SnowflakeGenerator {
  readonly layout: Layout;
  private readonly clock: Clocks;
  private readonly epoch: number;
  private readonly unit: number;
  private readonly maxSequence: number;
  private readonly timestampShift: bigint;
  private readonly sequenceShift: bigint;
  /** One step of the sequence in the ID: `1 << sequenceShift`, past the shard field. */
  private readonly step: bigint;
  private readonly starts: SequenceStarts;
  private readonly toleranceTicks: number;
  private readonly toleranceMs: number;
  private readonly maxSyncWaitMs: number;
  private permit: IssuePermit | undefined;

  private node = 0n;
  private _workerId = 0;
  private _datacenterId = 0;
  /** The last issued timestamp `L`, in ticks. */
  private last = -1;
  private sequence = 0;
  /** The last issued ID of shard 0: `(last << timestampShift) | node | (sequence << sequenceShift)`. */
  private id = 0n;
  private behind = false;
  private readonly counters = { overflowWaits: 0, clockBackEvents: 0, maxClockBackMs: 0 };
  /** IDs used up (`stats().issued`): a field of its own, as the hot path counts it. */
  private issued = 0;
  /**
   * The wall-clock milliseconds of the unit `last`: `[lastStartMs, lastEndMs)`. A reading inside it is a reading of
   * the unit `last`, found with two comparisons instead of a division; both are NaN before the first ID.
   */
  private lastStartMs = Number.NaN;
  private lastEndMs = Number.NaN;

  constructor(options: GeneratorOptions) {
    const { layout } = options;
    this.layout = layout;
    this.clock = bothClocks(options.clock);
    this.epoch = layout.epoch;
    this.unit = layout.timeUnitMs;
    this.maxSequence = layout.maxSequence;
    this.timestampShift = BigInt(layout.timestampShift);
    this.sequenceShift = BigInt(layout.sequenceShift);
    this.step = 1n << this.sequenceShift;
    this.starts = new SequenceStarts(sequenceStartOption(options.sequenceStart), layout.sequenceBits, options.random);
    this.toleranceMs = nonNegativeOption(
      'clockBackToleranceMs',
      options.clockBackToleranceMs,
      DEFAULTS.clockBackToleranceMs,
    );
    this.toleranceTicks = Math.floor(this.toleranceMs / this.unit);
    this.maxSyncWaitMs = nonNegativeOption('maxSyncWaitMs', options.maxSyncWaitMs, DEFAULTS.maxSyncWaitMs);
    this.assign(options.workerId ?? 0, options.datacenterId ?? 0, options.floor, options.permit);
  }

  get workerId(): number {
    return this._workerId;
  }

  get datacenterId(): number {
    return this._datacenterId;
  }

  /**
   * Moves the generator to another worker ID (a lease switch). IDs continue above `floor`, the new ID's previous
   * holder's ceiling; uniqueness across the switch comes from the differing worker bits.
   */
  assign(workerId: number, datacenterId: number, floor = -1, permit?: IssuePermit): void {
    checkNodeFitsLayout(this.layout, datacenterId, workerId);
    this._workerId = workerId;
    this._datacenterId = datacenterId;
    this.node =
      (BigInt(datacenterId) << BigInt(this.layout.datacenterShift)) |
      (BigInt(workerId) << BigInt(this.layout.workerShift));
    this.permit = permit;
    // Standing at the floor with a used-up sequence makes the first ID land strictly above the floor.
    this.setLast(floor);
    this.sequence = this.maxSequence;
    this.id =
      floor < 0
        ? 0n
        : (BigInt(floor) << this.timestampShift) | this.node | (BigInt(this.maxSequence) << this.sequenceShift);
    this.behind = false;
  }

  /**
   * The next ID; with `{ shardKey }`, carrying the key's shard in the layout's shard field.
   * @throws ClockMovedBackError, SequenceExhaustedError, WorkerUnavailableError, TimestampOverflowError
   * @throws InvalidShardKeyError for an unusable key, or a key on a layout without a shard field
   */
  next(options?: NextIdOptions): bigint {
    if (options !== undefined) return this.shardBitsOf(options) | this.next();
    const now = this.clock.now();
    // The permit is asked once per issued time unit, not once per ID (see ASKED_ONCE_PER_UNIT).
    if (now >= this.lastStartMs && now < this.lastEndMs && this.sequence < this.maxSequence) {
      this.sequence++;
      this.issued++;
      return (this.id += this.step);
    }
    // Clock first, permit second: a pause between the two must not slip past the fence.
    return this.advance(ticksAtMs(this.layout, now), this.ceilingAt(now), this.maxSyncWaitMs);
  }

  /**
   * The permit's ceiling for a clock reading `now`, or none without a permit.
   *
   * ASKED_ONCE_PER_UNIT: the generator asks the permit only when a call would issue from a time unit other than
   * `last`, the unit of the last issued ID (a new unit, a clock behind `last`, a used-up sequence, the first ID
   * after an assignment). A call that continues the sequence of `last` is not asked. That is safe because every
   * uniqueness rule of the lease bounds a *timestamp*, not a moment:
   * - the floor (a later holder issues strictly above the ceiling recorded in Redis) and a loss's note compare
   *   timestamps; `last` was at most the confirmed ceiling when the permit allowed it, so a later holder stays
   *   above it however late this process issues more IDs in that unit;
   * - settling after a data loss and the time check bound the timestamps a holder from before the loss can issue:
   *   `last` passed the fence and the clock check at the moment the permit allowed it, and that moment is all the
   *   bound uses (`resolveClockBounds` in lease.settings.ts: the fence margin covers the clock bound on both sides,
   *   the clock-back tolerance and one unit), so a new holder's first timestamp lies above it;
   * - a loss, a switch and a stop never wait for the next ID: they assign the generator a refusing permit, and an
   *   assignment marks the sequence used up, so the very next call asks the permit and is refused.
   * What skipping the check allows is therefore only more IDs (higher sequences) in a unit already allowed, at most
   * `2^sequenceBits` of them, which no holder before or after can issue. A unit not yet issued always asks.
   */
  private ceilingAt(now: number): number {
    return this.permit === undefined ? NO_CEILING : this.permit.ceiling(now);
  }

  /** The shard field's bits for a call's options: 0 without a key. @throws InvalidShardKeyError */
  shardBitsOf(options: NextIdOptions): bigint {
    return shardFieldOf(this.layout, options);
  }

  /**
   * Like {@link next}, but never spins for the next time unit: a used-up sequence throws
   * {@link SequenceExhaustedError} at once, with the wait in `waitMs`. The building block of the async variants.
   */
  nextWithoutWaiting(options?: NextIdOptions): bigint {
    if (options !== undefined) return this.shardBitsOf(options) | this.nextWithoutWaiting();
    const now = this.clock.now();
    const t = ticksAtMs(this.layout, now);
    if (t === this.last && this.sequence < this.maxSequence) return this.issueInSameTick();
    return this.advance(t, this.ceilingAt(now), 0);
  }

  /** The next ID as a decimal string. */
  nextString(options?: NextIdOptions): string {
    return this.next(options).toString();
  }

  /** The next ID as a number; only for layouts of 53 bits or fewer. @throws UnsafeNumberError on wider layouts */
  nextNumber(options?: NextIdOptions): number {
    if (this.layout.totalBits > 53) throw new UnsafeNumberError(this.layout.totalBits);
    return Number(this.next(options));
  }

  /**
   * `count` IDs in one call, in increasing order. The clock is read once per time unit, not once per ID.
   *
   * The whole batch shares the synchronous wait bound of one {@link next} call: its waits for the next time unit
   * add up to `maxSyncWaitMs` at most, so a batch cannot spin longer than one `next()` may. A batch that needs more
   * time units than fit in that bound throws {@link BatchTooLargeError} before issuing anything;
   * {@link nextBatchAsync} takes any size. (The work of building the array grows with `count`, as any array does.)
   *
   * Should the clock stall mid-batch, it throws {@link SequenceExhaustedError}; the IDs drawn so far are discarded,
   * never reissued, and count in `stats().issued`, which counts IDs used up.
   */
  nextBatch(count: number, options?: NextIdOptions): bigint[] {
    if (options !== undefined) return withShard(this.shardBitsOf(options), this.nextBatch(count));
    assertBatchCount(count, 'nextBatch');
    if (count > this.maxSyncBatch) throw new BatchTooLargeError(count, this.maxSyncBatch, this.maxSyncWaitMs);
    // The first clock reading serves both the check and the first time unit.
    let reading: number | undefined = this.clock.now();
    this.assertBatchFitsWait(count, reading);
    const out: bigint[] = [];
    // One more millisecond, as in waitForNextTick: the wall clock counts whole ones.
    const deadline = this.clock.monotonicNow() + this.maxSyncWaitMs + 1;
    while (out.length < count) {
      const now = reading ?? this.clock.now();
      const t = ticksAtMs(this.layout, now);
      reading = undefined;
      out.push(
        t === this.last && this.sequence < this.maxSequence
          ? this.issueInSameTick()
          : this.advance(t, this.ceilingAt(now), Math.max(0, Math.ceil(deadline - this.clock.monotonicNow()))),
      );
      this.fillTick(out, count);
    }
    return out;
  }

  /**
   * Throws {@link SequenceExhaustedError} before drawing anything when the batch would need time units that start
   * later than `maxSyncWaitMs` from now, such as a batch begun late in a 1 s unit: drawn IDs would be thrown away.
   */
  private assertBatchFitsWait(count: number, now: number): void {
    const t = ticksAtMs(this.layout, now);
    // A clock behind the last timestamp borrows units without waiting, within the tolerance: nothing to check.
    if (t < this.last) return;
    const left = t === this.last ? this.maxSequence - this.sequence : this.perUnit;
    if (count <= left) return;
    const furtherUnits = Math.ceil((count - left) / this.perUnit);
    const waitMs = (t + furtherUnits) * this.unit + this.epoch - now;
    if (waitMs > this.maxSyncWaitMs) throw new SequenceExhaustedError(waitMs, this.maxSyncWaitMs);
  }

  /**
   * Appends to `out` the IDs left in the current time unit, up to `count` in all, without waiting: at least one
   * (none when `out` holds `count` already), or it throws like {@link nextWithoutWaiting}. The building block of
   * batches that wait asynchronously.
   */
  fillWithoutWaiting(out: bigint[], count: number): void {
    assertBatchCount(count, 'fillWithoutWaiting');
    if (out.length >= count) return;
    out.push(this.nextWithoutWaiting());
    this.fillTick(out, count);
  }

  /** `count` IDs in increasing order, waiting asynchronously (never blocking the event loop) between time units. */
  async nextBatchAsync(count: number, options?: NextIdOptions): Promise<bigint[]> {
    const shard = options === undefined ? 0n : this.shardBitsOf(options);
    assertBatchCount(count, 'nextBatchAsync');
    const out: bigint[] = [];
    while (out.length < count) await waitingForTheSequence(() => this.fillWithoutWaiting(out, count));
    return withShard(shard, out);
  }

  /** Like {@link next}, but waits asynchronously (never blocking the event loop) when the sequence is used up. */
  nextAsync(options?: NextIdOptions): Promise<bigint> {
    if (options !== undefined) return this.nextAsyncInShard(options);
    return waitingForTheSequence(() => this.nextWithoutWaiting());
  }

  private async nextAsyncInShard(options: NextIdOptions): Promise<bigint> {
    // The key is checked before any wait, so that a bad key fails at once.
    const shard = this.shardBitsOf(options);
    return shard | (await waitingForTheSequence(() => this.nextWithoutWaiting()));
  }

  /**
   * The most IDs a synchronous batch may ask for: the sequences of as many whole time units as `maxSyncWaitMs`
   * holds (at least one), so that its waits for the next unit fit in that bound.
   */
  get maxSyncBatch(): number {
    return this.perUnit * Math.max(1, Math.floor(this.maxSyncWaitMs / this.unit));
  }

  /**
   * The IDs a new time unit holds at least: `2^sequenceBits`, less the highest offset the sequence may start at
   * (`sequenceStart`), so at least half of them.
   */
  get perUnit(): number {
    return this.maxSequence + 2 - this.starts.span;
  }

  stats(): GeneratorStats {
    return { issued: this.issued, ...this.counters, lastTimestamp: this.last };
  }

  /**
   * The rest of the current tick's sequence, up to `count` IDs in `out`. No clock read: the tick was just
   * confirmed current (or borrowed within the clock-back tolerance) by the ID issued before.
   */
  private fillTick(out: bigint[], count: number): void {
    // Never negative: a sequence wound back would let `id` run past the sequence field into the worker bits.
    let room = Math.max(0, Math.min(this.maxSequence - this.sequence, count - out.length));
    this.sequence += room;
    this.issued += room;
    let id = this.id;
    const step = this.step;
    while (room-- > 0) out.push((id += step));
    this.id = id;
  }

  /** The slow path: a new tick, a used-up sequence or a clock that went back. */
  private advance(t: number, ceiling: number, maxWaitMs: number): bigint {
    if (t > this.last) {
      this.behind = false;
      return this.issueAt(t, ceiling);
    }
    if (t < this.last) {
      this.noteClockBack(t);
      if (this.sequence < this.maxSequence) return this.issueInSameTick();
      if (this.last + 1 - t > this.toleranceTicks) throw this.clockBackError(t, 1);
      return this.issueAt(this.last + 1, ceiling);
    }
    // t === last and the sequence is used up: wait for the next tick, then ask the permit again, since the lease
    // may have fenced during the wait.
    const next = this.waitForNextTick(maxWaitMs);
    return this.issueAt(next, this.ceilingAt(this.clock.now()));
  }

  private issueAt(t: number, ceiling: number): bigint {
    if (t > ceiling) {
      this.permit?.ceilingReached?.();
      throw new WorkerUnavailableError('ceiling');
    }
    if (t > this.layout.maxTimestamp) throw new TimestampOverflowError(new Date(this.layout.lastTimestampMs));
    this.setLast(t);
    this.issued++;
    // Only a new unit starts at an offset: the IDs of the unit before all lie below it whatever the offset.
    const start = this.starts.next();
    this.sequence = start;
    const id = (BigInt(t) << this.timestampShift) | this.node;
    return (this.id = start === 0 ? id : id | (BigInt(start) << this.sequenceShift));
  }

  /** Sets `last` and the wall-clock bounds of its unit. */
  private setLast(ticks: number): void {
    this.last = ticks;
    this.lastStartMs = ticks < 0 ? Number.NaN : this.epoch + ticks * this.unit;
    this.lastEndMs = this.lastStartMs + this.unit;
  }

  private issueInSameTick(): bigint {
    this.sequence++;
    this.issued++;
    return (this.id += this.step);
  }

  private noteClockBack(t: number): void {
    const behindMs = (this.last - t) * this.unit;
    if (!this.behind) {
      this.behind = true;
      this.counters.clockBackEvents++;
    }
    if (behindMs > this.counters.maxClockBackMs) this.counters.maxClockBackMs = behindMs;
    if (this.last - t > this.toleranceTicks) throw this.clockBackError(t);
  }

  /** `borrow`: the units beyond `last` the refused ID would have needed, reported as how far it would run ahead. */
  private clockBackError(t: number, borrow = 0): ClockMovedBackError {
    return new ClockMovedBackError((this.last - t) * this.unit, this.toleranceMs, (this.last + borrow - t) * this.unit);
  }

  /** Spins until the clock reaches the tick after `last`, for at most `maxWaitMs` of monotonic time. */
  private waitForNextTick(maxWaitMs: number): number {
    const target = this.last + 1;
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
      if (t < this.last) {
        // Stepped back while waiting: continue in clock-back mode.
        this.noteClockBack(t);
        if (this.last + 1 - t > this.toleranceTicks) throw this.clockBackError(t, 1);
        return target;
      }
      if (expired) throw new SequenceExhaustedError(waitMs, maxWaitMs);
    }
  }
}

/** Runs `attempt` until it does not find the sequence used up, sleeping (not spinning) until the next time unit. */
async function waitingForTheSequence<T>(attempt: () => T): Promise<T> {
  for (;;) {
    try {
      return attempt();
    } catch (error) {
      if (!(error instanceof SequenceExhaustedError)) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.ceil(error.waitMs))));
    }
  }
}
