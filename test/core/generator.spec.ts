import fc from 'fast-check';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import {
  BatchTooLargeError,
  ClockMovedBackError,
  SequenceExhaustedError,
  SnowflakeConfigError,
  TimestampOverflowError,
  WorkerUnavailableError,
} from '../../lib/core/errors.js';
import { SnowflakeGenerator } from '../../lib/core/generator.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { FakeClock } from '../support/fake-clock.js';

const START = Date.UTC(2026, 10, 22, 12);
const twitter = resolveLayout({ preset: 'twitter' }, START);
const codec = new SnowflakeCodec(twitter);
/**
 * The wait for the next unit is bounded in real (monotonic) time, but here only the fake clock's reads move time on.
 * A generous bound keeps a preempted test process from timing out a wait that the fake clock ends a few reads later.
 */
const FAKE_TIME_WAIT = { maxSyncWaitMs: 5_000 };

function caught<T extends Error>(fn: () => unknown, type: new (...args: never[]) => T): T {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(type);
    return error as T;
  }
  throw new Error(`expected ${type.name}, but nothing was thrown`);
}

function isStrictlyIncreasing(ids: readonly bigint[]): boolean {
  for (let i = 1; i < ids.length; i++) if (ids[i] <= ids[i - 1]) return false;
  return true;
}

describe('sequence overflow: wait for the next time unit', () => {
  it('issues the 4097th ID of a millisecond at the next millisecond with sequence 0, never at the old one', () => {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout: twitter, clock, ...FAKE_TIME_WAIT });
    const ids = Array.from({ length: 4096 }, () => generator.next());
    expect(codec.decode(ids[4095])).toMatchObject({ timestamp: START, sequence: 4095 });
    // The clock moves on only after 50 more reads: the generator must keep reading it, not wrap the sequence.
    clock.autoAdvance(1, 50);
    const next = generator.next();
    expect(codec.decode(next)).toMatchObject({ timestamp: START + 1, sequence: 0 });
    expect(next).not.toBe(ids[0]);
    expect(next).toBeGreaterThan(ids[4095]);
    expect(generator.stats().overflowWaits).toBe(1);
    expect(clock.reads).toBeGreaterThanOrEqual(4096 + 50);
  });

  it('takes the new clock reading after the wait, even when it jumped several units', () => {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout: twitter, clock, ...FAKE_TIME_WAIT });
    generator.nextBatch(4096);
    clock.autoAdvance(7, 3);
    expect(codec.decode(generator.next()).timestamp).toBe(START + 7);
  });

  it('gives up after maxSyncWaitMs with SequenceExhaustedError when the clock never advances', () => {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout: twitter, clock, maxSyncWaitMs: 30 });
    generator.nextBatch(4096);
    const started = performance.now();
    const error = caught(() => generator.next(), SequenceExhaustedError);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(29);
    expect(elapsed).toBeLessThan(500);
    expect(error.maxWaitMs).toBe(30);
    expect(error.waitMs).toBe(1);
    expect(error.message).toMatch(/nextAsync\(\)/);
    // Still nothing to issue, and still bounded; the failed calls consumed no sequence number.
    caught(() => generator.next(), SequenceExhaustedError);
    clock.advance(1);
    expect(codec.decode(generator.next())).toMatchObject({ timestamp: START + 1, sequence: 0 });
  });

  it('fails at once, without waiting, when the next unit is further away than maxSyncWaitMs', () => {
    const layout = resolveLayout({ timeUnitMs: 1000, timestampBits: 40, sequenceBits: 2 }, START);
    const clock = new FakeClock(START + 200);
    const generator = new SnowflakeGenerator({ layout, clock });
    generator.nextBatch(4);
    // A wait would read the clock over and over; failing at once reads it once or twice.
    const readsBefore = clock.reads;
    const error = caught(() => generator.next(), SequenceExhaustedError);
    expect(clock.reads - readsBefore).toBeLessThanOrEqual(2);
    const nextUnitMs = layout.epoch + (Math.floor((START + 200 - layout.epoch) / 1000) + 1) * 1000;
    expect(error.waitMs).toBe(nextUnitMs - (START + 200));
  });

  it('with the system clock, a burst on a 10 ms layout always reaches the next unit within the default bound', () => {
    const layout = resolveLayout({ preset: 'js-safe' }, Date.now());
    const generator = new SnowflakeGenerator({ layout });
    const perUnit = layout.maxSequence + 1;
    let previous = -1n;
    // 60 units of 10 ms: every one of them ends in a wait of up to the whole unit, which equals maxSyncWaitMs.
    for (let i = 0; i < 60 * perUnit; i++) {
      const id = generator.next();
      if (id <= previous) throw new Error(`${id} is not above ${previous}`);
      previous = id;
    }
    // Most units end in a wait; a preempted process may skip past a few of them.
    expect(generator.stats().overflowWaits).toBeGreaterThanOrEqual(30);
  });

  it('nextAsync() resolves once the clock moves, without holding the event loop', async () => {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout: twitter, clock, maxSyncWaitMs: 5 });
    generator.nextBatch(4096);
    let timerRuns = 0;
    const ticker = setInterval(() => timerRuns++, 1);
    try {
      let settled = false;
      const pending = generator.nextAsync().finally(() => {
        settled = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 60));
      expect(settled).toBe(false);
      // Timers kept running while the generator waited.
      expect(timerRuns).toBeGreaterThanOrEqual(3);
      clock.advance(1);
      const id = await pending;
      expect(codec.decode(id)).toMatchObject({ timestamp: START + 1, sequence: 0 });
    } finally {
      clearInterval(ticker);
    }
  });

  it('nextAsync() and nextBatchAsync() use the rest of the current unit before waiting for the next', async () => {
    // A frozen clock: one unit for the whole test. Waiting for the next unit would never end.
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout: twitter, clock });
    const first = await generator.nextAsync();
    const second = await generator.nextAsync();
    expect(second).toBe(first + 1n);
    const batch = await generator.nextBatchAsync(100);
    expect(batch[0]).toBe(second + 1n);
    expect(codec.decode(batch[99])).toMatchObject({ timestamp: START, sequence: 101 });
    expect(generator.nextWithoutWaiting()).toBe(batch[99] + 1n);
    expect(generator.stats().overflowWaits).toBe(0);
  }, 2000);

  it('nextAsync() passes other errors on', async () => {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout: twitter, clock });
    generator.next();
    clock.back(5000);
    await expect(generator.nextAsync()).rejects.toBeInstanceOf(ClockMovedBackError);
  });
});

describe('clock stepped back', () => {
  it('continues at the last timestamp within the tolerance', () => {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout: twitter, clock, clockBackToleranceMs: 1000 });
    const first = generator.next();
    clock.back(1000);
    const second = generator.next();
    expect(second).toBe(first + 1n);
    expect(generator.stats()).toMatchObject({ clockBackEvents: 1, maxClockBackMs: 1000 });
    clock.back(1);
    const error = caught(() => generator.next(), ClockMovedBackError);
    expect(error.behindMs).toBe(1001);
    expect(error.toleranceMs).toBe(1000);
    expect(error.message).toMatch(/clockBackToleranceMs/);
  });

  it('borrows future units on overflow only while it stays within the tolerance', () => {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout: twitter, clock, clockBackToleranceMs: 1000 });
    generator.next();
    clock.back(990);
    let previous = 0n;
    let count = 0;
    let error: unknown;
    try {
      for (;;) {
        const id = generator.next();
        if (id <= previous) throw new Error(`${id} is not above ${previous}`);
        previous = id;
        count++;
      }
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ClockMovedBackError);
    // It reached START + 10, 1000 ms ahead of the clock, and refused to go to 1001.
    expect(codec.decode(previous).timestamp).toBe(START + 10);
    expect(count).toBe(11 * 4096 - 1);
    // The error tells the step back apart from how far the refused ID would have run ahead.
    const clockBack = error as ClockMovedBackError;
    expect(clockBack).toMatchObject({ behindMs: 1000, aheadMs: 1001, toleranceMs: 1000 });
    expect(clockBack.message).toMatch(/stands 1000 ms behind the last issued ID, and the next ID would run 1001 ms/);
    expect(generator.stats().overflowWaits).toBe(0);
  });

  it('with a zero tolerance refuses any step back', () => {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout: twitter, clock, clockBackToleranceMs: 0 });
    generator.next();
    clock.back(1);
    caught(() => generator.next(), ClockMovedBackError);
    clock.advance(1);
    expect(() => generator.next()).not.toThrow();
  });

  it('measures the tolerance in whole units of a coarse layout', () => {
    const layout = resolveLayout({ preset: 'js-safe' }, START);
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout, clock, clockBackToleranceMs: 100 });
    generator.next();
    clock.back(100);
    expect(() => generator.next()).not.toThrow();
    clock.back(10);
    caught(() => generator.next(), ClockMovedBackError);
  });
});

describe('nextBatch', () => {
  it('returns count IDs, strictly increasing, spanning time units when the sequence runs out', () => {
    const clock = new FakeClock(START).autoAdvance(1, 3);
    const generator = new SnowflakeGenerator({ layout: twitter, clock, ...FAKE_TIME_WAIT });
    const ids = generator.nextBatch(20_000);
    expect(ids).toHaveLength(20_000);
    expect(isStrictlyIncreasing(ids)).toBe(true);
    const timestamps = new Set(ids.map((id) => codec.decode(id).timestamp));
    expect(timestamps.size).toBeGreaterThanOrEqual(5);
    expect(generator.stats().issued).toBe(20_000);
  });

  it('reads the clock once per time unit, not once per ID', () => {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout: twitter, clock, ...FAKE_TIME_WAIT });
    generator.nextBatch(4096);
    expect(clock.reads).toBe(1);
  });

  it('stays strictly increasing across batches and mixed with next() (property-based)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant('batch' as const), count: fc.integer({ min: 0, max: 9000 }) }),
            fc.record({ kind: fc.constant('next' as const), count: fc.integer({ min: 1, max: 50 }) }),
            fc.record({ kind: fc.constant('tick' as const), count: fc.integer({ min: -20, max: 20 }) }),
          ),
          { maxLength: 30 },
        ),
        (operations) => {
          const clock = new FakeClock(START).autoAdvance(1, 4);
          const generator = new SnowflakeGenerator({ layout: twitter, clock, workerId: 9, ...FAKE_TIME_WAIT });
          const all: bigint[] = [];
          for (const { kind, count } of operations) {
            if (kind === 'tick') clock.advance(count);
            else if (kind === 'next') for (let i = 0; i < count; i++) all.push(generator.next());
            else {
              const batch = generator.nextBatch(count);
              expect(batch).toHaveLength(count);
              all.push(...batch);
            }
          }
          expect(isStrictlyIncreasing(all)).toBe(true);
          expect(all.every((id) => ((id >> 12n) & 31n) === 9n)).toBe(true);
          expect(generator.stats().issued).toBe(all.length);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('rejects a count that is not a non-negative integer', () => {
    const generator = new SnowflakeGenerator({ layout: twitter, clock: new FakeClock(START) });
    expect(generator.nextBatch(0)).toEqual([]);
    for (const count of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => generator.nextBatch(count)).toThrow(SnowflakeConfigError);
    }
    // From a query string, past the types (found by a review: a RangeError, which no handler of SnowflakeError
    // catches).
    expect(() => generator.nextBatch('10' as never)).toThrow(
      /`count`: nextBatch\(count\) expected a non-negative integer, got "10"/,
    );
  });

  // Found by a review: `'shardKey' in options` threw a TypeError ("Cannot use 'in' operator").
  it('refuses options that are no object with SnowflakeConfigError, issuing nothing', async () => {
    const generator = new SnowflakeGenerator({ layout: twitter, clock: new FakeClock(START) });
    for (const options of [null, 'k', 5]) {
      expect(() => generator.next(options as never)).toThrow(/`options`: expected an object such as \{ shardKey \}/);
      expect(() => generator.nextBatch(2, options as never)).toThrow(SnowflakeConfigError);
      await expect(generator.nextAsync(options as never)).rejects.toThrow(SnowflakeConfigError);
    }
    expect(generator.stats().issued).toBe(0);
  });
});

describe('large batches and the event loop', () => {
  it('refuses a synchronous batch that needs more time units than maxSyncWaitMs holds, issuing nothing', () => {
    // 4 sequence bits (16 IDs per ms) keep the batch small, so building it never takes near the 10 ms bound.
    const narrow = resolveLayout({ preset: 'twitter', sequenceBits: 4, timestampBits: 49 }, START);
    const clock = new FakeClock(START).autoAdvance(1, 2);
    const generator = new SnowflakeGenerator({ layout: narrow, clock, maxSyncWaitMs: 10 });
    expect(generator.maxSyncBatch).toBe(10 * 16);
    expect(generator.nextBatch(generator.maxSyncBatch)).toHaveLength(160);
    const issued = generator.stats().issued;
    const error = caught(() => generator.nextBatch(161), BatchTooLargeError);
    expect(error.max).toBe(160);
    expect(error.message).toContain('nextBatchAsync(161)');
    expect(generator.stats().issued).toBe(issued);
    expect(new SnowflakeGenerator({ layout: twitter, maxSyncWaitMs: 10 }).maxSyncBatch).toBe(40_960);
  });

  it('refuses fractional, negative and infinite counts in every batch method, before issuing anything', async () => {
    const generator = new SnowflakeGenerator({ layout: twitter, clock: new FakeClock(START) });
    for (const count of [0.5, 1.5, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => generator.nextBatch(count)).toThrow(SnowflakeConfigError);
      expect(() => generator.fillWithoutWaiting([], count)).toThrow(SnowflakeConfigError);
      await expect(generator.nextBatchAsync(count)).rejects.toThrow(SnowflakeConfigError);
    }
    expect(generator.stats().issued).toBe(0);
    // A fractional count must not have moved the sequence: the next IDs keep worker 0 and count up by one.
    const [a, b] = [generator.next(), generator.next()];
    expect(b - a).toBe(1n);
    expect(codec.decode(b).workerId).toBe(0);
  });

  it('refuses before drawing a batch whose later units start beyond maxSyncWaitMs (a 1 s unit begun mid-second)', () => {
    const layout = resolveLayout({ timeUnitMs: 1000, timestampBits: 40, sequenceBits: 4 }, START);
    const clock = new FakeClock(START + 300);
    const generator = new SnowflakeGenerator({ layout, clock });
    const first = generator.next();
    // 15 IDs are left in this second; 16 would need the next one, 700 ms away.
    const error = caught(() => generator.nextBatch(16), SequenceExhaustedError);
    expect(error.waitMs).toBe(700);
    expect(generator.stats().issued).toBe(1);
    const rest = generator.nextBatch(15);
    expect(rest[0]).toBe(first + 1n);
    expect(rest).toHaveLength(15);
  });

  it('bounds the synchronous wait of a whole batch, not of each time unit', () => {
    // A clock whose millisecond lasts 8 ms of real time: each wait for the next unit fits in maxSyncWaitMs (10),
    // but the nine waits of a 40,960-ID batch (about 72 ms) do not, so the batch stops with the typed error.
    const started = performance.now();
    const slowClock = { now: () => START + Math.floor((performance.now() - started) / 8) };
    const generator = new SnowflakeGenerator({ layout: twitter, clock: slowClock, maxSyncWaitMs: 10 });
    caught(() => generator.nextBatch(generator.maxSyncBatch), SequenceExhaustedError);
  });

  it('nextBatchAsync() returns any number of strictly increasing IDs across time units', async () => {
    const clock = new FakeClock(START).autoAdvance(1, 2);
    const generator = new SnowflakeGenerator({ layout: twitter, clock, maxSyncWaitMs: 10 });
    const ids = await generator.nextBatchAsync(100_000);
    expect(ids).toHaveLength(100_000);
    expect(isStrictlyIncreasing(ids)).toBe(true);
    expect(new Set(ids.map((id) => codec.decode(id).timestamp)).size).toBeGreaterThanOrEqual(25);
    expect(generator.stats().issued).toBe(100_000);
  });

  it('nextBatchAsync() lets timers run while it waits for the next time units (real clock)', async () => {
    // js-safe: 512 IDs per 10 ms unit, so 5,120 IDs span about ten units, about 100 ms of real time.
    const generator = new SnowflakeGenerator({ layout: resolveLayout({ preset: 'js-safe' }) });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      const ids = await generator.nextBatchAsync(5_120);
      expect(ids).toHaveLength(5_120);
      expect(isStrictlyIncreasing(ids)).toBe(true);
    } finally {
      clearInterval(timer);
    }
    // A synchronous spin of the same length would have let the interval run at most once.
    expect(ticks).toBeGreaterThanOrEqual(5);
  });
});

describe('generator options', () => {
  it.each([
    ['clockBackToleranceMs', Number.NaN],
    ['clockBackToleranceMs', -1],
    ['maxSyncWaitMs', Number.NaN],
    ['maxSyncWaitMs', Number.POSITIVE_INFINITY],
  ])('rejects %s: %p, naming the option', (option, value) => {
    expect(() => new SnowflakeGenerator({ layout: twitter, [option]: value })).toThrow(
      expect.objectContaining({ name: 'SnowflakeConfigError', option }),
    );
  });
});

describe('floor, ceiling and the end of the layout', () => {
  const ticksOf = (ms: number) => Math.floor((ms - twitter.epoch) / twitter.timeUnitMs);

  it('issues only timestamps strictly above the floor', () => {
    for (const [clockMs, expected] of [
      [START + 10, START + 10],
      [START + 5, START + 6],
      [START + 2, START + 6],
    ] as const) {
      const clock = new FakeClock(clockMs).autoAdvance(1, 20);
      const generator = new SnowflakeGenerator({
        layout: twitter,
        clock,
        floor: ticksOf(START + 5),
        ...FAKE_TIME_WAIT,
      });
      expect(codec.decode(generator.next()).timestamp).toBe(expected);
    }
  });

  it('never issues above the permit ceiling', () => {
    const clock = new FakeClock(START);
    const ceiling = ticksOf(START + 2);
    const generator = new SnowflakeGenerator({ layout: twitter, clock, permit: { ceiling: () => ceiling } });
    generator.next();
    clock.advance(2);
    expect(codec.decode(generator.next()).timestamp).toBe(START + 2);
    clock.advance(1);
    expect(caught(() => generator.next(), WorkerUnavailableError).reason).toBe('ceiling');
  });

  it('passes on what the permit throws', () => {
    const generator = new SnowflakeGenerator({
      layout: twitter,
      clock: new FakeClock(START),
      permit: {
        ceiling: () => {
          throw new WorkerUnavailableError('fenced', 'fenced');
        },
      },
    });
    expect(caught(() => generator.next(), WorkerUnavailableError).reason).toBe('fenced');
  });

  it('throws TimestampOverflowError once the timestamp field is full', () => {
    const layout = resolveLayout({ epoch: START - 1000, timestampBits: 11, minLifetimeYears: 0 }, START);
    const clock = new FakeClock(layout.lastTimestampMs);
    const generator = new SnowflakeGenerator({ layout, clock });
    expect(new SnowflakeCodec(layout).decode(generator.next()).timestamp).toBe(layout.lastTimestampMs);
    clock.advance(1);
    const error = caught(() => generator.next(), TimestampOverflowError);
    expect(error.lastDate.getTime()).toBe(layout.lastTimestampMs);
  });

  it('moves to another worker ID with assign() and keeps its IDs distinct', () => {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout: twitter, clock, workerId: 1, ...FAKE_TIME_WAIT });
    const before = generator.next();
    generator.assign(2, 0, ticksOf(START));
    clock.autoAdvance(1, 5);
    const after = generator.next();
    expect(generator.workerId).toBe(2);
    expect(codec.decode(after)).toMatchObject({ workerId: 2, timestamp: START + 1 });
    expect(after).not.toBe(before);
  });
});
