/**
 * Public IDs of consecutive IDs must look unrelated: neither their low bits (which a plain ID's sequence fills) nor
 * their high bits (which its timestamp fills) may reveal order or volume. The keys and IDs are fixed, so each
 * statistic is deterministic; the thresholds are those of a test at the stated significance, and the same statistics
 * applied to the plain IDs show that they do detect structure.
 */
import { SnowflakeGenerator } from '../../lib/core/generator.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { publicIdForm } from '../../lib/forms/public-id.form.js';
import { FakeClock } from '../support/fake-clock.js';

const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz';
const N = 16_384;
const CELLS = 256;

/**
 * The chi-square quantile by Wilson and Hilferty's approximation (accurate to a fraction of a percent at 255 degrees
 * of freedom): `k (1 - 2/(9k) + z sqrt(2/(9k)))^3`.
 */
function chiSquareQuantile(degrees: number, z: number): number {
  const v = 2 / (9 * degrees);
  return degrees * (1 - v + z * Math.sqrt(v)) ** 3;
}
/** z of the upper 0.1 % tail: the chi-square tests run at a significance of 0.001. */
const Z_999 = 3.0902;
const CRITICAL = chiSquareQuantile(CELLS - 1, Z_999);

function chiSquare(values: readonly number[]): number {
  const counts = new Array<number>(CELLS).fill(0);
  for (const v of values) counts[v]++;
  const expected = values.length / CELLS;
  return counts.reduce((sum, c) => sum + (c - expected) ** 2 / expected, 0);
}

function block(text: string): bigint {
  let value = 0n;
  for (const c of text.slice(1)) value = value * 32n + BigInt(BASE32.indexOf(c));
  return value;
}

describe('public IDs of consecutive IDs', () => {
  const layout = resolveLayout('twitter');
  const clock = new FakeClock(Date.UTC(2026, 5, 1)).autoAdvance(1, 700);
  const generator = new SnowflakeGenerator({ layout, clock, workerId: 3, datacenterId: 1 });
  // Consecutive IDs of one worker: about 700 per millisecond, the sequence running up from 0 in each.
  const ids = Array.from({ length: N }, () => generator.next());
  const form = publicIdForm({ keys: ['a-fixed-test-key-0123456789abcdef'], layout, clock: { now: () => 8.64e15 } });
  const bits = form.length * 5 - 5; // the tag character aside: 75 bits on 63-bit IDs
  const blocks = ids.map((id) => block(form.format(id)));
  const low = (values: readonly bigint[]) => values.map((v) => Number(v & 255n));
  const high = (values: readonly bigint[], width: number) => values.map((v) => Number(v >> BigInt(width - 8)));

  it(`spreads the low 8 bits and the high 8 bits evenly (chi-square, 255 degrees of freedom, α = 0.001: < ${CRITICAL.toFixed(1)})`, () => {
    expect(bits).toBe(75);
    expect(chiSquare(low(blocks))).toBeLessThan(CRITICAL);
    expect(chiSquare(high(blocks, bits))).toBeLessThan(CRITICAL);
    // The same statistic on the plain IDs: their high bits (the timestamp) barely move.
    expect(chiSquare(high(ids, 63))).toBeGreaterThan(100 * CRITICAL);
  });

  it('sets every bit of the public value in about half of them (each bit at α = 0.001 / 75)', () => {
    // Two-sided 0.001 / 75 per bit (Bonferroni): |z| < 4.35, with z = (ones - N/2) / (sqrt(N) / 2).
    const off = Array.from({ length: bits }, (_, bit) => {
      const ones = blocks.filter((b) => (b >> BigInt(bit)) & 1n).length;
      return { bit, z: (ones - N / 2) / (Math.sqrt(N) / 2) };
    }).filter(({ z }) => Math.abs(z) >= 4.35);
    expect(off).toEqual([]);
  });

  it('makes neighbours differ in half their bits on average, and keeps no order between them', () => {
    let distance = 0;
    let rising = 0;
    for (let i = 1; i < N; i++) {
      let x = blocks[i] ^ blocks[i - 1];
      for (; x > 0n; x &= x - 1n) distance++;
      if (blocks[i] > blocks[i - 1]) rising++;
    }
    const pairs = N - 1;
    // Per pair the distance is Binomial(75, 1/2) (standard deviation 4.33); the mean of 16,383 pairs lies within
    // 5 standard errors (0.17) of 37.5. A rise is a coin toss: within 5 standard errors of one half.
    expect(Math.abs(distance / pairs - bits / 2)).toBeLessThan((5 * Math.sqrt(bits / 4)) / Math.sqrt(pairs));
    expect(Math.abs(rising / pairs - 0.5)).toBeLessThan(5 * Math.sqrt(0.25 / pairs));
    expect(ids.every((id, i) => i === 0 || id > ids[i - 1])).toBe(true);
  });
});
