import fc from 'fast-check';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import { SnowflakeGenerator } from '../../lib/core/generator.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { FakeClock } from '../support/fake-clock.js';

const TWITTER_EPOCH = 1288834974657n;
const START = Date.UTC(2026, 10, 22, 1, 2, 3, 4);

/** Twitter's IdWorker, written out independently of the library. */
function twitterId(unixMs: number, datacenterId: number, workerId: number, sequence: number): bigint {
  return (
    ((BigInt(unixMs) - TWITTER_EPOCH) << 22n) |
    (BigInt(datacenterId) << 17n) |
    (BigInt(workerId) << 12n) |
    BigInt(sequence)
  );
}

describe('the twitter preset is bit-identical to IdWorker', () => {
  const layout = resolveLayout({ preset: 'twitter' }, START);

  it('matches the formula on a hand-picked case', () => {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout, clock, datacenterId: 17, workerId: 29 });
    expect(generator.next()).toBe(twitterId(START, 17, 29, 0));
    expect(generator.next()).toBe(twitterId(START, 17, 29, 1));
    clock.advance(1);
    expect(generator.next()).toBe(twitterId(START + 1, 17, 29, 0));
    // Written out by hand: (START - epoch) << 22 | 17 << 17 | 29 << 12 | 0.
    expect(twitterId(START + 1, 17, 29, 0)).toBe(
      (BigInt(START + 1) - TWITTER_EPOCH) * 4194304n + 17n * 131072n + 29n * 4096n,
    );
  });

  it('matches the formula for random workers and clock schedules', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 31 }),
        fc.integer({ min: 0, max: 31 }),
        fc.array(fc.record({ stepMs: fc.integer({ min: 1, max: 5000 }), count: fc.integer({ min: 1, max: 4096 }) }), {
          minLength: 1,
          maxLength: 8,
        }),
        (datacenterId, workerId, schedule) => {
          const clock = new FakeClock(START);
          const generator = new SnowflakeGenerator({ layout, clock, datacenterId, workerId });
          for (const { stepMs, count } of schedule) {
            clock.advance(stepMs);
            const now = clock.peek();
            // Check the first, last and a middle ID of each millisecond; all of them only when few.
            const checked = new Set([0, count >> 1, count - 1]);
            for (let sequence = 0; sequence < count; sequence++) {
              const id = generator.next();
              if (count <= 64 || checked.has(sequence)) {
                expect(id).toBe(twitterId(now, datacenterId, workerId, sequence));
              }
            }
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it('matches the formula for the batch method', () => {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout, clock, datacenterId: 3, workerId: 5 });
    const batch = generator.nextBatch(4096);
    expect(batch).toEqual(Array.from({ length: 4096 }, (_, sequence) => twitterId(START, 3, 5, sequence)));
  });

  it('decodes an IdWorker ID into its parts', () => {
    const codec = new SnowflakeCodec(layout);
    const parts = codec.decode(twitterId(START, 31, 0, 4095));
    expect(parts).toMatchObject({ timestamp: START, datacenterId: 31, workerId: 0, sequence: 4095 });
    expect(parts.date.toISOString()).toBe('2026-11-22T01:02:03.004Z');
    expect(codec.compose({ timestamp: START, datacenterId: 31, workerId: 0, sequence: 4095 })).toBe(
      twitterId(START, 31, 0, 4095),
    );
  });
});
