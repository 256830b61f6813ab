/**
 * The public IDs' base32 writer and reader on two numbers agree with the bigint one (FixedWidthDigits) on every
 * width a public ID can have, and leave to it every text they cannot read.
 */
import { randomBytes } from 'node:crypto';
import { BASE32, FixedWidthDigits } from '../../lib/forms/alphabet.js';
import { Base32Halves } from '../../lib/forms/base32-halves.js';
import { FeistelPermutation } from '../../lib/forms/feistel.js';
import { publicIdForm } from '../../lib/forms/public-id.form.js';
import { resolveLayout, type LayoutOptions } from '../../lib/core/layout.js';

function randomBelow(bits: number): bigint {
  return randomBytes(12).reduce((acc, byte) => (acc << 8n) | BigInt(byte), 0n) & ((1n << BigInt(bits)) - 1n);
}

describe('base32 on the halves of a block', () => {
  it('writes and reads what FixedWidthDigits does, for every block width from 12 to 96 bits', () => {
    const wrong: string[] = [];
    for (let bits = 12; bits <= 96; bits++) {
      const digits = new FixedWidthDigits(BASE32, bits);
      const lowBits = FeistelPermutation.lowBitsOf(bits);
      const halves = new Base32Halves(BASE32, digits.width, bits, lowBits);
      const max = (1n << BigInt(bits)) - 1n;
      const values = [
        0n,
        1n,
        max,
        max - 1n,
        1n << BigInt(lowBits),
        ...Array.from({ length: 50 }, () => randomBelow(bits)),
      ];
      for (const value of values) {
        const high = Number(value >> BigInt(lowBits));
        const low = Number(value & ((1n << BigInt(lowBits)) - 1n));
        const text = digits.encode(value);
        if (halves.write(high, low) !== text) wrong.push(`write ${bits} bits ${value}`);
        if (!halves.read(`x${text}`, 1) || halves.high !== high || halves.low !== low) {
          wrong.push(`read ${bits} bits ${value}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('leaves to the bigint reader a character outside the alphabet and a value above the width', () => {
    const digits = new FixedWidthDigits(BASE32, 75);
    const halves = new Base32Halves(BASE32, digits.width, 75, FeistelPermutation.lowBitsOf(75));
    const text = digits.encode(12345n);
    expect(halves.read(text, 0)).toBe(true);
    expect(halves.read(`${text.slice(0, 7)}u${text.slice(8)}`, 0)).toBe(false);
    expect(halves.read(`${text.slice(0, 7)}é${text.slice(8)}`, 0)).toBe(false);
    // 75 bits in 15 digits: the first digit holds 0 to 31 for 5 bits, so every value fits; 73 bits do not.
    const narrow = new FixedWidthDigits(BASE32, 73);
    const narrowHalves = new Base32Halves(BASE32, narrow.width, 73, FeistelPermutation.lowBitsOf(73));
    expect(narrowHalves.read(narrow.encode(narrow.max), 0)).toBe(true);
    expect(narrowHalves.read(`z${narrow.encode(narrow.max).slice(1)}`, 0)).toBe(false);
  });

  it('serves public IDs whose check bits reach into the high half', () => {
    // 16 ID bits and 32 check bits: a 48-bit block with a 24-bit low half.
    const epoch = Date.UTC(2026, 0, 1);
    const tiny = { epoch, timeUnitMs: 1000, timestampBits: 10, workerBits: 2, sequenceBits: 4, minLifetimeYears: 0 };
    const layout = resolveLayout(tiny as LayoutOptions, epoch);
    const form = publicIdForm({
      keys: ['k3y-0f-the-app-0123456789abcdef'],
      layout,
      checkBits: 32,
      clock: { now: () => 8.64e15 },
    });
    const wrong: bigint[] = [];
    for (let id = 0n; id <= layout.maxId; id += 7n) if (form.parse(form.format(id)) !== id) wrong.push(id);
    expect(wrong).toEqual([]);
  });
});
