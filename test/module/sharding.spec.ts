import 'reflect-metadata';
import { Injectable, type LoggerService } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { InvalidShardKeyError, InvalidSnowflakeError, SnowflakeConfigError } from '../../lib/core/errors.js';
import { shardOfKey } from '../../lib/core/shard-key.js';
import { IdService } from '../../lib/module/id.service.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';
import type { SnowflakeModuleOptions } from '../../lib/module/snowflake.options.js';
import { FakeClock } from '../support/fake-clock.js';

const quiet: LoggerService = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };
const START = Date.UTC(2026, 10, 24, 12);

/** An app service that issues the IDs of a user's orders, all on the user's shard. */
@Injectable()
class OrderIds {
  constructor(readonly ids: IdService) {}

  forUser(userId: bigint): bigint {
    return this.ids.next({ shardKey: userId });
  }
}

async function boot(options: SnowflakeModuleOptions): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [SnowflakeModule.forRoot(options)],
    providers: [OrderIds],
  })
    .setLogger(quiet)
    .compile();
  await moduleRef.init();
  return moduleRef;
}

describe('shards through the module', () => {
  let moduleRef: TestingModule;
  let ids: IdService;

  beforeAll(async () => {
    moduleRef = await boot({ workerId: 7, layout: 'sharded', clock: new FakeClock(START).autoAdvance(1, 50) });
    ids = moduleRef.get(IdService);
  });

  afterAll(() => moduleRef.close());

  it('gives every order of a user the user shard, read back by decode, shardOf and id % 16', () => {
    const orders = moduleRef.get(OrderIds);
    for (const user of [1n, 2n, 3n, 1234567890123n]) {
      const shard = ids.shardOfKey(user);
      expect(shard).toBe(shardOfKey(user, 4));
      for (let i = 0; i < 5; i++) {
        const id = orders.forUser(user);
        expect(ids.decode(id)).toMatchObject({ workerId: 7, shard });
        expect(ids.shardOf(id)).toBe(shard);
        expect(ids.shardOf(id.toString())).toBe(shard);
        expect(Number(id % 16n)).toBe(shard);
      }
    }
  });

  it('gives a key the same shard in another app, whatever type holds it', async () => {
    const other = await boot({ workerId: 200, layout: 'sharded' });
    try {
      const there = other.get(IdService);
      const id = there.next({ shardKey: '42' });
      expect(ids.shardOf(id)).toBe(ids.shardOf(ids.next({ shardKey: 42 })));
      expect(there.shardOf(there.nextString({ shardKey: 42n }))).toBe(ids.shardOfKey(42));
    } finally {
      await other.close();
    }
  });

  it('carries the key through nextBatch, nextBatchAsync and nextAsync, in increasing order', async () => {
    const shard = ids.shardOfKey('tenant:acme');
    const all = [
      ...ids.nextBatch(3_000, { shardKey: 'tenant:acme' }),
      ...(await ids.nextBatchAsync(5_000, { shardKey: 'tenant:acme' })),
      await ids.nextAsync({ shardKey: 'tenant:acme' }),
    ];
    expect(all.every((id) => ids.shardOf(id) === shard)).toBe(true);
    expect(all.every((id, i) => i === 0 || id > all[i - 1])).toBe(true);
  });

  it('refuses an unusable or empty key before issuing anything', async () => {
    const issued = ids.status().issued;
    expect(() => ids.next({ shardKey: 0.5 })).toThrow(InvalidShardKeyError);
    expect(() => ids.next({ shardKey: undefined })).toThrow(/`shardKey` is given but empty/);
    await expect(ids.nextAsync({ shardKey: undefined })).rejects.toThrow(InvalidShardKeyError);
    await expect(ids.nextBatchAsync(3, { shardKey: {} as never })).rejects.toThrow(InvalidShardKeyError);
    expect(ids.status().issued).toBe(issued);
  });
});

describe('sequenceStart through the module', () => {
  it('spreads id % 16 of IDs issued one per millisecond', async () => {
    const clock = new FakeClock(START);
    const moduleRef = await boot({ workerId: 1, layout: 'twitter', sequenceStart: 'rotating', clock });
    try {
      const ids = moduleRef.get(IdService);
      const counts = new Array<number>(16).fill(0);
      for (let i = 0; i < 1_600; i++) {
        clock.advance(1);
        counts[Number(ids.next() % 16n)]++;
      }
      // Rotating offsets visit every residue in turn: 100 each.
      expect(counts).toEqual(new Array(16).fill(100));
    } finally {
      await moduleRef.close();
    }
  });

  it('fails at bootstrap for an unknown mode, and a key on a layout without a shard field fails the call', async () => {
    await expect(boot({ workerId: 1, sequenceStart: 'spread' as never })).rejects.toThrow(SnowflakeConfigError);
    await expect(boot({ workerId: 1, sequenceStart: 'spread' as never })).rejects.toThrow(
      /`sequenceStart`: expected one of 'zero', 'random', 'rotating'/,
    );
    await expect(boot({ workerId: 1, layout: { preset: 'sharded', shardBit: 4 } as never })).rejects.toThrow(
      /did you mean `shardBits`/,
    );
    const moduleRef = await boot({ workerId: 1 });
    try {
      const ids = moduleRef.get(IdService);
      expect(() => ids.next({ shardKey: 'user-1' })).toThrow(/no shard field/);
      expect(() => ids.shardOf(ids.next())).toThrow(InvalidSnowflakeError);
      expect(ids.decode(ids.next())).not.toHaveProperty('shard');
    } finally {
      await moduleRef.close();
    }
  });
});
