import fc from 'fast-check';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import { InvalidShardKeyError, InvalidSnowflakeError, SnowflakeConfigError } from '../../lib/core/errors.js';
import { SnowflakeGenerator } from '../../lib/core/generator.js';
import { LAYOUT_PRESETS, resolveLayout, type Layout } from '../../lib/core/layout.js';
import { shardKeyHash, shardOfKey, type ShardKey } from '../../lib/core/shard-key.js';
import { FakeClock } from '../support/fake-clock.js';

const START = Date.UTC(2026, 10, 24, 12);
const sharded = resolveLayout('sharded', START);
const codec = new SnowflakeCodec(sharded);
const FAKE_TIME_WAIT = { maxSyncWaitMs: 5_000 };

function isStrictlyIncreasing(ids: readonly bigint[]): boolean {
  for (let i = 1; i < ids.length; i++) if (ids[i] <= ids[i - 1]) return false;
  return true;
}

/**
 * The published vectors. The FNV-1a 32 hashes of '', 'a' and 'foobar' are those of the FNV authors' test suite;
 * every row was also computed outside this library, in Python:
 * `h = 0x811c9dc5; for b in key.encode(): h = ((h ^ b) * 0x01000193) & 0xffffffff`, then
 * `((h >> bits) ^ h) & ((1 << bits) - 1)`. The README prints the same table: changing either breaks every stored
 * ID's routing, so it must fail here first.
 */
const VECTORS: ReadonlyArray<{ key: ShardKey; hash: number; shard4: number; shard6: number; shard10: number }> = [
  { key: '', hash: 0x811c9dc5, shard4: 9, shard6: 50, shard10: 738 },
  { key: 'a', hash: 0xe40c292c, shard4: 14, shard6: 8, shard10: 550 },
  { key: 'foobar', hash: 0xbf9cf968, shard4: 14, shard6: 13, shard10: 598 },
  { key: '42', hash: 0x87e38583, shard4: 11, shard6: 21, shard10: 354 },
  { key: 42, hash: 0x87e38583, shard4: 11, shard6: 21, shard10: 354 },
  { key: 42n, hash: 0x87e38583, shard4: 11, shard6: 21, shard10: 354 },
  { key: -7, hash: 0x1acd139d, shard4: 4, shard6: 19, shard10: 217 },
  { key: 18446744073709551615n, hash: 0x86a8b3f4, shard4: 11, shard6: 59, shard10: 472 },
  { key: 'user-1', hash: 0xf5537974, shard4: 3, shard6: 17, shard10: 426 },
  { key: 'user-2', hash: 0xf8537e2d, shard4: 15, shard6: 21, shard10: 754 },
  { key: 'tenant:acme', hash: 0xa7d49747, shard4: 3, shard6: 26, shard10: 610 },
  { key: 'é', hash: 0x1e9de8c1, shard4: 13, shard6: 34, shard10: 955 },
  { key: '日本', hash: 0x9f26ee51, shard4: 4, shard6: 40, shard10: 1002 },
  { key: '😀', hash: 0x33a29608, shard4: 8, shard6: 16, shard10: 685 },
  { key: new Uint8Array([1, 2, 3]), hash: 0x56cf37ab, shard4: 1, shard6: 53, shard10: 102 },
];

describe('the shard of a key: FNV-1a 32 of its canonical form, xor-folded', () => {
  it.each(VECTORS.map((v) => [describeKey(v.key), v]))('pins the vector of %s', (_name, vector) => {
    expect(shardKeyHash(vector.key)).toBe(vector.hash);
    expect(shardOfKey(vector.key, 4)).toBe(vector.shard4);
    expect(shardOfKey(vector.key, 6)).toBe(vector.shard6);
    expect(shardOfKey(vector.key, 10)).toBe(vector.shard10);
  });

  it('hashes a string as its UTF-8 bytes, surrogate pairs and lone surrogates as TextEncoder writes them', () => {
    const encoder = new TextEncoder();
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(shardKeyHash(text)).toBe(shardKeyHash(encoder.encode(text)));
      }),
    );
    for (const text of ['a\uD800b', '\uDC00', '\uD83D', '😀x']) {
      expect(shardKeyHash(text)).toBe(shardKeyHash(encoder.encode(text)));
    }
  });

  it('gives an integer the shard of its decimal text, whichever type holds it', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (n) => {
        const shard = shardOfKey(n, 10);
        expect(shardOfKey(BigInt(n), 10)).toBe(shard);
        expect(shardOfKey(String(n), 10)).toBe(shard);
      }),
    );
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }), (n) => {
        expect(shardKeyHash(n)).toBe(shardKeyHash(n.toString()));
      }),
    );
    for (const edge of [2n ** 53n - 1n, 2n ** 53n, -(2n ** 53n) + 1n, -(2n ** 53n)]) {
      expect(shardKeyHash(edge)).toBe(shardKeyHash(edge.toString()));
    }
    expect(shardOfKey(-0, 8)).toBe(shardOfKey(0, 8));
  });

  it('keeps every shard in range, and the shard of a narrower field is the wider one folded again', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 16 }), (key, bits) => {
        const shard = shardOfKey(key, bits);
        expect(shard).toBeGreaterThanOrEqual(0);
        expect(shard).toBeLessThan(2 ** bits);
        const hash = shardKeyHash(key);
        expect(shard).toBe((((hash >>> bits) ^ hash) >>> 0) % 2 ** bits);
      }),
    );
  });

  it('spreads keys evenly over the shards (chi-square, α = 0.001, 16 shards, 32,000 keys)', () => {
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 32_000; i++) counts[shardOfKey(`user-${i}`, 4)]++;
    // The critical value of chi-square with 15 degrees of freedom at α = 0.001 is 37.70.
    expect(chiSquare(counts)).toBeLessThan(37.7);
  });

  it.each<[unknown, RegExp]>([
    [1.5, /safe integer/],
    [2 ** 53, /safe integer/],
    [Number.NaN, /safe integer/],
    [true, /expected a string, an integer/],
    [null, /expected a string, an integer/],
    [{ id: 1 }, /expected a string, an integer/],
    [new Date(0), /expected a string, an integer/],
  ])('refuses the key %p', (key, message) => {
    expect(() => shardKeyHash(key as ShardKey)).toThrow(InvalidShardKeyError);
    expect(() => shardKeyHash(key as ShardKey)).toThrow(message);
  });
});

describe("the 'sharded' preset and the shard field", () => {
  it('takes 4 shard bits below the sequence: 41 timestamp, 8 worker, 10 sequence, 4 shard', () => {
    expect(LAYOUT_PRESETS.sharded).toMatchObject({ timestampBits: 41, datacenterBits: 0, workerBits: 8 });
    expect(sharded).toMatchObject({ sequenceBits: 10, shardBits: 4, maxShard: 15, sequenceShift: 4 });
    expect(sharded).toMatchObject({ workerShift: 14, datacenterShift: 22, timestampShift: 22, totalBits: 63 });
  });

  it('leaves every other preset without a shard field, its bits where they always were', () => {
    const twitter = resolveLayout('twitter', START);
    expect(twitter).toMatchObject({ shardBits: 0, sequenceShift: 0, workerShift: 12, timestampShift: 22 });
    expect(new SnowflakeCodec(twitter).decode(1n << 22n)).not.toHaveProperty('shard');
  });

  it('validates shardBits, naming the option', () => {
    expect(() => resolveLayout({ shardBits: 17 }, START)).toThrow(/layout\.shardBits/);
    expect(() => resolveLayout({ shardBits: -1 }, START)).toThrow(SnowflakeConfigError);
    expect(() => resolveLayout({ preset: 'default', shardBits: 1 }, START)).toThrow(/64 bits|63 fit|shard 1/);
  });

  it('composes and decodes the shard, and shardOf reads it without a lookup (property-based)', () => {
    // 41 timestamp bits leave 22 for the rest: shard, sequence and worker share them.
    const layouts = fc
      .integer({ min: 1, max: 16 })
      .chain((shardBits) =>
        fc.record({ shardBits: fc.constant(shardBits), sequenceBits: fc.integer({ min: 1, max: 22 - shardBits }) }),
      )
      .map((f) => resolveLayout({ preset: 'default', workerBits: 22 - f.shardBits - f.sequenceBits, ...f }, START));
    fc.assert(
      fc.property(
        layouts.chain((layout) => fc.tuple(fc.constant(layout), partsOf(layout))),
        ([layout, parts]) => {
          const c = new SnowflakeCodec(layout);
          const id = c.compose(parts);
          expect(c.decode(id)).toMatchObject(parts);
          expect(c.shardOf(id)).toBe(parts.shard);
          expect(c.shardOf(id.toString())).toBe(parts.shard);
          expect(Number(id % BigInt(2 ** layout.shardBits))).toBe(parts.shard);
          expect(c.compose(c.decode(id))).toBe(id);
        },
      ),
    );
  });

  it('refuses shardOf and a shard part on a layout without the field', () => {
    const plain = new SnowflakeCodec(resolveLayout('default', START));
    expect(() => plain.shardOf(1n)).toThrow(InvalidSnowflakeError);
    expect(() => plain.shardOf(1n)).toThrow(/no shard field/);
    expect(() => plain.compose({ timestamp: START, shard: 1 })).toThrow(/`shard` must be an integer from 0 to 0/);
    expect(() => codec.compose({ timestamp: START, shard: 16 })).toThrow(/`shard` must be an integer from 0 to 15/);
  });
});

describe('next({ shardKey })', () => {
  it('embeds the key shard, the same in every generator and worker', () => {
    const a = new SnowflakeGenerator({ layout: sharded, workerId: 3, clock: new FakeClock(START) });
    const b = new SnowflakeGenerator({ layout: sharded, workerId: 200, clock: new FakeClock(START + 5_000) });
    for (const key of ['user-1', 'user-2', 42, 42n, 'tenant:acme']) {
      const expected = shardOfKey(key, 4);
      expect(codec.shardOf(a.next({ shardKey: key }))).toBe(expected);
      expect(codec.decode(b.next({ shardKey: key }))).toMatchObject({ shard: expected, workerId: 200 });
      expect(codec.shardOf(a.nextString({ shardKey: key }))).toBe(expected);
    }
  });

  it('issues shard 0 without a key, and refuses an empty key rather than defaulting to shard 0', () => {
    const generator = new SnowflakeGenerator({ layout: sharded, clock: new FakeClock(START) });
    expect(codec.shardOf(generator.next())).toBe(0);
    expect(codec.shardOf(generator.next({}))).toBe(0);
    expect(() => generator.next({ shardKey: undefined })).toThrow(InvalidShardKeyError);
    expect(() => generator.next({ shardKey: null as unknown as string })).toThrow(/`shardKey` is given but empty/);
    expect(() => generator.next({ shardKey: 1.5 })).toThrow(InvalidShardKeyError);
  });

  it('reads a key given by a getter of the options’ class, as it reads an own property', () => {
    class OrderIdRequest {
      constructor(private readonly user: string) {}
      get shardKey(): string {
        return this.user;
      }
    }
    const generator = new SnowflakeGenerator({ layout: sharded, clock: new FakeClock(START) });
    expect(codec.shardOf(generator.next(new OrderIdRequest('user-1')))).toBe(shardOfKey('user-1', 4));
    expect(shardOfKey('user-1', 4)).not.toBe(0);
  });

  it('refuses a key on a layout without a shard field, saying which layout has one', () => {
    const generator = new SnowflakeGenerator({ layout: resolveLayout('default', START), clock: new FakeClock(START) });
    expect(() => generator.next({ shardKey: 'user-1' })).toThrow(/no shard field.*'sharded' preset/);
    expect(generator.stats().issued).toBe(0);
  });

  it('never repeats and strictly increases with mixed keys in one unit, across overflow (property-based)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constant(undefined), fc.string(), fc.integer()), { minLength: 1, maxLength: 3_000 }),
        fc.integer({ min: 0, max: 3 }),
        (keys, stepEvery) => {
          const clock = new FakeClock(START);
          // 0: the clock never moves but during waits, so the 1,024 IDs of a unit run out again and again.
          clock.autoAdvance(1, stepEvery === 0 ? 40 : stepEvery * 700);
          const generator = new SnowflakeGenerator({ layout: sharded, clock, ...FAKE_TIME_WAIT });
          const ids = keys.map((key) => (key === undefined ? generator.next() : generator.next({ shardKey: key })));
          expect(new Set(ids).size).toBe(ids.length);
          expect(isStrictlyIncreasing(ids)).toBe(true);
          keys.forEach((key, i) => expect(codec.shardOf(ids[i])).toBe(key === undefined ? 0 : shardOfKey(key, 4)));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('shares one sequence between the shards: a unit holds 2^sequenceBits IDs whatever their keys', () => {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout: sharded, clock, ...FAKE_TIME_WAIT });
    const ids = Array.from({ length: 1024 }, (_, i) => generator.next({ shardKey: `user-${i % 7}` }));
    expect(ids.map((id) => codec.decode(id).timestamp)).toEqual(new Array(1024).fill(START));
    expect(ids.map((id) => codec.decode(id).sequence)).toEqual(Array.from({ length: 1024 }, (_, i) => i));
    clock.autoAdvance(1, 20);
    const next = generator.next({ shardKey: 'user-0' });
    expect(codec.decode(next)).toMatchObject({ timestamp: START + 1, sequence: 0, shard: shardOfKey('user-0', 4) });
    expect(generator.stats().overflowWaits).toBe(1);
  });

  it('carries the key through batches and the async variants', async () => {
    const clock = new FakeClock(START);
    clock.autoAdvance(1, 30);
    const generator = new SnowflakeGenerator({ layout: sharded, clock, ...FAKE_TIME_WAIT });
    const shard = shardOfKey('tenant:acme', 4);
    const batch = generator.nextBatch(2_500, { shardKey: 'tenant:acme' });
    const asyncBatch = await generator.nextBatchAsync(2_500, { shardKey: 'tenant:acme' });
    const one = await generator.nextAsync({ shardKey: 'tenant:acme' });
    const all = [...batch, ...asyncBatch, one];
    expect(all.every((id) => codec.shardOf(id) === shard)).toBe(true);
    expect(isStrictlyIncreasing(all)).toBe(true);
    expect(() => generator.nextBatch(1, { shardKey: true as unknown as string })).toThrow(InvalidShardKeyError);
    await expect(generator.nextAsync({ shardKey: undefined })).rejects.toThrow(InvalidShardKeyError);
  });

  it('keeps nextNumber exact on a 53-bit layout with a shard field', () => {
    const layout: Layout = resolveLayout({ preset: 'js-safe', workerBits: 4, shardBits: 2 }, START);
    const generator = new SnowflakeGenerator({ layout, clock: new FakeClock(START) });
    const id = generator.nextNumber({ shardKey: 'user-2' });
    expect(Number.isSafeInteger(id)).toBe(true);
    expect(new SnowflakeCodec(layout).shardOf(id)).toBe(shardOfKey('user-2', 2));
  });
});

function partsOf(layout: Layout) {
  return fc.record({
    timestamp: fc
      .integer({ min: layout.epoch, max: START })
      .map((ms) => ms - ((ms - layout.epoch) % layout.timeUnitMs)),
    datacenterId: fc.integer({ min: 0, max: layout.maxDatacenterId }),
    workerId: fc.integer({ min: 0, max: layout.maxWorkerId }),
    sequence: fc.integer({ min: 0, max: layout.maxSequence }),
    shard: fc.integer({ min: 0, max: layout.maxShard }),
  });
}

function chiSquare(counts: readonly number[]): number {
  const total = counts.reduce((a, b) => a + b, 0);
  const expected = total / counts.length;
  return counts.reduce((sum, count) => sum + (count - expected) ** 2 / expected, 0);
}

function describeKey(key: ShardKey): string {
  if (typeof key === 'bigint') return `${key}n`;
  if (key instanceof Uint8Array) return `bytes [${[...key].join(', ')}]`;
  return `${typeof key} ${JSON.stringify(key)}`;
}
