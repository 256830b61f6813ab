/**
 * The checks of a layout, each error naming the option and the fix: the shape of the options, the range of every
 * field, the lifetime of the timestamp field, and whether a node's IDs fit it.
 */
import { describeInput } from './describe-input.js';
import { SnowflakeConfigError } from './errors.js';
import type { Layout, LayoutOptions } from './layout.js';
import { DEFAULT_EPOCH, LAYOUT_PRESETS } from './layout.presets.js';
import { isPlainObject, rejectUnknownKeys } from './option-checks.js';

const MS_PER_YEAR = 365.25 * 24 * 3600 * 1000;
const MS_PER_DAY = 24 * 3600 * 1000;
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

/** The fields of a layout as given or taken from its preset, before any is checked. */
export interface LayoutFieldValues {
  epoch: number;
  timeUnitMs: number;
  timestampBits: number;
  datacenterBits: number;
  workerBits: number;
  sequenceBits: number;
  shardBits: number;
  minLifetimeYears: number;
}

/**
 * Checks every field's range, and that they fit 63 bits together.
 *
 * @param options the options as given, whose `epoch` the message quotes (read only when it is wrong)
 * @param now the current Unix time in ms: an epoch must not lie after it
 */
export function checkLayoutFields(fields: LayoutFieldValues, options: LayoutOptions, now: number): void {
  const { epoch, timeUnitMs, timestampBits, datacenterBits, workerBits, sequenceBits, shardBits, minLifetimeYears } =
    fields;
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
}

/**
 * Checks that the timestamp field has not run out and lasts at least `minLifetimeYears` from now.
 *
 * @param lastTimestampMs the last instant the field can express, as Unix ms
 */
export function checkLifetime(fields: LayoutFieldValues, lastTimestampMs: number, now: number): void {
  const { epoch, timeUnitMs, timestampBits, minLifetimeYears } = fields;
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
}

/** Rejects a layout that is not an object, and keys a layout does not have (such as a misspelt `sequenceBit`). */
export function checkLayoutShape(options: unknown): asserts options is LayoutOptions {
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
