import { describeInput } from './describe-input.js';
import { InvalidShardKeyError, SnowflakeConfigError } from './errors.js';
import type { NextIdOptions } from './generator.options.js';

/**
 * A business key a shard is derived from: a user ID, a tenant, an account number.
 *
 * - a string is hashed as its UTF-8 bytes, as given (no trimming, no case folding, no Unicode normalisation);
 * - an integer (a safe-integer `number` or a `bigint`) as its decimal text, so `42`, `42n` and `'42'` share a shard,
 *   whichever type a driver hands back for a BIGINT column;
 * - a `Uint8Array` (a `Buffer`) as its bytes.
 *
 * Anything else (a fraction, an unsafe number, a boolean, an object, `null`) is refused with
 * {@link InvalidShardKeyError}: a key that cannot be written the same way in every language has no stable shard.
 *
 * @publicApi
 */
export type ShardKey = string | number | bigint | Uint8Array;

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = -MAX_SAFE;

/**
 * FNV-1a, 32 bits (Fowler, Noll, Vo; draft-eastlake-fnv), of a key's canonical form (see {@link ShardKey}), as an
 * unsigned 32-bit integer. The published vectors hold: `''` → `0x811c9dc5`, `'a'` → `0xe40c292c`, `'foobar'` →
 * `0xbf9cf968`. Part of the ID format: it never changes within a major version.
 *
 * @throws InvalidShardKeyError for a key of another type
 * @publicApi
 */
export function shardKeyHash(key: ShardKey): number {
  if (typeof key === 'string') return fnv1aUtf8(key);
  if (typeof key === 'bigint') {
    // The same decimal text; a number prints it several times faster than a bigint does.
    const small = key >= MIN_SAFE && key <= MAX_SAFE;
    return fnv1aUtf8(small ? String(Number(key)) : key.toString());
  }
  if (typeof key === 'number') {
    if (!Number.isSafeInteger(key)) {
      throw new InvalidShardKeyError(
        key,
        'a number key must be a safe integer; pass a fraction or a larger number as a string or a bigint.',
      );
    }
    // `String(-0)` is '0' already; the decimal text of a safe integer has no exponent.
    return fnv1aUtf8(String(key));
  }
  if (key instanceof Uint8Array) {
    let hash = FNV_OFFSET_BASIS;
    for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key[i], FNV_PRIME);
    return hash >>> 0;
  }
  throw new InvalidShardKeyError(key, 'expected a string, an integer (number or bigint) or a Uint8Array.');
}

/**
 * The shard of a key in a field of `shardBits` bits: {@link shardKeyHash} xor-folded to the field's width, as the
 * FNV authors advise for hashes shorter than 32 bits, `((h >>> bits) ^ h) & (2^bits - 1)`, so that the high bits of
 * the hash count too. A key has the same shard in every process, on every version and in any language that
 * implements these two lines.
 *
 * @throws InvalidShardKeyError for a key of another type
 * @publicApi
 */
export function shardOfKey(key: ShardKey, shardBits: number): number {
  if (shardBits === 0) return 0;
  const hash = shardKeyHash(key);
  return ((hash >>> shardBits) ^ hash) & ((1 << shardBits) - 1);
}

/** FNV-1a over the UTF-8 encoding of `text`, encoding on the fly so no byte array is allocated. */
function fnv1aUtf8(text: string): number {
  let hash = FNV_OFFSET_BASIS;
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    if (code < 0x80) {
      hash = Math.imul(hash ^ code, FNV_PRIME);
      continue;
    }
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    // A lone surrogate is encoded as U+FFFD, as TextEncoder and every UTF-8 encoder that refuses invalid text do.
    if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd;
    if (code < 0x800) {
      hash = Math.imul(hash ^ (0xc0 | (code >> 6)), FNV_PRIME);
    } else if (code < 0x10000) {
      hash = Math.imul(hash ^ (0xe0 | (code >> 12)), FNV_PRIME);
      hash = Math.imul(hash ^ (0x80 | ((code >> 6) & 0x3f)), FNV_PRIME);
    } else {
      hash = Math.imul(hash ^ (0xf0 | (code >> 18)), FNV_PRIME);
      hash = Math.imul(hash ^ (0x80 | ((code >> 12) & 0x3f)), FNV_PRIME);
      hash = Math.imul(hash ^ (0x80 | ((code >> 6) & 0x3f)), FNV_PRIME);
    }
    hash = Math.imul(hash ^ (0x80 | (code & 0x3f)), FNV_PRIME);
  }
  return hash >>> 0;
}

/**
 * The shard of `key` in `layout`, for the generator and the integrations.
 *
 * @throws InvalidShardKeyError for an unusable key, or when the layout has no shard field
 * @internal
 */
export function shardInLayout(layout: { readonly shardBits: number }, key: ShardKey): number {
  if (layout.shardBits === 0) {
    throw new InvalidShardKeyError(
      key,
      "the layout has no shard field to hold it. Use the 'sharded' preset or set `layout.shardBits`.",
    );
  }
  return shardOfKey(key, layout.shardBits);
}

/**
 * The shard field's bits for a call's options: 0 without a key.
 * @throws InvalidShardKeyError for an empty or unusable key, or a key on a layout without a shard field
 * @internal
 */
export function shardFieldOf(layout: { readonly shardBits: number }, options: NextIdOptions): bigint {
  if (typeof options !== 'object' || options === null) {
    throw new SnowflakeConfigError(
      'options',
      `expected an object such as { shardKey }, or nothing, got ${describeInput(options)}.`,
    );
  }
  // `in`, not an own property: a key may come from a getter of the options' class.
  if (!('shardKey' in options)) return 0n;
  const key = options.shardKey;
  if (key === undefined || key === null) {
    throw new InvalidShardKeyError(
      key,
      '`shardKey` is given but empty; pass the key, or leave the option out for an ID without a shard (shard 0).',
    );
  }
  return BigInt(shardInLayout(layout, key));
}

/** Sets the shard field of every ID in `ids` (issued with shard 0) to `shard`. @internal */
export function withShard(shard: bigint, ids: bigint[]): bigint[] {
  if (shard !== 0n) for (let i = 0; i < ids.length; i++) ids[i] |= shard;
  return ids;
}
