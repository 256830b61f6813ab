/**
 * The conformance suite fails sources that break the contract: one that never fences (the Redis lease with its
 * fence taken out) and one that forgets floors (a naive in-memory table). A suite that passed them would prove
 * nothing.
 */
import { WorkerUnavailableError } from '../../lib/core/errors.js';
import { resolveLayout } from '../../lib/core/layout.js';
import type { IssuePermit } from '../../lib/core/permit.js';
import {
  conformanceCases,
  runWorkerSourceConformance,
  type ConformanceResult,
  type WorkerSourceFactory,
} from '../../lib/testing.js';
import type { WorkerAssignment, WorkerIdSource, WorkerSourceContext } from '../../lib/worker/worker-source.js';
import { sharedRedisUrl } from '../support/shared-redis.js';
import { redisLeaseFactory } from '../support/redis-lease-factory.js';

const FENCE_CASE = 'a holder that cannot renew stops issuing by ttl - margin';
const FLOOR_CASE = "a reused ID's first timestamp lies above all its previous holder issued, with skewed clocks";

/** Wraps a source so that its permit keeps issuing when it should fence. */
class NeverFences implements WorkerIdSource {
  readonly kind = 'never-fences';
  constructor(readonly inner: WorkerIdSource) {}

  async start(context: WorkerSourceContext): Promise<WorkerAssignment> {
    const wrapped: WorkerSourceContext = {
      layout: context.layout,
      clock: context.clock,
      logger: context.logger,
      lastTimestamp: () => context.lastTimestamp(),
      reassign: (assignment) => context.reassign(assignment === null ? null : this.unfenced(assignment)),
    };
    return this.unfenced(await this.inner.start(wrapped));
  }

  stop(last: number): Promise<void> {
    return this.inner.stop(last);
  }

  requestSwitch(last: number, reason: string): boolean {
    return this.inner.requestSwitch(last, reason);
  }

  whenReady(): Promise<void> {
    return this.inner.whenReady();
  }

  private unfenced(assignment: WorkerAssignment): WorkerAssignment {
    const permit = assignment.permit;
    if (permit === undefined) return assignment;
    const broken: IssuePermit = {
      ceiling(nowMs) {
        try {
          return permit.ceiling(nowMs);
        } catch (error) {
          if (error instanceof WorkerUnavailableError && error.reason === 'fenced') return Number.MAX_SAFE_INTEGER;
          throw error;
        }
      },
    };
    return { ...assignment, permit: broken };
  }
}

/** A shared table of worker IDs with no memory of what a holder issued: every reused ID starts with no floor. */
function forgetfulTableFactory(): WorkerSourceFactory {
  const layout = resolveLayout({ workerBits: 2 });
  const held = new Set<number>();
  return {
    name: 'a table that forgets floors',
    layout,
    workerIdCount: 4,
    ttlMs: 3000,
    fenceMarginMs: 600,
    renewIntervalMs: 750,
    clockBackToleranceMs: 300,
    maxClockSkewMs: 200,
    create() {
      let mine: number | undefined;
      return {
        kind: 'forgetful',
        start() {
          for (let id = 0; id < 4; id++) {
            if (!held.has(id)) {
              held.add(id);
              mine = id;
              return Promise.resolve({ workerId: id, datacenterId: 0, floor: -1 });
            }
          }
          return Promise.reject(new Error('no free worker ID'));
        },
        stop() {
          if (mine !== undefined) held.delete(mine);
          return Promise.resolve();
        },
        requestSwitch: () => false,
        whenReady: () => Promise.resolve(),
      };
    },
    reset() {
      held.clear();
      return Promise.resolve();
    },
  };
}

function outcome(results: ConformanceResult[], name: string): ConformanceResult {
  const result = results.find((r) => r.name === name);
  if (result === undefined) throw new Error(`no case named "${name}"`);
  return result;
}

describe('the conformance suite fails broken worker-ID sources', () => {
  it('fails a source that never fences, on the fence case, saying how late it issued', async () => {
    const redis = redisLeaseFactory(sharedRedisUrl());
    try {
      const broken: WorkerSourceFactory = {
        ...redis,
        name: 'a Redis lease that never fences',
        create: (clock) => new NeverFences(redis.create(clock)),
        capabilities: {
          partition: (source) => redis.capabilities!.partition!((source as NeverFences).inner),
          heal: (source) => redis.capabilities!.heal!((source as NeverFences).inner),
        },
      };
      const fence = conformanceCases(broken).find((c) => c.name === FENCE_CASE);
      await expect(fence?.run()).rejects.toThrow(/issued \d+ ms after it was cut off, beyond ttl - margin/);
    } finally {
      await redis.close();
    }
  }, 60_000);

  it('fails a source that forgets floors, on the reuse case, naming the IDs', async () => {
    const results = await runWorkerSourceConformance(forgetfulTableFactory());
    const floor = outcome(results, FLOOR_CASE);
    expect(floor.status).toBe('failed');
    expect(floor.reason).toMatch(/issued \d+ .* below its previous holder's last ID \d+ .*the floor was lost/);
    expect(outcome(results, FENCE_CASE).status).toBe('not applicable');
  }, 60_000);
});
