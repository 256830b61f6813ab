import { InvalidSnowflakeTextError } from './form.errors.js';

/**
 * The digits of a text form, in increasing value. Each alphabet lists its digits in increasing ASCII order, so that
 * texts of one width compare (byte-wise, as JavaScript's `<` and `Array.prototype.sort()` do) as their values do.
 *
 * @internal
 */
export interface Alphabet {
  readonly name: 'decimal' | 'base32' | 'base62';
  /** The digits written, lowest value first. */
  readonly digits: string;
  /** Character code (below 128) → digit value, or -1 for a character that is not a digit. */
  readonly values: Int8Array;
  /** What a digit is, for messages. */
  readonly described: string;
  /** Advice for a character that is not a digit, when there is one (a letter Crockford leaves out). */
  readonly hint?: (character: string) => string | undefined;
}

function table(digits: string, caseInsensitive: boolean): Int8Array {
  const values = new Int8Array(128).fill(-1);
  for (let i = 0; i < digits.length; i++) {
    values[digits.charCodeAt(i)] = i;
    if (caseInsensitive) values[digits.toUpperCase().charCodeAt(i)] = i;
  }
  return values;
}

/** The letters Crockford's base32 leaves out, and the digit a reader most likely meant. */
const CROCKFORD_LOOKALIKES: Readonly<Record<string, string>> = { i: '1', l: '1', o: '0', u: 'v' };

/**
 * Crockford's base32: digits and letters without i, l, o and u, which are read for 1, 1, 0 and v. Written in lower
 * case, read in either. The look-alikes are refused (naming the digit a reader likely meant) rather than read as
 * Crockford's decoder would, so that each ID has one text (up to case) and a mistyped ID is never silently taken for
 * another one.
 */
export const BASE32: Alphabet = Object.freeze({
  name: 'base32',
  digits: '0123456789abcdefghjkmnpqrstvwxyz',
  values: table('0123456789abcdefghjkmnpqrstvwxyz', true),
  described: 'a Crockford base32 digit (0-9 and a-z without i, l, o, u; either case)',
  hint: (character: string) => {
    const meant = CROCKFORD_LOOKALIKES[character.toLowerCase()];
    return meant === undefined ? undefined : `did you mean ${meant}?`;
  },
});

/** Digits, upper-case letters, lower-case letters: ASCII order, so case matters and the order is kept. */
export const BASE62: Alphabet = Object.freeze({
  name: 'base62',
  digits: '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
  values: table('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', false),
  described: 'a base62 digit (0-9, A-Z, a-z; case matters)',
});

export const DECIMAL: Alphabet = Object.freeze({
  name: 'decimal',
  digits: '0123456789',
  values: table('0123456789', false),
  described: 'a decimal digit',
});

/** The number of digits that holds every value of `bits` bits. */
export function widthFor(alphabet: Alphabet, bits: number): number {
  const radix = BigInt(alphabet.digits.length);
  const limit = 1n << BigInt(bits);
  let width = 1;
  for (let span = radix; span < limit; span *= radix) width++;
  return width;
}

/** The most bits that `width` digits hold in full: the largest `b` with `2^b <= radix^width`. */
export function bitsIn(alphabet: Alphabet, width: number): number {
  const span = BigInt(alphabet.digits.length) ** BigInt(width);
  return span.toString(2).length - 1;
}

/**
 * Writes and reads values below `2^bits` as exactly `width` digits, leading zeros included: fixed width is what
 * makes the texts sort as the values do. Works in chunks of digits that fit a JS number, with one bigint division or
 * multiplication per chunk.
 *
 * @internal
 */
export class FixedWidthDigits {
  readonly width: number;
  readonly max: bigint;
  private readonly radix: number;
  /** Digits per chunk: the most whose values stay exact as a JS number. */
  private readonly chunk: number;
  private readonly chunkSpan: bigint;
  /** For a power-of-two radix (base32), the bits of a chunk: a mask and a shift then replace the bigint division. */
  private readonly chunkBits: bigint | undefined;
  /** The digit values of `max`, to find where a text that is too large first exceeds it. */
  private readonly maxDigits: number[];

  constructor(
    readonly alphabet: Alphabet,
    readonly bits: number,
  ) {
    this.radix = alphabet.digits.length;
    this.width = widthFor(alphabet, bits);
    this.max = (1n << BigInt(bits)) - 1n;
    this.chunk = Math.floor(53 / Math.log2(this.radix));
    this.chunkSpan = BigInt(this.radix) ** BigInt(this.chunk);
    const radixBits = Math.log2(this.radix);
    this.chunkBits = Number.isInteger(radixBits) ? BigInt(radixBits * this.chunk) : undefined;
    this.maxDigits = [...this.encode(this.max)].map((character) => alphabet.values[character.charCodeAt(0)]);
  }

  /** The value of the first digit of `max`: no text of this width starts with a larger one. */
  get firstDigitMax(): number {
    return this.maxDigits[0];
  }

  /** The digits of `value`, which the caller has checked lies in 0..max. */
  encode(value: bigint): string {
    const { digits } = this.alphabet;
    let out = '';
    let rest = value;
    for (let remaining = this.width; remaining > 0;) {
      const count = Math.min(this.chunk, remaining);
      let n: number;
      if (count === remaining) {
        n = Number(rest);
      } else {
        if (this.chunkBits === undefined) {
          n = Number(rest % this.chunkSpan);
          rest /= this.chunkSpan;
        } else {
          n = Number(rest & (this.chunkSpan - 1n));
          rest >>= this.chunkBits;
        }
      }
      let part = '';
      for (let i = 0; i < count; i++) {
        part = digits[n % this.radix] + part;
        n = Math.floor(n / this.radix);
      }
      out = part + out;
      remaining -= count;
    }
    return out;
  }

  /**
   * The value of the `width` digits of `text` from `offset` on; the caller has checked the length.
   *
   * @throws InvalidSnowflakeTextError naming the first character that is not a digit, or the one that makes the value
   *   exceed `bits`
   */
  decode(text: string, offset: number, form: string): bigint {
    const { values } = this.alphabet;
    let value = 0n;
    let n = 0;
    let inChunk = 0;
    let firstAbove = -1;
    let equalSoFar = true;
    for (let i = 0; i < this.width; i++) {
      const position = offset + i;
      const code = text.charCodeAt(position);
      const digit = code < 128 ? values[code] : -1;
      if (digit < 0) throw notADigit(text, this.alphabet, form, position);
      if (equalSoFar && digit !== this.maxDigits[i]) {
        equalSoFar = false;
        if (digit > this.maxDigits[i]) firstAbove = position;
      }
      n = n * this.radix + digit;
      if (++inChunk === this.chunk) {
        value = value * this.chunkSpan + BigInt(n);
        n = 0;
        inChunk = 0;
      }
    }
    if (inChunk > 0) value = value * BigInt(this.radix) ** BigInt(inChunk) + BigInt(n);
    if (firstAbove >= 0) {
      throw new InvalidSnowflakeTextError(
        text,
        form,
        `${JSON.stringify(text[firstAbove])} at position ${firstAbove} makes the value exceed ${this.bits} bits ` +
          `(the largest is ${JSON.stringify(this.encode(this.max))}).`,
        firstAbove,
        text[firstAbove],
      );
    }
    return value;
  }
}

/**
 * A regular-expression character class of the characters `values` reads as a digit from `low` to `high` (every one
 * by default), both cases included where the alphabet reads both: `[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]` for base32. Built
 * from the table `decode` reads with, so the class and the reader cannot disagree.
 *
 * @internal
 */
export function characterClass(alphabet: Alphabet, low = 0, high = alphabet.digits.length - 1): string {
  const codes: number[] = [];
  alphabet.values.forEach((value, code) => {
    if (value >= low && value <= high) codes.push(code);
  });
  let out = '';
  for (let i = 0; i < codes.length;) {
    let end = i;
    while (end + 1 < codes.length && codes[end + 1] === codes[end] + 1) end++;
    const run = codes.slice(i, end + 1).map((code) => String.fromCharCode(code));
    // Three or more consecutive characters as a range, fewer as themselves (`JK`, not `J-K`).
    out += run.length >= 3 ? `${run[0]}-${run[run.length - 1]}` : run.join('');
    i = end + 1;
  }
  return `[${out}]`;
}

/**
 * The pattern of `head`, then `lead` (a pattern of what comes between, such as a key tag), then the digits of
 * `digits`: the first digit no larger than the largest value's first digit (base32 on 63 bits starts with 0-7), the
 * others any digit.
 *
 * @internal
 */
export function fixedWidthPattern(head: string, digits: FixedWidthDigits, lead = ''): string {
  const first = characterClass(digits.alphabet, 0, digits.firstDigitMax);
  const rest = digits.width > 1 ? `${characterClass(digits.alphabet)}{${digits.width - 1}}` : '';
  return `^${escapeText(head)}${lead}${first}${rest}$`;
}

/**
 * `text` as a regular expression that matches it literally. Prefixes hold only `[a-z0-9_]`, so this changes nothing
 * today; it escapes only syntax characters, which stay valid with the `u` flag that JSON Schema validators use.
 */
export function escapeText(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}

/** The error for a character that is not a digit of the alphabet, with its position and any hint. */
export function notADigit(text: string, alphabet: Alphabet, form: string, position: number): InvalidSnowflakeTextError {
  const character = String.fromCodePoint(text.codePointAt(position)!);
  const hint = alphabet.hint?.(character);
  return new InvalidSnowflakeTextError(
    text,
    form,
    `${JSON.stringify(character)} at position ${position} is not ${alphabet.described}${hint === undefined ? '.' : `; ${hint}`}`,
    position,
    character,
  );
}
