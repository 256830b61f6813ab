/**
 * `IdService`'s asynchronous issuing: one ID or a batch, waiting without blocking the event loop for the next time
 * unit and, through the binding, for a worker ID (bounded by `maxAsyncWaitMs` or the call's `timeoutMs`).
 */
import { assertBatchCount } from '../core/generator.options.js';
import { withShard } from '../core/shard-key.js';
import type { AsyncIdOptions } from '../worker/issue-wait.js';
import type { WorkerBinding } from '../worker/worker-binding.js';

/** The next ID of the binding's generator, waiting while it cannot issue. */
export async function issueAsync(binding: WorkerBinding, options?: AsyncIdOptions): Promise<bigint> {
  const { generator } = binding;
  // The key is checked before any wait, so that a bad key fails at once.
  const shard = options === undefined ? 0n : generator.shardBitsOf(options);
  const wait = binding.startWait(options);
  for (;;) {
    try {
      return shard | generator.nextWithoutWaiting();
    } catch (caught) {
      await binding.waitToIssue(caught, wait);
    }
  }
}

/** `count` IDs of the binding's generator in increasing order, waiting while it cannot issue. */
export async function issueBatchAsync(
  binding: WorkerBinding,
  count: number,
  options?: AsyncIdOptions,
): Promise<bigint[]> {
  const { generator } = binding;
  const shard = options === undefined ? 0n : generator.shardBitsOf(options);
  assertBatchCount(count, 'nextBatchAsync');
  const wait = binding.startWait(options);
  const out: bigint[] = [];
  let waited = false;
  while (out.length < count) {
    try {
      generator.fillWithoutWaiting(out, count);
    } catch (caught) {
      await binding.waitToIssue(caught, wait);
      waited = true;
    }
  }
  // A lease switch while the batch waited continues under another worker ID, whose IDs may sort below the ones
  // before it. All are distinct; sorting restores the promised order.
  if (waited && !isIncreasing(out)) out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return withShard(shard, out);
}

function isIncreasing(ids: readonly bigint[]): boolean {
  for (let i = 1; i < ids.length; i++) if (ids[i] <= ids[i - 1]) return false;
  return true;
}
