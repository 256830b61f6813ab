import { describeInput } from '../core/describe-input.js';
import { InvalidSnowflakeError, SnowflakeConfigError } from '../core/errors.js';
import type { SnowflakeIdForm } from '../core/id-form.js';
import { rejectUnknownKeys } from '../core/option-checks.js';
import {
  BASE32,
  BASE62,
  DECIMAL,
  FixedWidthDigits,
  characterClass,
  escapeText,
  fixedWidthPattern,
  notADigit,
  type Alphabet,
} from './alphabet.js';
import { InvalidSnowflakeTextError } from './form.errors.js';
import { checkPrefix, checkShape } from './prefix.js';

/**
 * Options of {@link base32Form}, {@link base62Form} and {@link decimalForm}.
 *
 * @publicApi
 */
export interface TextFormOptions {
  /**
   * A type prefix, written before the ID with an underscore: `prefix: 'user'` gives `user_1tzcmnsbw0400` in
   * base32. Lower-case letters, digits and inner underscores, starting with a letter, at most 63 characters (as
   * TypeID's). A text without it, or with another, is refused: an order's ID is not taken for a user's.
   */
  prefix?: string;
  /**
   * The bits of the IDs written: the width of the text follows from it (base32: 13 characters for 63 bits, 11 for
   * the 53 of `js-safe`). Pass the layout's `totalBits` for the shortest texts. Values wider than this are refused
   * on both sides. @default 63
   */
  bits?: number;
}

const OPTION_KEYS: readonly string[] = Object.keys({ prefix: 0, bits: 0 } satisfies Record<keyof TextFormOptions, 0>);

/**
 * IDs as a fixed-width Crockford base32 text: 13 characters for 63 bits, in lower case, read in either case. Texts of
 * one form sort as their IDs do (byte-wise comparison, as JavaScript's `<` and `sort()` do, and a database's binary
 * or `C` collation). The letters i, l, o and u are refused with their position and the digit a reader likely meant.
 *
 * @example
 * const form = base32Form({ prefix: 'user', bits: layout.totalBits });
 * form.format(2125018075706167296n); // 'user_1tzcmnsbw0400'
 * @publicApi
 */
export function base32Form(options: TextFormOptions = {}): SnowflakeIdForm {
  return fixedWidthForm(BASE32, options);
}

/**
 * IDs as a fixed-width base62 text (`0-9A-Za-z`, in ASCII order): 11 characters for 63 bits. Case matters; texts of
 * one form sort as their IDs do under a byte-wise comparison (not under a case-insensitive collation).
 *
 * @publicApi
 */
export function base62Form(options: TextFormOptions = {}): SnowflakeIdForm {
  return fixedWidthForm(BASE62, options);
}

/**
 * IDs as decimal digits, the library's default form (what `nextString()` writes), with an optional type prefix.
 * Leading zeros are read, not written; the width varies, so texts do not sort as the IDs do.
 *
 * @publicApi
 */
export function decimalForm(options: TextFormOptions = {}): SnowflakeIdForm {
  const { head, bits } = checkOptions(options);
  const max = (1n << BigInt(bits)) - 1n;
  const maxLength = max.toString().length;
  const name = 'decimal';
  return Object.freeze({
    name,
    // Any number of digits: leading zeros are read, so the length has no upper bound.
    pattern: `^${escapeText(head)}${characterClass(DECIMAL)}+$`,
    format(id: bigint): string {
      return head + checkId(id, max, bits, name).toString();
    },
    parse(text: string): bigint {
      checkShape(text, head, undefined, name);
      if (text.length === head.length) {
        throw new InvalidSnowflakeTextError(text, name, 'expected digits, got nothing.', head.length);
      }
      let significant = -1;
      for (let i = head.length; i < text.length; i++) {
        const code = text.charCodeAt(i);
        if (code >= 128 || DECIMAL.values[code] < 0) throw notADigit(text, DECIMAL, name, i);
        if (significant < 0 && code !== 0x30) significant = i;
      }
      const digits = significant < 0 ? 1 : text.length - significant;
      const value = significant < 0 ? 0n : digits > maxLength ? max + 1n : BigInt(text.slice(significant));
      if (value > max) {
        throw new InvalidSnowflakeTextError(text, name, `the value exceeds ${bits} bits (the largest is ${max}).`);
      }
      return value;
    },
  });
}

/** The shared body of the fixed-width forms: prefix, then exactly `width` digits. */
function fixedWidthForm(alphabet: Alphabet, options: TextFormOptions): SnowflakeIdForm {
  const { head, bits } = checkOptions(options);
  const digits = new FixedWidthDigits(alphabet, bits);
  const { name } = alphabet;
  return Object.freeze({
    name,
    pattern: fixedWidthPattern(head, digits),
    format(id: bigint): string {
      return head + digits.encode(checkId(id, digits.max, bits, name));
    },
    parse(text: string): bigint {
      checkShape(text, head, digits.width, name);
      return digits.decode(text, head.length, name);
    },
  });
}

function checkOptions(options: TextFormOptions): { head: string; bits: number } {
  if (options === null || typeof options !== 'object') {
    throw new SnowflakeConfigError('form', "expected options such as { prefix: 'user', bits: 63 }.");
  }
  rejectUnknownKeys('', options, OPTION_KEYS, 'A text form');
  const bits = options.bits ?? 63;
  if (!Number.isInteger(bits) || bits < 1 || bits > 64) {
    throw new SnowflakeConfigError(
      'bits',
      `expected the number of bits of the IDs, from 1 to 64 (a layout's \`totalBits\`), got ${describeInput(bits)}.`,
    );
  }
  return { head: checkPrefix('prefix', options.prefix), bits };
}

/** The ID, if it is a bigint a form of `bits` bits can write. @internal */
export function checkId(id: unknown, max: bigint, bits: number, form: string): bigint {
  if (typeof id !== 'bigint') {
    throw new InvalidSnowflakeError(id, `the ${form} form writes bigint IDs, got ${typeof id}.`);
  }
  if (id < 0n || id > max) {
    throw new InvalidSnowflakeError(id, `the ${form} form writes IDs from 0 to ${max} (${bits} bits).`);
  }
  return id;
}
