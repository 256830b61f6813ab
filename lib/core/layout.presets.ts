/** The built-in layouts, by name: the bits of each field, the epoch and the time unit. */
import type { LayoutOptions, LayoutPresetName } from './layout.js';

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
