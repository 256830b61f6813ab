/**
 * The layout of an ID: its options and the resolved layout with its shifts and limits. The built-in layouts are in
 * `layout.presets.ts`, the checks with their messages in `layout.checks.ts`; both are exported from here too.
 */
import { describeInput } from './describe-input.js';
import { SnowflakeConfigError } from './errors.js';
import { checkLayoutFields, checkLayoutShape, checkLifetime } from './layout.checks.js';
import { LAYOUT_PRESETS } from './layout.presets.js';

export { checkNodeFitsLayout } from './layout.checks.js';
export { DEFAULT_EPOCH, LAYOUT_PRESETS } from './layout.presets.js';

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

/** Capped at the largest instant a Date can hold, so that messages can always print the last timestamp. */
const MAX_DATE_MS = 8.64e15;

/**
 * Validates layout options once and derives shifts and limits. Every error names the option and the fix.
 *
 * @param options a preset name or layout options; a preset name `p` is short for `{ preset: p }`
 * @param now the current Unix time in ms, for the "epoch not in the future" and lifetime checks
 * @publicApi
 */
export function resolveLayout(options: LayoutOptions | LayoutPresetName = {}, now: number = Date.now()): Layout {
  if (typeof options === 'string') return resolveLayout({ preset: options }, now);
  checkLayoutShape(options);
  const presetName = options.preset ?? 'default';
  const preset = Object.hasOwn(LAYOUT_PRESETS, presetName) ? LAYOUT_PRESETS[presetName] : undefined;
  if (preset === undefined) {
    throw new SnowflakeConfigError(
      'layout.preset',
      `unknown preset ${describeInput(presetName)}; use one of ${Object.keys(LAYOUT_PRESETS).join(', ')}.`,
    );
  }
  const fields = {
    epoch: options.epoch instanceof Date ? options.epoch.getTime() : (options.epoch ?? preset.epoch),
    timeUnitMs: options.timeUnitMs ?? preset.timeUnitMs,
    timestampBits: options.timestampBits ?? preset.timestampBits,
    datacenterBits: options.datacenterBits ?? preset.datacenterBits,
    workerBits: options.workerBits ?? preset.workerBits,
    sequenceBits: options.sequenceBits ?? preset.sequenceBits,
    shardBits: options.shardBits ?? preset.shardBits,
    minLifetimeYears: options.minLifetimeYears ?? 10,
  };
  checkLayoutFields(fields, options, now);
  const { epoch, timeUnitMs, timestampBits, datacenterBits, workerBits, sequenceBits, shardBits } = fields;
  const totalBits = timestampBits + datacenterBits + workerBits + sequenceBits + shardBits;
  const maxTimestamp = 2 ** timestampBits - 1;
  const lastTimestampMs = Math.min(epoch + maxTimestamp * timeUnitMs, MAX_DATE_MS);
  checkLifetime(fields, lastTimestampMs, now);

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
