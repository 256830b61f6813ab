import fc from 'fast-check';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import { TimestampOverflowError, UnsafeNumberError } from '../../lib/core/errors.js';
import { SnowflakeGenerator } from '../../lib/core/generator.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { FakeClock } from '../support/fake-clock.js';

const NOW = Date.UTC(2026, 10, 22);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

describe('js-safe IDs are exact JS numbers', () => {
  const layout = resolveLayout({ preset: 'js-safe' }, NOW);

  it('has no ID above Number.MAX_SAFE_INTEGER, even at the last unit with the largest worker and sequence', () => {
    expect(layout.maxId).toBeLessThanOrEqual(MAX_SAFE);
    const clock = new FakeClock(layout.lastTimestampMs + layout.timeUnitMs - 1);
    const generator = new SnowflakeGenerator({
      layout,
      clock,
      workerId: layout.maxWorkerId,
      datacenterId: layout.maxDatacenterId,
    });
    const ids = generator.nextBatch(layout.maxSequence + 1);
    expect(ids.at(-1)).toBe(layout.maxId);
    expect(ids.filter((id) => id > MAX_SAFE)).toEqual([]);
    // One unit later the field is full: the generator refuses rather than issue a wider ID.
    clock.advance(1);
    expect(() => generator.next()).toThrow(TimestampOverflowError);
  });

  it('nextNumber() equals the bigint ID exactly at any instant of the layout (property-based)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: layout.epoch, max: layout.lastTimestampMs }),
        fc.integer({ min: 0, max: layout.maxWorkerId }),
        fc.integer({ min: 1, max: layout.maxSequence + 1 }),
        (time, workerId, count) => {
          const bigints = new SnowflakeGenerator({ layout, clock: new FakeClock(time), workerId }).nextBatch(count);
          const numbers = new SnowflakeGenerator({ layout, clock: new FakeClock(time), workerId });
          for (const id of bigints) {
            const n = numbers.nextNumber();
            if (!Number.isSafeInteger(n) || BigInt(n) !== id) throw new Error(`${n} is not exactly ${id}`);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('nextNumber() works with the system clock and decodes back to this worker', () => {
    const generator = new SnowflakeGenerator({ layout, workerId: 42 });
    const codec = new SnowflakeCodec(layout);
    const numbers = Array.from({ length: 2000 }, () => generator.nextNumber());
    expect(numbers.every((n, i) => Number.isSafeInteger(n) && (i === 0 || n > numbers[i - 1]))).toBe(true);
    const parts = codec.decode(numbers.at(-1)!);
    expect(parts.workerId).toBe(42);
    expect(Math.abs(parts.timestamp - Date.now())).toBeLessThan(5000);
    // Exact through JSON, unlike a 64-bit ID.
    expect(JSON.parse(JSON.stringify(numbers))).toEqual(numbers);
  });
});

describe('nextNumber() on layouts wider than 53 bits', () => {
  it.each([
    ['twitter', resolveLayout({ preset: 'twitter' }, NOW), 63],
    ['default', resolveLayout({ preset: 'default' }, NOW), 63],
    ['54 bits', resolveLayout({ preset: 'js-safe', workerBits: 7 }, NOW), 54],
  ])('throws UnsafeNumberError for %s', (_name, layout, bits) => {
    const generator = new SnowflakeGenerator({ layout, clock: new FakeClock(NOW) });
    let error: unknown;
    try {
      generator.nextNumber();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UnsafeNumberError);
    expect((error as UnsafeNumberError).layoutBits).toBe(bits);
    expect((error as UnsafeNumberError).message).toMatch(/js-safe/);
    // The refused call consumed no ID.
    expect(generator.stats().issued).toBe(0);
  });

  it('works on any layout of exactly 53 bits', () => {
    const layout = resolveLayout({ preset: 'default', timestampBits: 41, workerBits: 4, sequenceBits: 8 }, NOW);
    expect(layout.totalBits).toBe(53);
    const n = new SnowflakeGenerator({ layout, clock: new FakeClock(NOW), workerId: 15 }).nextNumber();
    expect(Number.isSafeInteger(n)).toBe(true);
  });
});
