import fc from 'fast-check';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import { SnowflakeConfigError } from '../../lib/core/errors.js';
import { SnowflakeGenerator } from '../../lib/core/generator.js';
import type { SequenceStart } from '../../lib/core/generator.options.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { FakeClock } from '../support/fake-clock.js';
import { mulberry32 } from '../support/seeded-random.js';

const START = Date.UTC(2026, 10, 24, 12);
const twitter = resolveLayout('twitter', START);
const codec = new SnowflakeCodec(twitter);
const FAKE_TIME_WAIT = { maxSyncWaitMs: 5_000 };

function chiSquare(counts: readonly number[]): number {
  const total = counts.reduce((a, b) => a + b, 0);
  const expected = total / counts.length;
  return counts.reduce((sum, count) => sum + (count - expected) ** 2 / expected, 0);
}

/**
 * The chi-square critical value at α = 0.001 for `df` degrees of freedom, by the Wilson–Hilferty approximation
 * (within 0.1 % of the tables here: 37.70 for 15, about 1,168 for 1,023). z = 3.0902 is the normal 0.999 quantile.
 */
function critical(df: number): number {
  const z = 3.0902;
  const c = 2 / (9 * df);
  return df * (1 - c + z * Math.sqrt(c)) ** 3;
}

/** `count` IDs at one ID per time unit, as a quiet service issues them. */
function oneIdPerUnit(sequenceStart: SequenceStart, count: number, seed = 1): bigint[] {
  const clock = new FakeClock(START);
  const generator = new SnowflakeGenerator({
    layout: twitter,
    datacenterId: 1,
    workerId: 1,
    clock,
    sequenceStart,
    random: mulberry32(seed),
  });
  return Array.from({ length: count }, () => {
    clock.advance(1);
    return generator.next();
  });
}

function residues(ids: readonly bigint[], n: number): number[] {
  const counts = new Array<number>(n).fill(0);
  for (const id of ids) counts[Number(id % BigInt(n))]++;
  return counts;
}

describe('sequenceStart: even low bits for id % N at low traffic', () => {
  it("puts every ID on one partition with 'zero', the failure the option exists for", () => {
    const ids = oneIdPerUnit('zero', 2_000);
    expect(residues(ids, 16).filter((count) => count > 0)).toHaveLength(1);
    expect(chiSquare(residues(ids, 16))).toBeGreaterThan(critical(15));
  });

  it.each<SequenceStart>(['random', 'rotating'])(
    "spreads id %% 16 and id %% 1024 evenly with '%s' (chi-square, α = 0.001, 20 IDs per partition)",
    (mode) => {
      for (const seed of [1, 2, 3]) {
        const ids = oneIdPerUnit(mode, 20 * 1024, seed);
        expect(chiSquare(residues(ids, 16))).toBeLessThan(critical(15));
        expect(chiSquare(residues(ids, 1024))).toBeLessThan(critical(1023));
      }
    },
  );

  it('spreads id % N for every power of two up to half the sequence (2,048 on twitter), no further', () => {
    const ids = oneIdPerUnit('rotating', 8 * 4096);
    expect(chiSquare(residues(ids, 2048))).toBeLessThan(critical(2047));
    // Offsets stay in the lower half of the sequence, so a unit keeps at least half its IDs: the top bit stays 0.
    expect(
      residues(ids, 4096)
        .slice(2048)
        .every((count) => count === 0),
    ).toBe(true);
  });

  it('starts only a new unit at an offset: IDs of one unit count up from it', () => {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({
      layout: twitter,
      clock,
      sequenceStart: 'random',
      random: mulberry32(9),
    });
    const first = codec.decode(generator.next()).sequence;
    const rest = Array.from({ length: 10 }, () => codec.decode(generator.next()).sequence);
    expect(rest).toEqual(Array.from({ length: 10 }, (_, i) => first + 1 + i));
    clock.advance(1);
    expect(codec.decode(generator.next()).timestamp).toBe(START + 1);
  });

  it('refuses an unknown mode, naming the option', () => {
    expect(
      () => new SnowflakeGenerator({ layout: twitter, sequenceStart: 'shuffled' as unknown as SequenceStart }),
    ).toThrow(SnowflakeConfigError);
    expect(
      () => new SnowflakeGenerator({ layout: twitter, sequenceStart: 'shuffled' as unknown as SequenceStart }),
    ).toThrow(/`sequenceStart`: expected one of 'zero', 'random', 'rotating'/);
  });
});

describe('sequenceStart: uniqueness, order and the cost in peak IDs per unit', () => {
  it.each<SequenceStart>(['random', 'rotating'])(
    "with '%s', a unit that starts at offset k holds 2^12 - k IDs, then waits for the next unit (overflow)",
    (mode) => {
      const clock = new FakeClock(START);
      const generator = new SnowflakeGenerator({
        layout: twitter,
        clock,
        sequenceStart: mode,
        random: mulberry32(5),
        ...FAKE_TIME_WAIT,
      });
      for (let unit = 0; unit < 10; unit += 2) {
        clock.autoAdvance(0, 0);
        clock.set(START + unit);
        const first = codec.decode(generator.next());
        expect(first.timestamp).toBe(START + unit);
        expect(first.sequence).toBeLessThan(2048);
        const rest = generator.nextBatch(4095 - first.sequence);
        expect(codec.decode(rest.at(-1)!)).toMatchObject({ timestamp: START + unit, sequence: 4095 });
        expect(new Set([first.id, ...rest]).size).toBe(4096 - first.sequence);
        // The unit is used up: the next ID waits for the clock, never wraps.
        clock.autoAdvance(1, 25);
        const waited = generator.stats().overflowWaits;
        const next = generator.next();
        expect(codec.decode(next).timestamp).toBe(START + unit + 1);
        expect(codec.decode(next).sequence).toBeLessThan(2048);
        expect(generator.stats().overflowWaits).toBe(waited + 1);
        expect(next).toBeGreaterThan(rest.at(-1)!);
      }
    },
  );

  it('reports the guaranteed IDs per unit and caps synchronous batches by it', () => {
    const zero = new SnowflakeGenerator({ layout: twitter });
    const random = new SnowflakeGenerator({ layout: twitter, sequenceStart: 'random' });
    expect(zero.perUnit).toBe(4096);
    expect(random.perUnit).toBe(2049);
    expect(random.maxSyncBatch).toBe(2049 * 10);
    expect(zero.maxSyncBatch).toBe(4096 * 10);
  });

  it.each<SequenceStart>(['random', 'rotating'])(
    "with '%s', never repeats and strictly increases under any clock, overflow and steps back included (property-based)",
    (mode) => {
      fc.assert(
        fc.property(
          fc.array(
            fc.record({ advanceMs: fc.integer({ min: -3, max: 3 }), count: fc.integer({ min: 1, max: 5_000 }) }),
            { minLength: 1, maxLength: 12 },
          ),
          fc.integer(),
          (steps, seed) => {
            const clock = new FakeClock(START);
            clock.autoAdvance(1, 3_000);
            const generator = new SnowflakeGenerator({
              layout: twitter,
              clock,
              sequenceStart: mode,
              random: mulberry32(seed),
              clockBackToleranceMs: 10_000,
              ...FAKE_TIME_WAIT,
            });
            const ids: bigint[] = [];
            for (const { advanceMs, count } of steps) {
              clock.advance(advanceMs);
              for (let i = 0; i < count; i++) ids.push(generator.next());
            }
            let increasing = true;
            for (let i = 1; i < ids.length; i++) if (ids[i] <= ids[i - 1]) increasing = false;
            expect(increasing).toBe(true);
            expect(new Set(ids).size).toBe(ids.length);
          },
        ),
        { numRuns: 30 },
      );
    },
  );

  it('measures the peak: IDs per unit at full speed, random start against zero', () => {
    const perUnit = (mode: SequenceStart): number => {
      const clock = new FakeClock(START);
      const generator = new SnowflakeGenerator({
        layout: twitter,
        clock,
        sequenceStart: mode,
        random: mulberry32(11),
        ...FAKE_TIME_WAIT,
      });
      // The clock moves on only when the generator waits for it: every unit is filled to the end.
      clock.autoAdvance(1, 2);
      const ids = generator.nextBatch(2049 * 400);
      const units = codec.decode(ids.at(-1)!).timestamp - codec.decode(ids[0]).timestamp;
      return ids.length / units;
    };
    expect(perUnit('zero')).toBeGreaterThan(4090);
    // Offsets uniform over 0..2047 leave 4096 - 1023.5 IDs on average: three quarters of the peak.
    const random = perUnit('random');
    expect(random).toBeGreaterThan(2900);
    expect(random).toBeLessThan(3250);
  });
});
