import { bothClocks, type Clocks } from './clock.js';
import { ticksAtMs } from './time-units.js';
import { BatchTooLargeError, TimestampOverflowError, UnsafeNumberError, WorkerUnavailableError } from './errors.js';
import { checkBatchFitsWait, drawBatch, type UnitDraw } from './generator.batch.js';
import { IdBits } from './generator.bits.js';
import { ClockStalls, waitingForTheSequence } from './generator.clock-stall.js';
import { checkNodeFitsLayout, type Layout } from './layout.js';
import { ceilingOf, type IssuePermit } from './permit.js';
import { SequenceStarts } from './sequence-start.js';
import { shardFieldOf, withShard } from './shard-key.js';
import {
  assertBatchCount,
  sequenceStartOption,
  waitOptions,
  type GeneratorOptions,
  type GeneratorStats,
  type NextIdOptions,
} from './generator.options.js';

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
  private readonly bits: IdBits;
  /** One step of the sequence in the ID (`bits.step`), a field of its own for the hot path. */
  private readonly step: bigint;
  private readonly starts: SequenceStarts;
  /** The clock's stalls and steps back: the waits, the tolerance and their counters. */
  private readonly stalls: ClockStalls;
  private readonly maxSyncWaitMs: number;
  private permit: IssuePermit | undefined;
  /** The generator's issuing as a batch draws from it (generator.batch.ts). */
  private readonly unitDraw: UnitDraw = {
    issueBefore: (now, deadline) => {
      const t = ticksAtMs(this.layout, now);
      return t === this.last && this.sequence < this.maxSequence
        ? this.issueInSameTick()
        : this.advance(t, ceilingOf(this.permit, now), Math.max(0, Math.ceil(deadline - this.clock.monotonicNow())));
    },
    fillUnit: (out, count) => this.fillTick(out, count),
  };

  private node = 0n;
  private _workerId = 0;
  private _datacenterId = 0;
  /** The last issued timestamp `L`, in ticks. */
  private last = -1;
  private sequence = 0;
  /** The last issued ID of shard 0: `bits.id(last, node, sequence)`. */
  private id = 0n;
  /** IDs used up (`stats().issued`): a field of its own, as the hot path counts it. */
  private issued = 0;
  /** Unit `last` in wall-clock ms, `[lastStartMs, lastEndMs)`: two comparisons, not a division (NaN before any ID). */
  private lastStartMs = Number.NaN;
  private lastEndMs = Number.NaN;

  constructor(options: GeneratorOptions) {
    const { layout } = options;
    this.layout = layout;
    this.clock = bothClocks(options.clock);
    this.epoch = layout.epoch;
    this.unit = layout.timeUnitMs;
    this.maxSequence = layout.maxSequence;
    this.bits = new IdBits(layout);
    this.step = this.bits.step;
    this.starts = new SequenceStarts(sequenceStartOption(options.sequenceStart), layout.sequenceBits, options.random);
    const waits = waitOptions(options);
    this.stalls = new ClockStalls(layout, this.clock, waits.clockBackToleranceMs);
    this.maxSyncWaitMs = waits.maxSyncWaitMs;
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
    this.node = this.bits.node(datacenterId, workerId);
    this.permit = permit;
    // Standing at the floor with a used-up sequence makes the first ID land strictly above the floor.
    this.setLast(floor);
    this.sequence = this.maxSequence;
    this.id = floor < 0 ? 0n : this.bits.id(floor, this.node, this.maxSequence);
    this.stalls.caughtUp();
  }

  /**
   * The next ID; with `{ shardKey }`, carrying the key's shard in the layout's shard field.
   * @throws ClockMovedBackError, SequenceExhaustedError, WorkerUnavailableError, TimestampOverflowError
   * @throws InvalidShardKeyError for an unusable key, or a key on a layout without a shard field
   */
  next(options?: NextIdOptions): bigint {
    if (options !== undefined) return this.shardBitsOf(options) | this.next();
    const now = this.clock.now();
    // The permit is asked once per issued time unit, not once per ID (see ASKED_ONCE_PER_UNIT in permit.ts).
    if (now >= this.lastStartMs && now < this.lastEndMs && this.sequence < this.maxSequence) {
      this.sequence++;
      this.issued++;
      return (this.id += this.step);
    }
    // Clock first, permit second: a pause between the two must not slip past the fence.
    return this.advance(ticksAtMs(this.layout, now), ceilingOf(this.permit, now), this.maxSyncWaitMs);
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
    return this.advance(t, ceilingOf(this.permit, now), 0);
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
    const now = this.clock.now();
    const start = { last: this.last, leftInLast: this.maxSequence - this.sequence, perUnit: this.perUnit };
    checkBatchFitsWait(this.layout, start, count, now, this.maxSyncWaitMs);
    return drawBatch(this.unitDraw, this.clock, count, now, this.maxSyncWaitMs);
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
    return { issued: this.issued, ...this.stalls.counters, lastTimestamp: this.last };
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
      this.stalls.caughtUp();
      return this.issueAt(t, ceiling);
    }
    if (t < this.last) {
      this.stalls.noteClockBack(this.last, t);
      if (this.sequence < this.maxSequence) return this.issueInSameTick();
      this.stalls.checkBorrow(this.last, t);
      return this.issueAt(this.last + 1, ceiling);
    }
    // t === last and the sequence is used up: wait for the next tick, then ask the permit again, since the lease
    // may have fenced during the wait.
    const next = this.stalls.waitForNextTick(this.last, maxWaitMs);
    return this.issueAt(next, ceilingOf(this.permit, this.clock.now()));
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
    return (this.id = this.bits.id(t, this.node, start));
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
}
