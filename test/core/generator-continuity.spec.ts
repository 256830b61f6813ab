/**
 * Where a unit's sequence continues and where it starts afresh, with sequenceStart offsets and shard keys: a step
 * back of the clock, a floor, a ceiling reached while borrowing units, and every issuing method mixed together.
 */
import fc from 'fast-check';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import { SequenceExhaustedError, WorkerUnavailableError } from '../../lib/core/errors.js';
import { SnowflakeGenerator } from '../../lib/core/generator.js';
import type { SequenceStart } from '../../lib/core/generator.options.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { shardOfKey } from '../../lib/core/shard-key.js';
import { FakeClock } from '../support/fake-clock.js';

const START = Date.UTC(2026, 10, 24, 21);
const twitter = resolveLayout('twitter', START);
const sharded = resolveLayout('sharded', START);
const codec = new SnowflakeCodec(twitter);
const FAKE_TIME_WAIT = { maxSyncWaitMs: 5_000 };
const ticksOf = (ms: number) => ms - twitter.epoch;

/** Random numbers from a list, in turn: each new unit's offset is `value * 2048` on twitter. */
function draws(...values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length];
}

function isStrictlyIncreasing(ids: readonly bigint[]): boolean {
  for (let i = 1; i < ids.length; i++) if (ids[i] <= ids[i - 1]) return false;
  return true;
}

describe('sequenceStart and the clock stepping back', () => {
  it.each<SequenceStart>(['random', 'rotating'])(
    "with '%s', continues the last unit's sequence after a step back, and only a borrowed unit starts at an offset",
    (sequenceStart) => {
      const clock = new FakeClock(START + 10);
      const generator = new SnowflakeGenerator({
        layout: twitter,
        clock,
        sequenceStart,
        random: draws(0.5, 0.25),
        clockBackToleranceMs: 1_000,
      });
      const first = codec.decode(generator.next());
      clock.back(5);
      const behind = Array.from({ length: 3 }, () => codec.decode(generator.next()));
      // The unit goes on at L with the next sequence numbers, never at a new offset that could fall below them.
      expect(behind.map((p) => p.timestamp)).toEqual([START + 10, START + 10, START + 10]);
      expect(behind.map((p) => p.sequence)).toEqual([first.sequence + 1, first.sequence + 2, first.sequence + 3]);
      // Used up, still behind: the next unit is borrowed, and a new unit may start at an offset.
      const rest = generator.nextBatch(4095 - behind[2].sequence);
      expect(codec.decode(rest.at(-1)!)).toMatchObject({ timestamp: START + 10, sequence: 4095 });
      const borrowed = codec.decode(generator.next());
      expect(borrowed.timestamp).toBe(START + 11);
      expect(borrowed.sequence).toBeLessThan(2048);
      expect(borrowed.id).toBeGreaterThan(rest.at(-1)!);
    },
  );

  it("with 'random', a step back while waiting for the next unit borrows it above the used-up one", () => {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({
      layout: twitter,
      clock,
      sequenceStart: 'random',
      random: draws(0.9, 0),
      ...FAKE_TIME_WAIT,
    });
    const unit = generator.nextBatch(4096 - Math.floor(0.9 * 2048));
    expect(codec.decode(unit.at(-1)!).sequence).toBe(4095);
    // The clock steps back 3 ms during the wait for the next unit.
    clock.autoAdvance(-3, 5);
    const next = codec.decode(generator.next());
    expect(next).toMatchObject({ timestamp: START + 1, sequence: 0 });
    expect(next.id).toBeGreaterThan(unit.at(-1)!);
  });
});

describe('sequenceStart with a random source out of its range', () => {
  it.each([
    ['negative', -0.5],
    ['one or more', 1.5],
    ['not a number', Number.NaN],
  ])('keeps every offset inside the sequence field when random() returns a value %s', (_, value) => {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({
      layout: twitter,
      clock,
      workerId: 1,
      sequenceStart: 'random',
      random: () => value,
    });
    const ids: bigint[] = [];
    for (let unit = 0; unit < 3; unit++) {
      clock.advance(1);
      ids.push(generator.next(), generator.next());
    }
    expect(ids.every((id) => id > 0n)).toBe(true);
    expect(ids.map((id) => codec.decode(id).workerId)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(ids.every((id) => codec.decode(id).sequence < 2048)).toBe(true);
    expect(isStrictlyIncreasing(ids)).toBe(true);
  });
});

describe('sequenceStart at a floor and a ceiling', () => {
  it.each([
    ['on the floor', START + 5, START + 6],
    ['behind the floor', START + 2, START + 6],
    ['past the floor', START + 9, START + 9],
  ])("with 'random', the first ID after a floor lies in a unit above it, at its offset: clock %s", (_, now, unit) => {
    const clock = new FakeClock(now).autoAdvance(1, 20);
    const generator = new SnowflakeGenerator({
      layout: twitter,
      clock,
      sequenceStart: 'random',
      random: draws(0.5),
      floor: ticksOf(START + 5),
      ...FAKE_TIME_WAIT,
    });
    expect(codec.decode(generator.next())).toMatchObject({ timestamp: unit, sequence: 1024 });
  });

  it("with 'rotating', a ceiling met while borrowing units refuses, then continues above the last ID once raised", () => {
    const clock = new FakeClock(START + 3);
    let ceiling = ticksOf(START + 3);
    const generator = new SnowflakeGenerator({
      layout: twitter,
      clock,
      sequenceStart: 'rotating',
      permit: { ceiling: () => ceiling },
    });
    // 'rotating' starts the first unit at offset 1: 4,094 IDs leave one sequence number in it.
    const unit = generator.nextBatch(4094);
    expect(codec.decode(unit[0]).sequence).toBe(1);
    clock.back(2);
    expect(codec.decode(generator.next())).toMatchObject({ timestamp: START + 3, sequence: 4095 });
    let refused: unknown;
    try {
      generator.next();
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(WorkerUnavailableError);
    expect((refused as WorkerUnavailableError).reason).toBe('ceiling');
    ceiling += 10;
    const after = codec.decode(generator.next());
    expect(after.timestamp).toBe(START + 4);
    expect(after.id).toBeGreaterThan(unit.at(-1)!);
  });
});

describe('fillWithoutWaiting, the building block of async batches', () => {
  it.each([
    ['a count of 0', 0, 0],
    ['a count the array already holds', 3, 2],
  ])('with %s, never winds the sequence back: a unit still holds 4,096 IDs of its worker', (_, held, count) => {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout: twitter, clock, workerId: 1 });
    const out = Array.from({ length: held }, (_, i) => BigInt(i));
    const ids = [generator.next()];
    generator.fillWithoutWaiting(out, count);
    ids.push(...out.slice(held));
    // The rest of the unit, until the sequence is used up (the clock stands still).
    for (;;) {
      try {
        ids.push(generator.nextWithoutWaiting());
      } catch (error) {
        expect(error).toBeInstanceOf(SequenceExhaustedError);
        break;
      }
    }
    // Never a sequence run over into the worker field, where worker 2's IDs lie.
    expect(ids.filter((id) => codec.decode(id).workerId !== 1).map((id) => codec.decode(id))).toEqual([]);
    expect(ids).toHaveLength(4096);
    expect(new Set(ids).size).toBe(ids.length);
    expect(isStrictlyIncreasing(ids)).toBe(true);
    expect(codec.decode(ids.at(-1)!)).toMatchObject({ timestamp: START, sequence: 4095 });
  });
});

type Op =
  | { kind: 'move'; ms: number }
  | { kind: 'next' | 'nextWithoutWaiting' | 'nextAsync'; key: string | undefined }
  | { kind: 'nextBatch' | 'nextBatchAsync'; key: string | undefined; count: number };

const key = fc.option(fc.constantFrom('user-1', 'user-2', 'tenant:acme', 'user-7'), { nil: undefined });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('move' as const), ms: fc.integer({ min: -3, max: 3 }) }),
  fc.record({ kind: fc.constantFrom('next' as const, 'nextWithoutWaiting' as const, 'nextAsync' as const), key }),
  fc.record({
    kind: fc.constantFrom('nextBatch' as const, 'nextBatchAsync' as const),
    key,
    count: fc.integer({ min: 0, max: 1_500 }),
  }),
);

describe('every issuing method mixed, with shard keys, offsets and clock steps', () => {
  it.each<SequenceStart>(['zero', 'random', 'rotating'])(
    "with '%s', IDs never repeat, strictly increase and keep their key's shard (property-based)",
    async (sequenceStart) => {
      const shardCodec = new SnowflakeCodec(sharded);
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), fc.integer(), async (ops, seed) => {
          const clock = new FakeClock(START + 100);
          clock.autoAdvance(1, 400);
          let state = seed >>> 0;
          const generator = new SnowflakeGenerator({
            layout: sharded,
            clock,
            sequenceStart,
            random: () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32,
            clockBackToleranceMs: 60_000,
            ...FAKE_TIME_WAIT,
          });
          const ids: bigint[] = [];
          const shards: number[] = [];
          const record = (got: bigint[], k: string | undefined) => {
            for (const id of got) {
              ids.push(id);
              shards.push(k === undefined ? 0 : shardOfKey(k, 4));
            }
          };
          for (const step of ops) {
            if (step.kind === 'move') {
              clock.advance(step.ms);
              continue;
            }
            const options = step.key === undefined ? undefined : { shardKey: step.key };
            switch (step.kind) {
              case 'next':
                record([generator.next(options)], step.key);
                break;
              case 'nextWithoutWaiting':
                try {
                  record([generator.nextWithoutWaiting(options)], step.key);
                } catch (error) {
                  if (!(error instanceof SequenceExhaustedError)) throw error;
                }
                break;
              case 'nextAsync':
                record([await generator.nextAsync(options)], step.key);
                break;
              case 'nextBatch':
                record(generator.nextBatch(step.count, options), step.key);
                break;
              case 'nextBatchAsync':
                record(await generator.nextBatchAsync(step.count, options), step.key);
                break;
            }
          }
          expect(new Set(ids).size).toBe(ids.length);
          expect(isStrictlyIncreasing(ids)).toBe(true);
          expect(ids.map((id) => shardCodec.shardOf(id))).toEqual(shards);
        }),
        { numRuns: 20 },
      );
    },
  );
});
