import type { Alphabet } from './alphabet.js';

const TWO_25 = 2 ** 25;

/**
 * Base32 text of fixed width for a value held as two JS numbers, `high * 2^lowBits + low` (each below 2^48), the
 * shape a Feistel permutation works on: the public IDs' hot path writes and reads without a bigint. The value is
 * regrouped at 50 bits (ten digits) and split into chunks of 25 bits (five digits), which 32-bit operations take
 * apart exactly.
 *
 * Reading returns `false` for any text it cannot take (a character outside the alphabet, a value above `bits`), and
 * the caller then reads it with {@link FixedWidthDigits.decode}, which names the fault.
 *
 * @internal
 */
export class Base32Halves {
  private readonly digits: string;
  private readonly values: Int8Array;
  private readonly lowSize: number;
  /** 2^(50 - lowBits): how much of `high` lies below bit 50. */
  private readonly highSplit: number;
  private readonly maxTop: number;
  private readonly maxBottom: number;
  /** The halves read by {@link read}. */
  high = 0;
  low = 0;

  constructor(
    alphabet: Alphabet,
    readonly width: number,
    bits: number,
    lowBits: number,
  ) {
    if (alphabet.digits.length !== 32 || width > 20 || bits > 96 || lowBits > 48 || bits - lowBits > 48) {
      throw new RangeError('base32 of at most 96 bits in halves of at most 48');
    }
    this.digits = alphabet.digits;
    this.values = alphabet.values;
    this.lowSize = 2 ** lowBits;
    this.highSplit = 2 ** (50 - lowBits);
    const max = (1n << BigInt(bits)) - 1n;
    this.maxTop = Number(max >> 50n);
    this.maxBottom = Number(max & ((1n << 50n) - 1n));
  }

  /** The `width` digits of `high * 2^lowBits + low`. */
  write(high: number, low: number): string {
    const rest = Math.floor(high / this.highSplit);
    const bottom = low + (high - rest * this.highSplit) * this.lowSize;
    const c1 = Math.floor(bottom / TWO_25);
    const c0 = bottom - c1 * TWO_25;
    const c3 = Math.floor(rest / TWO_25);
    const c2 = rest - c3 * TWO_25;
    const d = this.digits;
    let out = '';
    for (let i = this.width - 1; i >= 0; i--) {
      const chunk = i < 5 ? c0 : i < 10 ? c1 : i < 15 ? c2 : c3;
      out += d[(chunk >>> (5 * (i % 5))) & 31];
    }
    return out;
  }

  /** Reads the `width` digits at `offset` into {@link high} and {@link low}; false when the text needs the slow reader. */
  read(text: string, offset: number): boolean {
    const values = this.values;
    let top = 0;
    let bottom = 0;
    for (let i = 0; i < this.width; i++) {
      const code = text.charCodeAt(offset + i);
      const digit = code < 128 ? values[code] : -1;
      if (digit < 0) return false;
      // Digits above the lowest ten go to `top`, the lowest ten to `bottom`.
      if (this.width - i > 10) top = top * 32 + digit;
      else bottom = bottom * 32 + digit;
    }
    if (top > this.maxTop || (top === this.maxTop && bottom > this.maxBottom)) return false;
    const lowPart = bottom % this.lowSize;
    this.low = lowPart;
    this.high = (bottom - lowPart) / this.lowSize + top * this.highSplit;
    return true;
  }
}
