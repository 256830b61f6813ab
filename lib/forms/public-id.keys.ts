import { createHmac } from 'node:crypto';
import { kindOf } from '../core/describe-input.js';
import { SnowflakeConfigError } from '../core/errors.js';
import type { Alphabet } from './alphabet.js';

/** The least key material a public-ID key may have: 128 bits, the key size of SipHash and of AES-128. */
export const MIN_KEY_BYTES = 16;

/**
 * One permutation a configured key reads or writes with: its tag (the character that opens every public ID it writes),
 * its round function and that function's key, derived from the secret with HMAC-SHA256 under labels of their own.
 *
 * @internal
 */
export interface DerivedKey {
  /** The digit value of the tag character. */
  readonly tag: number;
  /** `siphash-1-3` for public IDs written since version 3, `aes-128` for those written before (read only). */
  readonly round: 'siphash-1-3' | 'aes-128';
  /** 16 bytes: the round function's key. */
  readonly key: Buffer;
}

/** What a form writes with and reads with. @internal */
export interface KeyRing {
  /** The first key's permutation bound to the layout. */
  readonly writer: DerivedKey;
  /** Every key's current permutation, then every key's version-2 one, then (when legacy IDs are read) version 1. */
  readonly readers: readonly DerivedKey[];
}

/**
 * What a form's AES keys are derived from: `bound` names everything that gives a public ID its meaning (alphabet,
 * prefix, widths and the whole layout, epoch included), so that one secret used by two forms or two layouts gives
 * unrelated public IDs. `legacy`, when given, is the domain of earlier versions (alphabet, prefix and widths only),
 * whose public IDs are then read too.
 *
 * @internal
 */
export interface KeyDomains {
  readonly bound: string;
  readonly legacy?: string;
}

/**
 * Derives each key's tags and round-function keys. Each version of the derivation writes under a tag of its own,
 * the tag of the first version moved on by a fixed share of the alphabet (none, a half, a quarter), so that a public
 * ID's tag says which derivation wrote it and none is read by two permutations of one key:
 * - version 3 (writes): SipHash-1-3 round function, key bound to the whole layout, tag moved on by a quarter;
 * - version 2 (reads): AES-128 round function, key bound to the whole layout, tag moved on by half;
 * - version 1 (reads while `legacy` is given): AES-128, key bound to alphabet, prefix and widths only.
 *
 * @throws SnowflakeConfigError naming `<option>[i]` for a key too short, not a string or bytes, or whose tag is
 *   another key's
 */
export function deriveKeys(option: string, keys: unknown, alphabet: Alphabet, domains: KeyDomains): KeyRing {
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new SnowflakeConfigError(
      option,
      'expected a non-empty array of secrets (strings or bytes of at least 16 bytes, such as the output of ' +
        '`openssl rand -base64 32`); the first writes public IDs, all of them read.',
    );
  }
  const radix = alphabet.digits.length;
  const current: DerivedKey[] = [];
  const earlier: DerivedKey[] = [];
  const legacy: DerivedKey[] = [];
  keys.forEach((key: unknown, i) => {
    const path = `${option}[${i}]`;
    const secret = typeof key === 'string' ? Buffer.from(key, 'utf8') : key instanceof Uint8Array ? key : undefined;
    if (secret === undefined) {
      throw new SnowflakeConfigError(path, `expected a string or a Uint8Array, got ${kindOf(key)}.`);
    }
    if (secret.length < MIN_KEY_BYTES) {
      throw new SnowflakeConfigError(
        path,
        `the key has ${secret.length} bytes; use at least ${MIN_KEY_BYTES} random ones, such as the output of ` +
          '`openssl rand -base64 32`.',
      );
    }
    const legacyTag = hmac(secret, 'nestjs-snowflake/public-id/tag')[0] % radix;
    const tag = (legacyTag + Math.floor(radix / 4)) % radix;
    const same = current.findIndex((other) => other.tag === tag);
    if (same >= 0) {
      throw new SnowflakeConfigError(
        path,
        `its key tag ${JSON.stringify(alphabet.digits[tag])} is the tag of ${option}[${same}] (the same key twice, ` +
          `or a 1 in ${radix} coincidence): public IDs name their key by the tag, so generate another key for the ` +
          'newer of the two.',
      );
    }
    current.push({
      tag,
      round: 'siphash-1-3',
      key: hmac(secret, `nestjs-snowflake/public-id/v3/siphash-1-3/${domains.bound}`).subarray(0, 16),
    });
    earlier.push({
      tag: (legacyTag + Math.floor(radix / 2)) % radix,
      round: 'aes-128',
      key: hmac(secret, `nestjs-snowflake/public-id/v2/aes-128/${domains.bound}`).subarray(0, 16),
    });
    if (domains.legacy !== undefined) {
      legacy.push({
        tag: legacyTag,
        round: 'aes-128',
        key: hmac(secret, `nestjs-snowflake/public-id/aes-128/${domains.legacy}`).subarray(0, 16),
      });
    }
  });
  return { writer: current[0], readers: [...current, ...earlier, ...legacy] };
}

function hmac(secret: Uint8Array, label: string): Buffer {
  return createHmac('sha256', secret).update(label).digest();
}
