import { describeInput } from './describe-input.js';
import { SnowflakeConfigError } from './errors.js';
import { isPlainObject, rejectUnknownKeys } from './option-checks.js';

/** Time units a layout may count in, in milliseconds. */
export type TimeUnitMs = 1 | 10 | 1000;

/** Names of the built-in layouts. See {@link LAYOUT_PRESETS}. */
export type LayoutPresetName = 'default' | 'twitter' | 'js-safe' | 'sharded';

/**
 * The bit layout of an ID, most significant first: `[sign 0][timestamp][datacenter][worker][sequence][shard]`. The
 * shard field is empty (0 bits) unless the layout asks for one, which leaves the classic snowflake layout.
 *
 * @publicApi
 */
export interface LayoutOptions {
  /** Start from a preset; any field given here overrides it. @default 'default' */
  preset?: LayoutPresetName;
  /** The instant timestamps count from, as Unix milliseconds or a Date. Must not lie in the future. */
  epoch?: number | Date;
  /** The length of one timestamp tick in milliseconds. @default 1 */
  timeUnitMs?: TimeUnitMs;
  timestampBits?: number;
  datacenterBits?: number;
  workerBits?: number;
  sequenceBits?: number;
  /**
   * The lowest bits of an ID, holding a shard derived from a business key (`next({ shardKey })`), so that
   * `id % 2^k` (for any `k` up to `shardBits`) routes an ID to its key's shard. @default 0 (no shard field)
   */
  shardBits?: number;
  /** The timestamp field must last at least this many years from now. @default 10 */
  minLifetimeYears?: number;
}

/**
 * A validated layout with its derived shifts and limits. Immutable; create it with {@link resolveLayout}.
 *
 * @publicApi
 */
export interface Layout {
  readonly epoch: number;
  readonly timeUnitMs: TimeUnitMs;
  readonly timestampBits: number;
  readonly datacenterBits: number;
  readonly workerBits: number;
  readonly sequenceBits: number;
  /** Bits of the shard field, the lowest of the ID; 0 when the layout has none. */
  readonly shardBits: number;
  /** Total bits of an ID (the sign bit is never used). */
  readonly totalBits: number;
  readonly maxTimestamp: number;
  readonly maxDatacenterId: number;
  readonly maxWorkerId: number;
  readonly maxSequence: number;
  /** The largest shard; 0 when the layout has no shard field. */
  readonly maxShard: number;
  /** Where the sequence starts: `shardBits`, since the shard field lies below it. */
  readonly sequenceShift: number;
  readonly workerShift: number;
  readonly datacenterShift: number;
  readonly timestampShift: number;
  /** The largest ID the layout can hold. */
  readonly maxId: bigint;
  /** The last instant the timestamp field can express, as Unix milliseconds. */
  readonly lastTimestampMs: number;
}

type LayoutFields = Required<Omit<LayoutOptions, 'preset' | 'epoch' | 'minLifetimeYears'>> & { epoch: number };

/** 2026-01-01T00:00:00.000Z: the epoch of the `default` and `js-safe` presets. */
export const DEFAULT_EPOCH = Date.UTC(2026, 0, 1);

/**
 * The built-in layouts.
 *
 * - `twitter`: Twitter's IdWorker, bit for bit: `((t - 1288834974657) << 22) | (dc << 17) | (worker << 12) | seq`.
 * - `default`: 41 timestamp bits of 1 ms from 2026 (lasting until 2095), no datacenter field, 10 worker bits
 *   (1,024 workers, all handed out by the lease) and 12 sequence bits (4,096,000 IDs/s per worker).
 * - `js-safe`: 53 bits in all, so every ID is exact as a JS number and in JSON. 38 timestamp bits of 10 ms last
 *   87 years from 2026; 9 sequence bits give 51,200 IDs/s per worker; 6 worker bits leave room for 64 workers.
 *   A 1 s unit would allow more workers, but would make a burst wait up to a second and order IDs only by the second.
 * - `sharded`: `default` with a 4-bit shard field (16 shards) in the lowest bits, paid for with 2 worker bits
 *   (256 workers) and 2 sequence bits (1,024,000 IDs/s per worker). The sequence is shared by the shards, so IDs
 *   of one worker still strictly increase whatever their shards.
 *
 * @publicApi
 */
export const LAYOUT_PRESETS: Readonly<Record<LayoutPresetName, Readonly<LayoutFields>>> = Object.freeze({
  twitter: Object.freeze({
    epoch: 1288834974657,
    timeUnitMs: 1,
    timestampBits: 41,
    datacenterBits: 5,
    workerBits: 5,
    sequenceBits: 12,
    shardBits: 0,
  }),
  default: Object.freeze({
    epoch: DEFAULT_EPOCH,
    timeUnitMs: 1,
    timestampBits: 41,
    datacenterBits: 0,
    workerBits: 10,
    sequenceBits: 12,
    shardBits: 0,
  }),
  'js-safe': Object.freeze({
    epoch: DEFAULT_EPOCH,
    timeUnitMs: 10,
    timestampBits: 38,
    datacenterBits: 0,
    workerBits: 6,
    sequenceBits: 9,
    shardBits: 0,
  }),
  sharded: Object.freeze({
    epoch: DEFAULT_EPOCH,
    timeUnitMs: 1,
    timestampBits: 41,
    datacenterBits: 0,
    workerBits: 8,
    sequenceBits: 10,
    shardBits: 4,
  }),
});

const MS_PER_YEAR = 365.25 * 24 * 3600 * 1000;
const MS_PER_DAY = 24 * 3600 * 1000;
const MAX_DATE_MS = 8.64e15;
const TIME_UNITS: readonly number[] = [1, 10, 1000];
/** Every key of {@link LayoutOptions}; a `Record` so that a key added there must be added here. */
const LAYOUT_KEYS: readonly string[] = Object.keys({
  preset: true,
  epoch: true,
  timeUnitMs: true,
  timestampBits: true,
  datacenterBits: true,
  workerBits: true,
  sequenceBits: true,
  shardBits: true,
  minLifetimeYears: true,
} satisfies Record<keyof LayoutOptions, true>);

/**
 * Validates layout options once and derives shifts and limits. Every error names the option and the fix.
 *
 * @param options a preset name or layout options; a preset name `p` is short for `{ preset: p }`
 * @param now the current Unix time in ms, for the "epoch not in the future" and lifetime checks
 * @publicApi
 */
export function resolveLayout(options: LayoutOptions | LayoutPresetName = {}, now: number = Date.now()): Layout {
  if (typeof options === 'string') return resolveLayout({ preset: options }, now);
  checkShape(options);
  const presetName = options.preset ?? 'default';
  const preset = Object.hasOwn(LAYOUT_PRESETS, presetName) ? LAYOUT_PRESETS[presetName] : undefined;
  if (preset === undefined) {
    throw new SnowflakeConfigError(
      'layout.preset',
      `unknown preset ${describeInput(presetName)}; use one of ${Object.keys(LAYOUT_PRESETS).join(', ')}.`,
    );
  }
  const epoch = options.epoch instanceof Date ? options.epoch.getTime() : (options.epoch ?? preset.epoch);
  const timeUnitMs = options.timeUnitMs ?? preset.timeUnitMs;
  const timestampBits = options.timestampBits ?? preset.timestampBits;
  const datacenterBits = options.datacenterBits ?? preset.datacenterBits;
  const workerBits = options.workerBits ?? preset.workerBits;
  const sequenceBits = options.sequenceBits ?? preset.sequenceBits;
  const shardBits = options.shardBits ?? preset.shardBits;
  const minLifetimeYears = options.minLifetimeYears ?? 10;

  if (!Number.isSafeInteger(epoch) || epoch < 0) {
    throw new SnowflakeConfigError(
      'layout.epoch',
      `expected Unix milliseconds (a non-negative integer) or a Date, got ${describeInput(options.epoch)}.`,
    );
  }
  if (epoch > now) {
    throw new SnowflakeConfigError(
      'layout.epoch',
      `${new Date(epoch).toISOString()} lies in the future; choose an epoch in the past, such as ${new Date(DEFAULT_EPOCH).toISOString()}.`,
    );
  }
  if (!TIME_UNITS.includes(timeUnitMs)) {
    throw new SnowflakeConfigError(
      'layout.timeUnitMs',
      `expected 1, 10 or 1000 (milliseconds), got ${describeInput(timeUnitMs)}.`,
    );
  }
  // Datacenter, worker and sequence values are JS numbers handled with 32-bit operations, hence 31 bits at most.
  checkBits('layout.timestampBits', timestampBits, 1, 62);
  checkBits('layout.datacenterBits', datacenterBits, 0, 31);
  checkBits('layout.workerBits', workerBits, 0, 31);
  checkBits('layout.sequenceBits', sequenceBits, 1, 31);
  // A shard is reduced from a 32-bit hash, and 16 bits (65,536 shards) is more than any database is split into.
  checkBits('layout.shardBits', shardBits, 0, 16);
  const totalBits = timestampBits + datacenterBits + workerBits + sequenceBits + shardBits;
  if (totalBits > 63) {
    const shard = shardBits > 0 ? ` + shard ${shardBits}` : '';
    throw new SnowflakeConfigError(
      'layout',
      `the fields add up to ${totalBits} bits (timestamp ${timestampBits} + datacenter ${datacenterBits} + worker ${workerBits} + sequence ${sequenceBits}${shard}); ` +
        'at most 63 fit a signed 64-bit integer. Take bits from one of the fields.',
    );
  }
  if (typeof minLifetimeYears !== 'number' || !(minLifetimeYears >= 0)) {
    throw new SnowflakeConfigError(
      'layout.minLifetimeYears',
      `expected a non-negative number of years, got ${describeInput(minLifetimeYears)}.`,
    );
  }

  const maxTimestamp = 2 ** timestampBits - 1;
  // Capped at the largest instant a Date can hold, so that messages can always print it.
  const lastTimestampMs = Math.min(epoch + maxTimestamp * timeUnitMs, MAX_DATE_MS);
  const requiredUntil = now + minLifetimeYears * MS_PER_YEAR;
  const field = `${timestampBits} bits of ${timeUnitMs} ms from ${new Date(epoch).toISOString()}`;
  if (lastTimestampMs < now) {
    throw new SnowflakeConfigError(
      'layout.timestampBits',
      `${field} already ran out on ${new Date(lastTimestampMs).toISOString()}, so no ID could be issued now. ` +
        'Use a later `layout.epoch` (up to now), more `layout.timestampBits`, or a longer `layout.timeUnitMs`.',
    );
  }
  if (lastTimestampMs < requiredUntil) {
    throw new SnowflakeConfigError(
      'layout.timestampBits',
      `${field} run out on ${new Date(lastTimestampMs).toISOString()}, ` +
        `${timeLeft(lastTimestampMs - now)} from now; at least ${minLifetimeYears} are required. Add timestamp bits, use a later epoch or a longer time unit, ` +
        'or lower `layout.minLifetimeYears`.',
    );
  }

  const sequenceShift = shardBits;
  const workerShift = sequenceShift + sequenceBits;
  const datacenterShift = workerShift + workerBits;
  const timestampShift = datacenterShift + datacenterBits;
  return Object.freeze({
    epoch,
    timeUnitMs,
    timestampBits,
    datacenterBits,
    workerBits,
    sequenceBits,
    shardBits,
    totalBits,
    maxTimestamp,
    maxDatacenterId: 2 ** datacenterBits - 1,
    maxWorkerId: 2 ** workerBits - 1,
    maxSequence: 2 ** sequenceBits - 1,
    maxShard: 2 ** shardBits - 1,
    sequenceShift,
    workerShift,
    datacenterShift,
    timestampShift,
    maxId: (1n << BigInt(totalBits)) - 1n,
    lastTimestampMs,
  });
}

/** Rejects a layout that is not an object, and keys a layout does not have (such as a misspelt `sequenceBit`). */
function checkShape(options: unknown): asserts options is LayoutOptions {
  const allowed = `a preset name (${Object.keys(LAYOUT_PRESETS).join(', ')}) or an object with the keys ${LAYOUT_KEYS.join(', ')}`;
  // A Date or another class instance has no own layout keys, and would pass as the default layout.
  if (!isPlainObject(options)) {
    throw new SnowflakeConfigError('layout', `expected ${allowed}; got ${describeValue(options)}.`);
  }
  rejectUnknownKeys('layout', options, LAYOUT_KEYS, 'a layout');
}

function describeValue(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') {
    return `${describeInput(value)} (${typeof value})`;
  }
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value !== 'object') return `a ${typeof value}`;
  return value instanceof Date ? 'a Date' : 'an instance of a class';
}

/** A positive span of time, in words precise enough for an error message. */
function timeLeft(ms: number): string {
  if (ms >= 0.1 * MS_PER_YEAR) return `${(ms / MS_PER_YEAR).toFixed(1)} years`;
  if (ms >= MS_PER_DAY) return `${Math.floor(ms / MS_PER_DAY)} days`;
  return 'less than a day';
}

function checkBits(option: string, value: unknown, min: number, max: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new SnowflakeConfigError(
      option,
      `expected an integer number of bits from ${min} to ${max}, got ${describeInput(value)}.`,
    );
  }
}

/**
 * Checks that a datacenter and worker ID fit the layout's fields.
 *
 * @publicApi
 */
export function checkNodeFitsLayout(layout: Layout, datacenterId: number, workerId: number): void {
  if (!Number.isInteger(datacenterId) || datacenterId < 0 || datacenterId > layout.maxDatacenterId) {
    throw new SnowflakeConfigError(
      'datacenterId',
      `${describeInput(datacenterId)} does not fit ${layout.datacenterBits} datacenter bits (0 to ${layout.maxDatacenterId}). ` +
        'Pick a smaller ID or give the layout more `datacenterBits`.',
    );
  }
  if (!Number.isInteger(workerId) || workerId < 0 || workerId > layout.maxWorkerId) {
    throw new SnowflakeConfigError(
      'workerId',
      `${describeInput(workerId)} does not fit ${layout.workerBits} worker bits (0 to ${layout.maxWorkerId}). ` +
        'Pick a smaller ID or give the layout more `workerBits`.',
    );
  }
}
