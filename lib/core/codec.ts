import { kindOf } from './describe-input.js';
import { InvalidSnowflakeError } from './errors.js';
import type { Layout } from './layout.js';

/**
 * The parts of an ID.
 *
 * @publicApi
 */
export interface SnowflakeParts {
  /** The ID itself. */
  id: bigint;
  /** The instant the ID was issued at (the start of its time unit), as Unix milliseconds. */
  timestamp: number;
  /** `timestamp` as a Date. */
  date: Date;
  datacenterId: number;
  workerId: number;
  sequence: number;
  /** The shard, on a layout with a shard field (`layout.shardBits > 0`); absent otherwise. */
  shard?: number;
}

/**
 * Input to {@link SnowflakeCodec.compose}: the instant as Unix ms or a Date; missing parts are 0.
 *
 * @publicApi
 */
export interface ComposeInput {
  timestamp: number | Date;
  datacenterId?: number;
  workerId?: number;
  sequence?: number;
  /** The shard, on a layout with a shard field. */
  shard?: number;
}

const DIGITS = /^[0-9]+$/;
/** 2^64 has 20 digits: a longer string is wider than any layout, and is refused before BigInt parses it. */
const MAX_DIGITS = 20;

/** The bounds {@link parseId} checks: a layout, or {@link ANY_LAYOUT} where none is known yet. @internal */
export type IdBounds = Pick<Layout, 'maxId' | 'totalBits'>;

/**
 * Every ID any layout can issue (layouts fit 63 bits, a signed 64-bit integer): the bounds of a reading that has no
 * layout (a DTO transform, an ID written to a column); the layout is checked later where there is one.
 */
export const ANY_LAYOUT: IdBounds = Object.freeze({ maxId: (1n << 63n) - 1n, totalBits: 63 });

/**
 * Parses an ID given as a bigint, a decimal string or a safe-integer number, checking it fits the bounds. The one
 * reading of a raw ID: `decode()`, `ParseSnowflakeIdPipe`, the validators and the GraphQL scalar all call it.
 *
 * - a string: ASCII digits only, leading zeros read (`"007"` is 7), any length; no sign, space, radix prefix,
 *   exponent, separator or other script's digits;
 * - a number: a safe integer that is not negative, `-0` included (as `"-0"` is refused, so is the number);
 * - a bigint: not negative.
 *
 * @throws InvalidSnowflakeError when the input is none of these, or wider than the bounds
 */
export function parseId(input: unknown, bounds: IdBounds): bigint {
  let id: bigint;
  if (typeof input === 'bigint') {
    id = input;
  } else if (typeof input === 'string') {
    if (!DIGITS.test(input)) {
      throw new InvalidSnowflakeError(input, 'expected a non-negative decimal integer (digits only).');
    }
    let significant = 0;
    while (significant < input.length - 1 && input.charCodeAt(significant) === 0x30) significant++;
    if (input.length - significant > MAX_DIGITS) throw new InvalidSnowflakeError(input, wider(bounds));
    id = BigInt(input.slice(significant));
  } else if (typeof input === 'number') {
    if (!Number.isInteger(input)) {
      throw new InvalidSnowflakeError(input, 'expected an integer.');
    }
    if (!Number.isSafeInteger(input)) {
      throw new InvalidSnowflakeError(
        input,
        'the number lies beyond 2^53, so it was already rounded; pass the ID as a string or a bigint.',
      );
    }
    if (Object.is(input, -0)) throw new InvalidSnowflakeError(input, 'IDs have no sign, so -0 is refused as "-0" is.');
    id = BigInt(input);
  } else {
    throw new InvalidSnowflakeError(input, `expected a bigint, a decimal string or a number, got ${kindOf(input)}.`);
  }
  if (id < 0n) throw new InvalidSnowflakeError(input, 'IDs are never negative.');
  if (id > bounds.maxId) {
    throw new InvalidSnowflakeError(input, wider(bounds));
  }
  return id;
}

const wider = (bounds: IdBounds): string =>
  bounds === ANY_LAYOUT
    ? `wider than 63 bits, more than any layout's IDs have (a signed 64-bit integer holds at most ${ANY_LAYOUT.maxId}).`
    : `wider than the layout's ${bounds.totalBits} bits (largest ID ${bounds.maxId}).`;

/**
 * Decodes, composes and bounds IDs of one layout. Pure: no clock, no state.
 *
 * @publicApi
 */
export class SnowflakeCodec {
  private readonly timestampShift: bigint;
  private readonly datacenterShift: bigint;
  private readonly workerShift: bigint;
  private readonly sequenceShift: bigint;
  private readonly lowMask: bigint;

  constructor(readonly layout: Layout) {
    this.timestampShift = BigInt(layout.timestampShift);
    this.datacenterShift = BigInt(layout.datacenterShift);
    this.workerShift = BigInt(layout.workerShift);
    this.sequenceShift = BigInt(layout.sequenceShift);
    this.lowMask = (1n << this.timestampShift) - 1n;
  }

  /** Splits an ID into its parts. @throws InvalidSnowflakeError on malformed input */
  decode(input: bigint | string | number): SnowflakeParts {
    const id = parseId(input, this.layout);
    const { layout } = this;
    const ticks = Number(id >> this.timestampShift);
    const timestamp = layout.epoch + ticks * layout.timeUnitMs;
    // Only a layout whose timestamp field outlasts the Date range can hold such an ID; no clock ever issues one.
    if (timestamp > layout.lastTimestampMs) {
      throw new InvalidSnowflakeError(
        input,
        `its time lies beyond ${new Date(layout.lastTimestampMs).toISOString()}, the last instant the layout can express.`,
      );
    }
    const parts: SnowflakeParts = {
      id,
      timestamp,
      date: new Date(timestamp),
      datacenterId: Number((id >> this.datacenterShift) & BigInt(layout.maxDatacenterId)),
      workerId: Number((id >> this.workerShift) & BigInt(layout.maxWorkerId)),
      sequence: Number((id >> this.sequenceShift) & BigInt(layout.maxSequence)),
    };
    // Only layouts with the field report it, so decoded IDs of other layouts keep the shape they always had.
    if (layout.shardBits > 0) parts.shard = Number(id & BigInt(layout.maxShard));
    return parts;
  }

  /**
   * The shard an ID was issued for: its lowest `shardBits` bits, read without a lookup (`id % 2^shardBits` gives
   * the same). @throws InvalidSnowflakeError on malformed input or on a layout without a shard field
   */
  shardOf(input: bigint | string | number): number {
    const id = parseId(input, this.layout);
    if (this.layout.shardBits === 0) {
      throw new InvalidSnowflakeError(
        input,
        "the layout has no shard field. Use the 'sharded' preset or set `layout.shardBits`.",
      );
    }
    return Number(id & BigInt(this.layout.maxShard));
  }

  /** Builds an ID from its parts; the inverse of {@link decode}. @throws InvalidSnowflakeError when a part does not fit */
  compose(parts: ComposeInput): bigint {
    const { layout } = this;
    if (parts === null || typeof parts !== 'object') {
      throw new InvalidSnowflakeError(
        parts,
        'compose() expects `{ timestamp, datacenterId?, workerId?, sequence?, shard? }`.',
      );
    }
    const ticks = this.ticksOf(parts.timestamp, 'floor');
    const datacenterId = this.field(parts, 'datacenterId', layout.maxDatacenterId);
    const workerId = this.field(parts, 'workerId', layout.maxWorkerId);
    const sequence = this.field(parts, 'sequence', layout.maxSequence);
    const shard = this.field(parts, 'shard', layout.maxShard);
    return (
      (BigInt(ticks) << this.timestampShift) |
      (BigInt(datacenterId) << this.datacenterShift) |
      (BigInt(workerId) << this.workerShift) |
      (BigInt(sequence) << this.sequenceShift) |
      BigInt(shard)
    );
  }

  /**
   * The smallest ID any worker can issue at or after `date` (within the same time unit). With {@link maxIdAt}
   * it turns a time range into `WHERE id BETWEEN :min AND :max`. An instant before the epoch gives the first ID
   * (every ID lies after it); one after the layout's last instant has no ID and throws.
   */
  minIdAt(date: Date | number): bigint {
    const from = this.instantMs(date) < this.layout.epoch ? this.layout.epoch : date;
    return BigInt(this.ticksOf(from, 'floor')) << this.timestampShift;
  }

  /**
   * The largest ID any worker can issue in the time unit that contains `date`. An instant after the layout's last
   * one gives the last ID (every ID lies before it); one before the epoch has no ID and throws.
   */
  maxIdAt(date: Date | number): bigint {
    const to = this.instantMs(date) > this.layout.lastTimestampMs ? this.layout.lastTimestampMs : date;
    return (BigInt(this.ticksOf(to, 'floor')) << this.timestampShift) | this.lowMask;
  }

  /** Converts Unix ms to the layout's timestamp ticks, rejecting instants outside the field. */
  ticksOf(time: Date | number, round: 'floor'): number {
    const ms = this.instantMs(time);
    const ticks = Math[round]((ms - this.layout.epoch) / this.layout.timeUnitMs);
    if (ticks < 0 || ticks > this.layout.maxTimestamp) {
      throw new InvalidSnowflakeError(
        time,
        `it lies outside the layout's time range (${new Date(this.layout.epoch).toISOString()} to ` +
          `${new Date(this.layout.lastTimestampMs).toISOString()}).`,
        'instant',
      );
    }
    return ticks;
  }

  private instantMs(time: Date | number): number {
    const ms = time instanceof Date ? time.getTime() : time;
    if (typeof ms !== 'number' || !Number.isFinite(ms)) {
      throw new InvalidSnowflakeError(time, 'expected a valid Date or Unix milliseconds.', 'instant');
    }
    return ms;
  }

  private field(parts: ComposeInput, name: 'datacenterId' | 'workerId' | 'sequence' | 'shard', max: number): number {
    const value = parts[name] ?? 0;
    if (!Number.isInteger(value) || value < 0 || value > max) {
      throw new InvalidSnowflakeError(value, `\`${name}\` must be an integer from 0 to ${max} in this layout.`);
    }
    return value;
  }
}
