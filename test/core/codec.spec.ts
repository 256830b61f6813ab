import fc from 'fast-check';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import { InvalidSnowflakeError } from '../../lib/core/errors.js';
import { SnowflakeGenerator } from '../../lib/core/generator.js';
import { resolveLayout, type Layout, type TimeUnitMs } from '../../lib/core/layout.js';
import { FakeClock } from '../support/fake-clock.js';

const NOW = Date.UTC(2026, 10, 22);

/** Any valid layout: an epoch in the past, any unit, and fields that fit 63 bits and reach at least now. */
const layoutArb: fc.Arbitrary<Layout> = fc
  .record({
    timeUnitMs: fc.constantFrom<TimeUnitMs>(1, 10, 1000),
    epoch: fc.integer({ min: 0, max: NOW }),
  })
  .chain(({ timeUnitMs, epoch }) => {
    const minTimestampBits = Math.max(1, Math.ceil(Math.log2((NOW - epoch) / timeUnitMs + 1)));
    return fc
      .record({
        timestampBits: fc.integer({ min: minTimestampBits, max: 62 }),
        sequenceBits: fc.integer({ min: 1, max: 31 }),
        datacenterBits: fc.integer({ min: 0, max: 31 }),
        workerBits: fc.integer({ min: 0, max: 31 }),
      })
      .filter((f) => f.timestampBits + f.sequenceBits + f.datacenterBits + f.workerBits <= 63)
      .map((fields) => resolveLayout({ ...fields, timeUnitMs, epoch, minLifetimeYears: 0 }, NOW));
  });

/** A layout with an ID of it, biased towards the edges (0, the largest ID, all-ones fields). */
const layoutAndIdArb = layoutArb.chain((layout) =>
  fc.tuple(fc.constant(layout), fc.bigInt({ min: 0n, max: layout.maxId })),
);

/** Parts that fit the layout, at an instant inside the timestamp field's range. */
function partsArb(layout: Layout) {
  return fc.record({
    timestamp: fc.integer({ min: layout.epoch, max: layout.lastTimestampMs }),
    datacenterId: fc.integer({ min: 0, max: layout.maxDatacenterId }),
    workerId: fc.integer({ min: 0, max: layout.maxWorkerId }),
    sequence: fc.integer({ min: 0, max: layout.maxSequence }),
  });
}

describe('decode and compose are inverse (property-based)', () => {
  it('compose(decode(id)) === id for any ID of any layout', () => {
    fc.assert(
      fc.property(layoutAndIdArb, ([layout, id]) => {
        const codec = new SnowflakeCodec(layout);
        const unixMs = BigInt(layout.epoch) + (id >> BigInt(layout.timestampShift)) * BigInt(layout.timeUnitMs);
        if (unixMs > BigInt(layout.lastTimestampMs)) {
          // Only layouts whose timestamp field outlasts the Date range have such IDs: no instant to decode to.
          expect(() => codec.decode(id)).toThrow(/beyond .* the last instant/);
          return;
        }
        const parts = codec.decode(id);
        expect(parts.id).toBe(id);
        expect(codec.compose(parts)).toBe(id);
        expect(codec.compose({ ...parts, timestamp: parts.date })).toBe(id);
        expect(codec.decode(id.toString())).toEqual(parts);
        if (id <= BigInt(Number.MAX_SAFE_INTEGER)) expect(codec.decode(Number(id))).toEqual(parts);
      }),
      { numRuns: 2000 },
    );
  });

  it('decode(compose(parts)) gives the parts back, the time rounded down to its unit', () => {
    fc.assert(
      fc.property(
        layoutArb.chain((layout) => fc.tuple(fc.constant(layout), partsArb(layout))),
        ([layout, parts]) => {
          const codec = new SnowflakeCodec(layout);
          const decoded = codec.decode(codec.compose(parts));
          const unitStart = parts.timestamp - ((parts.timestamp - layout.epoch) % layout.timeUnitMs);
          expect(decoded).toMatchObject({
            timestamp: unitStart,
            datacenterId: parts.datacenterId,
            workerId: parts.workerId,
            sequence: parts.sequence,
          });
          expect(decoded.date.getTime()).toBe(unitStart);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('decode gives back what the generator put in', () => {
    fc.assert(
      fc.property(
        layoutArb.chain((layout) => fc.tuple(fc.constant(layout), partsArb(layout))),
        ([layout, parts]) => {
          const clock = new FakeClock(parts.timestamp);
          const generator = new SnowflakeGenerator({
            layout,
            clock,
            datacenterId: parts.datacenterId,
            workerId: parts.workerId,
          });
          const decoded = new SnowflakeCodec(layout).decode(generator.next());
          expect(decoded.timestamp).toBe(parts.timestamp - ((parts.timestamp - layout.epoch) % layout.timeUnitMs));
          expect(decoded).toMatchObject({ datacenterId: parts.datacenterId, workerId: parts.workerId, sequence: 0 });
        },
      ),
      { numRuns: 500 },
    );
  });

  it('orders IDs by time first: a later unit always gives a larger ID', () => {
    fc.assert(
      fc.property(
        layoutArb.chain((layout) => fc.tuple(fc.constant(layout), partsArb(layout), partsArb(layout))),
        ([layout, a, b]) => {
          const codec = new SnowflakeCodec(layout);
          const ticks = (ms: number) => Math.floor((ms - layout.epoch) / layout.timeUnitMs);
          fc.pre(ticks(a.timestamp) !== ticks(b.timestamp));
          const earlier = ticks(a.timestamp) < ticks(b.timestamp) ? a : b;
          const later = earlier === a ? b : a;
          expect(codec.compose(earlier) < codec.compose(later)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('minIdAt and maxIdAt bound every ID of an instant', () => {
  it('min <= id <= max for any parts at that instant, and both bounds decode to it', () => {
    fc.assert(
      fc.property(
        layoutArb.chain((layout) => fc.tuple(fc.constant(layout), partsArb(layout))),
        ([layout, parts]) => {
          const codec = new SnowflakeCodec(layout);
          const id = codec.compose(parts);
          const min = codec.minIdAt(parts.timestamp);
          const max = codec.maxIdAt(new Date(parts.timestamp));
          expect(min <= id && id <= max).toBe(true);
          const unitStart = codec.decode(id).timestamp;
          expect(codec.decode(min)).toMatchObject({ timestamp: unitStart, datacenterId: 0, workerId: 0, sequence: 0 });
          expect(codec.decode(max)).toMatchObject({
            timestamp: unitStart,
            datacenterId: layout.maxDatacenterId,
            workerId: layout.maxWorkerId,
            sequence: layout.maxSequence,
          });
          // The bounds of adjacent units touch: nothing falls between them.
          if (unitStart + layout.timeUnitMs <= layout.lastTimestampMs) {
            expect(codec.minIdAt(unitStart + layout.timeUnitMs)).toBe(max + 1n);
          }
          if (unitStart - layout.timeUnitMs >= layout.epoch) {
            expect(codec.maxIdAt(unitStart - 1)).toBe(min - 1n);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('bounds real IDs of the twitter layout issued at an instant', () => {
    const layout = resolveLayout({ preset: 'twitter' }, NOW);
    const codec = new SnowflakeCodec(layout);
    const clock = new FakeClock(NOW + 123);
    const ids = [0, 7, 31].flatMap((workerId) =>
      new SnowflakeGenerator({ layout, clock, workerId, datacenterId: 31 - workerId }).nextBatch(4096),
    );
    const [min, max] = [codec.minIdAt(NOW + 123), codec.maxIdAt(NOW + 123)];
    expect(ids.filter((id) => id < min || id > max)).toEqual([]);
    expect(codec.maxIdAt(NOW + 122)).toBe(min - 1n);
    expect(codec.minIdAt(NOW + 124)).toBe(max + 1n);
  });

  it('clamps range bounds beyond the layout to its first and last ID, and rejects bounds no ID can meet', () => {
    const codec = new SnowflakeCodec(resolveLayout({ preset: 'twitter' }, NOW));
    const { epoch, lastTimestampMs, maxTimestamp } = codec.layout;
    const lastId = codec.compose({ timestamp: lastTimestampMs, datacenterId: 31, workerId: 31, sequence: 4095 });
    // A range starting before the epoch starts at the first ID; one ending after the last instant, at the last.
    expect(codec.minIdAt(0)).toBe(0n);
    expect(codec.minIdAt(epoch - 1)).toBe(0n);
    expect(codec.maxIdAt(lastTimestampMs + 1)).toBe(lastId);
    expect(codec.maxIdAt(new Date('9999-01-01'))).toBe(lastId);
    expect(codec.decode(lastId).timestamp).toBe(epoch + maxTimestamp);
    // No ID lies at or after an instant beyond the layout, nor at or before one before the epoch.
    expect(() => codec.minIdAt(lastTimestampMs + 1)).toThrow(InvalidSnowflakeError);
    expect(() => codec.maxIdAt(epoch - 1)).toThrow(InvalidSnowflakeError);
    expect(() => codec.minIdAt(new Date('invalid'))).toThrow(InvalidSnowflakeError);
    expect(() => codec.minIdAt(Number.NaN)).toThrow(InvalidSnowflakeError);
    // The message speaks of an instant, not of an ID, and names the range.
    expect(() => codec.minIdAt(new Date('2100-01-01T00:00:00Z'))).toThrow(
      /^Invalid instant 2100-01-01T00:00:00.000Z: it lies outside the layout's time range \(2010-11-04T01:42:54.657Z to 2080-/,
    );
  });
});

describe('malformed input to decode', () => {
  const twitter = new SnowflakeCodec(resolveLayout({ preset: 'twitter' }, NOW));
  const jsSafe = new SnowflakeCodec(resolveLayout({ preset: 'js-safe' }, NOW));

  it.each<[string, unknown]>([
    ['empty string', ''],
    ['letters', 'abc'],
    ['digits with a letter', '123a'],
    ['hex', '0x1f'],
    ['leading space', ' 123'],
    ['trailing newline', '123\n'],
    ['exponent', '1e5'],
    ['decimal point', '12.0'],
    ['plus sign', '+5'],
    ['negative string', '-1'],
    ['full-width digits', '１２３'],
    ['negative bigint', -1n],
    ['negative number', -5],
    ['non-integer number', 1.5],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['2^53 as a number', 2 ** 53],
    ['a number far beyond 2^53', 2 ** 60],
    ['one past the largest ID, as a bigint', 2n ** 63n],
    ['one past the largest ID, as a string', (2n ** 63n).toString()],
    ['a 20-digit string wider than 63 bits', '99999999999999999999'],
    ['21 digits', '123456789012345678901'],
    ['null', null],
    ['undefined', undefined],
    ['boolean', true],
    ['object', { id: 1 }],
    ['array', [1]],
    ['Date', new Date(NOW)],
    ['symbol', Symbol('id')],
    ['object without prototype', Object.create(null)],
    [
      'object whose toString throws',
      {
        toString: () => {
          throw new Error('no');
        },
      },
    ],
  ])('rejects %s with InvalidSnowflakeError', (_name, input) => {
    expect(() => twitter.decode(input as string)).toThrow(InvalidSnowflakeError);
  });

  it.each([
    ['letters', '12ab', /digits only/],
    ['a 20-digit string', '99999999999999999999', /wider than the layout's 63 bits/],
    ['26 digits', '99999999999999999999999999', /wider than the layout's 63 bits/],
    ['a megabyte of digits', '9'.repeat(1_000_000), /wider than the layout's 63 bits/],
  ])('says why it rejects %s', (_name, input, reason) => {
    expect(() => twitter.decode(input)).toThrow(reason);
  });

  it('reads leading zeros as the number they pad', () => {
    expect(twitter.decode(`${'0'.repeat(30)}42`).id).toBe(42n);
    expect(twitter.decode('0').id).toBe(0n);
  });

  it('rejects IDs wider than the layout, keeping the input on the error', () => {
    const tooWide = 2n ** 53n;
    let caught: unknown;
    try {
      jsSafe.decode(tooWide);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidSnowflakeError);
    expect((caught as InvalidSnowflakeError).input).toBe(tooWide);
    expect((caught as InvalidSnowflakeError).message).toMatch(/53 bits/);
    expect(() => jsSafe.decode(tooWide.toString())).toThrow(/wider than the layout/);
    expect(() => jsSafe.decode(2n ** 53n - 1n)).not.toThrow();
    expect(() => jsSafe.decode(Number.MAX_SAFE_INTEGER)).not.toThrow();
  });

  it('says how to pass numbers beyond 2^53', () => {
    expect(() => twitter.decode(2 ** 53)).toThrow(/as a string or a bigint/);
  });

  it('accepts 0, the largest ID and leading zeros', () => {
    expect(twitter.decode(0).id).toBe(0n);
    expect(twitter.decode('0').id).toBe(0n);
    expect(twitter.decode((2n ** 63n - 1n).toString()).id).toBe(2n ** 63n - 1n);
    expect(twitter.decode('007').id).toBe(7n);
  });

  it('rejects any string with a character other than a digit (property-based)', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 25, unit: 'grapheme' }).filter((s) => !/^[0-9]+$/.test(s)),
        (input) => {
          expect(() => twitter.decode(input)).toThrow(InvalidSnowflakeError);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('rejects parts that do not fit in compose', () => {
    expect(() => twitter.compose({ timestamp: NOW, workerId: 32 })).toThrow(InvalidSnowflakeError);
    expect(() => twitter.compose({ timestamp: NOW, datacenterId: -1 })).toThrow(/datacenterId/);
    expect(() => twitter.compose({ timestamp: NOW, sequence: 4096 })).toThrow(/sequence/);
    expect(() => twitter.compose({ timestamp: NOW, sequence: 1.5 })).toThrow(InvalidSnowflakeError);
    expect(() => twitter.compose({ timestamp: twitter.layout.epoch - 1 })).toThrow(/time range/);
    expect(() => twitter.compose({ timestamp: 'now' as unknown as number })).toThrow(InvalidSnowflakeError);
    expect(() => twitter.compose(null as never)).toThrow(InvalidSnowflakeError);
    expect(() => twitter.compose(undefined as never)).toThrow(/compose\(\) expects/);
  });
});
