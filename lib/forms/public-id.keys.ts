import { createHmac } from 'node:crypto';
import { SnowflakeConfigError } from '../core/errors.js';
import type { Alphabet } from './alphabet.js';

/** The least key material a public-ID key may have: 128 bits, AES-128's own key size. */
export const MIN_KEY_BYTES = 16;

/**
 * One configured key: its tag (the character that opens every public ID it writes) and the AES key of its
 * permutation, both derived from the secret with HMAC-SHA256 under labels of their own.
 *
 * @internal
 */
export interface DerivedKey {
  /** The digit value of the tag character. */
  readonly tag: number;
  readonly aesKey: Buffer;
}

/**
 * Derives each key's tag and AES key. The AES key also depends on the form's domain (prefix, alphabet, widths), so
 * that one secret used for two forms gives unrelated public IDs.
 *
 * @throws SnowflakeConfigError naming `<option>[i]` for a key too short, not a string or bytes, or whose tag is
 *   another key's
 */
export function deriveKeys(option: string, keys: unknown, alphabet: Alphabet, domain: string): DerivedKey[] {
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new SnowflakeConfigError(
      option,
      'expected a non-empty array of secrets (strings or bytes of at least 16 bytes, such as the output of ' +
        '`openssl rand -base64 32`); the first writes public IDs, all of them read.',
    );
  }
  const derived: DerivedKey[] = [];
  keys.forEach((key: unknown, i) => {
    const path = `${option}[${i}]`;
    const secret = typeof key === 'string' ? Buffer.from(key, 'utf8') : key instanceof Uint8Array ? key : undefined;
    if (secret === undefined) {
      throw new SnowflakeConfigError(path, `expected a string or a Uint8Array, got ${typeof key}.`);
    }
    if (secret.length < MIN_KEY_BYTES) {
      throw new SnowflakeConfigError(
        path,
        `the key has ${secret.length} bytes; use at least ${MIN_KEY_BYTES} random ones, such as the output of ` +
          '`openssl rand -base64 32`.',
      );
    }
    const tag = hmac(secret, 'nestjs-snowflake/public-id/tag')[0] % alphabet.digits.length;
    const same = derived.findIndex((other) => other.tag === tag);
    if (same >= 0) {
      throw new SnowflakeConfigError(
        path,
        `its key tag ${JSON.stringify(alphabet.digits[tag])} is the tag of ${option}[${same}] (the same key twice, ` +
          `or a 1 in ${alphabet.digits.length} coincidence): public IDs name their key by the tag, so generate ` +
          'another key for the newer of the two.',
      );
    }
    derived.push({ tag, aesKey: hmac(secret, `nestjs-snowflake/public-id/aes-128/${domain}`).subarray(0, 16) });
  });
  return derived;
}

function hmac(secret: Uint8Array, label: string): Buffer {
  return createHmac('sha256', secret).update(label).digest();
}
