import { SequenceExhaustedError, SnowflakeConfigError, WorkerUnavailableError } from '../core/errors.js';
import type { NextIdOptions } from '../core/generator.options.js';
import type { Layout } from '../core/layout.js';
import { shardOfKey, type ShardKey } from '../core/shard-key.js';

/**
 * Where the ORM integrations take IDs from: what they need of `IdService`. A bare `SnowflakeGenerator` fits too.
 *
 * @publicApi
 */
export interface IdIssuer {
  /**
   * The layout IDs follow: the TypeORM integration refuses `number` properties when it is wider than 53 bits, and
   * `shardFrom` when it has no shard field.
   */
  readonly layout: Pick<Layout, 'totalBits'> & Partial<Pick<Layout, 'shardBits'>>;
  /**
   * The next ID, now; with `{ shardKey }`, in the key's shard.
   * @throws SequenceExhaustedError, WorkerUnavailableError when it cannot be issued now
   */
  next(options?: NextIdOptions): bigint;
  /**
   * The next ID, waiting (without blocking) for the sequence of the next time unit or for a lease being re-claimed,
   * so that a write waits instead of failing. `IdService` waits for a worker ID at most `maxAsyncWaitMs`, then rejects
   * with `WorkerWaitTimeoutError` (503 over HTTP), so that an insert during a Redis outage is bounded too.
   */
  nextAsync(options?: NextIdOptions): Promise<bigint>;
}

/**
 * The least an integration can take IDs from: `next()`, and `nextAsync()` to wait when `next()` cannot issue now
 * (without it, such an error fails the write). The Prisma extension takes it; `IdService` and `SnowflakeGenerator` fit.
 *
 * @publicApi
 */
export type SnowflakeIdSource = Pick<IdIssuer, 'next'> & Partial<Pick<IdIssuer, 'nextAsync' | 'layout'>>;

/**
 * The next ID: issued now when it can be, otherwise a promise of it when waiting can help. A used-up sequence and a
 * lease being re-claimed are worth waiting for when the source can wait; anything else (a clock gone back beyond the
 * tolerance) is thrown as `next()` threw it.
 *
 * The synchronous result lets a caller that fills many rows stay synchronous while IDs come at once, and pay for a
 * promise only when it has to wait.
 *
 * @internal
 */
export function issueOrWait(ids: SnowflakeIdSource, options?: NextIdOptions): bigint | Promise<bigint> {
  try {
    return ids.next(options);
  } catch (error) {
    const waitable = error instanceof SequenceExhaustedError || error instanceof WorkerUnavailableError;
    if (!waitable || ids.nextAsync === undefined) throw error;
    return ids.nextAsync(options);
  }
}

/**
 * The shard bits of the layout `ids` issues for, checked once where an integration is set up with a `shardFrom`.
 *
 * @throws SnowflakeConfigError when the source has no layout with a shard field
 * @internal
 */
export function shardBitsOfSource(ids: SnowflakeIdSource, option: string): number {
  const bits = ids.layout?.shardBits ?? 0;
  if (bits > 0) return bits;
  throw new SnowflakeConfigError(
    option,
    ids.layout === undefined
      ? 'the ID source has no `layout`, so the shard field cannot be checked; pass IdService or a SnowflakeGenerator.'
      : "the layout has no shard field to hold the key's shard. Use the 'sharded' preset or set `layout.shardBits`.",
  );
}

/**
 * The ID issued for `key`, after checking that it carries the key's shard: a source that ignores `shardKey` (a
 * wrapper written as `next: () => ids.next()`) would otherwise put every row in shard 0 without a word.
 *
 * @internal
 */
export function checkShard(id: bigint, key: ShardKey, shardBits: number): bigint {
  const shard = shardOfKey(key, shardBits);
  if (Number(id & BigInt(2 ** shardBits - 1)) === shard) return id;
  throw new SnowflakeConfigError(
    'ids',
    `the ID source issued ${id} in shard ${Number(id & BigInt(2 ** shardBits - 1))} for a key of shard ${shard}: ` +
      'its next() must pass its options on (`next: (options) => idService.next(options)`).',
  );
}
