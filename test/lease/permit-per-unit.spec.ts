/**
 * The lease is asked once per issued time unit, not once per ID (ASKED_ONCE_PER_UNIT in permit.ts), on fake time
 * against the lease rules in memory. What the invariants require, and what these tests hold the code to:
 * - fencing (invariant 4) bounds the timestamps a holder issues: a unit first issued before the fence may be
 *   continued after it (no later holder can issue in that unit), but no unit is begun once the fence time has come;
 * - a loss (invariant 5) stops issuing at once: the very next call, in the same unit, is refused.
 * A 1 s time unit makes "the same unit" last long enough for renewals and fences to happen inside it.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { WorkerUnavailableError } from '../../lib/core/errors.js';
import { SnowflakeGenerator } from '../../lib/core/generator.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { resolveLeaseSettings } from '../../lib/lease/lease.settings.js';
import { RedisWorkerSource } from '../../lib/lease/redis-worker.source.js';
import { IdService } from '../../lib/module/id.service.js';
import { WorkerBinding } from '../../lib/worker/worker-binding.js';
import { MemoryLeaseBackend } from '../support/memory-lease-backend.js';
import { SteppableClock } from '../support/time.js';

const TTL = 10_000;
const START = Date.UTC(2026, 10, 23, 12);
let namespaces = 0;
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** A steppable wall clock that counts the monotonic readings, the permit's one clock read of its own. */
class CountingClock extends SteppableClock {
  monotonicReads = 0;
  override monotonicNow(): number {
    this.monotonicReads++;
    return super.monotonicNow();
  }
}

async function leased() {
  jest.useFakeTimers({ now: START });
  const layout = resolveLayout({ workerBits: 2, timeUnitMs: 1000 });
  // A margin wide enough for 1 s units beside the clock bounds (resolveClockBounds), a clock bound above one unit.
  const settings = resolveLeaseSettings(
    { url: 'redis://unused', ttlMs: TTL, fenceMarginMs: 6000, renewIntervalMs: 2000, maxClockOffsetMs: 1000 },
    layout,
  );
  const backend = new MemoryLeaseBackend(4, TTL, `per-unit-${++namespaces}`);
  const clock = new CountingClock();
  const source = new RedisWorkerSource(settings, 0, () => Promise.resolve(backend));
  const generator = new SnowflakeGenerator({ layout, clock, clockBackToleranceMs: settings.clockBackToleranceMs });
  const ids = new IdService(new WorkerBinding(generator, source, layout, clock, quiet));
  await ids.onModuleInit();
  const unitOf = (id: bigint): bigint => id >> BigInt(layout.timestampShift);
  /** The reason `next()` is refused now, or the ID it issues. */
  const attempt = (): bigint | string => {
    try {
      return ids.next();
    } catch (error) {
      if (error instanceof WorkerUnavailableError) return error.reason;
      throw error;
    }
  };
  /** Lets `ms` of time pass for timers and the monotonic clock while the wall clock stands still. */
  const passWithWallStill = async (ms: number): Promise<void> => {
    clock.step(-ms);
    await jest.advanceTimersByTimeAsync(ms);
  };
  /** Moves fake time to the start of the next time unit, plus `intoMs`. */
  const toNextUnit = async (intoMs: number): Promise<void> => {
    const sinceEpoch = clock.now() - layout.epoch;
    await jest.advanceTimersByTimeAsync(1000 - (sinceEpoch % 1000) + intoMs);
  };
  return { ids, backend, clock, settings, attempt, passWithWallStill, toNextUnit, unitOf };
}

afterEach(() => {
  jest.useRealTimers();
});

describe('the lease permit, asked once per time unit', () => {
  it('reads no clock of its own for IDs that continue the unit of the last one', async () => {
    const { ids, clock, toNextUnit, unitOf } = await leased();
    await toNextUnit(100);
    const first = ids.next();
    const readsAfterFirst = clock.monotonicReads;
    expect(readsAfterFirst).toBeGreaterThan(0);
    const more = Array.from({ length: 1000 }, () => ids.next());
    expect(clock.monotonicReads).toBe(readsAfterFirst);
    expect(more.every((id) => unitOf(id) === unitOf(first))).toBe(true);
    await toNextUnit(0);
    const inNextUnit = ids.next();
    expect(unitOf(inNextUnit)).toBe(unitOf(first) + 1n);
    expect(clock.monotonicReads).toBeGreaterThan(readsAfterFirst);
    await ids.onApplicationShutdown();
  });

  it('past the fence, continues only the unit allowed before it and refuses the next unit', async () => {
    const { ids, backend, settings, attempt, passWithWallStill, toNextUnit, unitOf } = await leased();
    backend.down = true;
    const fenceAt = TTL - settings.fenceMarginMs;
    // Start a unit 100 ms before the fence, then let the fence pass while the wall clock stays in that unit.
    await jest.advanceTimersByTimeAsync(fenceAt - 100);
    const before = attempt();
    expect(typeof before).toBe('bigint');
    await passWithWallStill(200);
    expect(ids.status().lease?.state).toBe('fenced');
    const after = attempt();
    expect(typeof after).toBe('bigint');
    expect(unitOf(after as bigint)).toBe(unitOf(before as bigint));
    expect(after as bigint).toBeGreaterThan(before as bigint);
    // The first call from any other unit asks the lease, which is fenced.
    await toNextUnit(0);
    expect(attempt()).toBe('fenced');
    expect(attempt()).toBe('fenced');
    await ids.onApplicationShutdown();
  });

  it('refuses at once, in the same unit, once a renewal finds the lease taken', async () => {
    const { ids, backend, attempt, passWithWallStill, unitOf } = await leased();
    backend.latencyMs = 500;
    backend.steal(ids.workerId);
    // Run until the renewal that will find the lease taken has been sent; its answer takes 500 ms.
    const sent = backend.calls.renew;
    while (backend.calls.renew === sent) await jest.advanceTimersByTimeAsync(10);
    const issued = attempt();
    expect(typeof issued).toBe('bigint');
    const again = attempt();
    expect(unitOf(again as bigint)).toBe(unitOf(issued as bigint));
    await passWithWallStill(600);
    expect(ids.status().lease?.state).not.toBe('held');
    expect(attempt()).toBe('lost');
    // The re-claim runs on the fake timers too: let them run while the app stops.
    const stopped = ids.onApplicationShutdown();
    await jest.advanceTimersByTimeAsync(5000);
    await stopped;
  });

  it('asks the lease on every call while the clock stands behind the last unit, and refuses a stepped clock', async () => {
    const { ids, clock, attempt, toNextUnit } = await leased();
    await toNextUnit(100);
    ids.next();
    const reads = clock.monotonicReads;
    clock.step(-600);
    // 600 ms behind: in the unit before, within the clock-back tolerance: the last unit continues, asking the lease each time.
    expect(typeof attempt()).toBe('bigint');
    expect(typeof attempt()).toBe('bigint');
    expect(clock.monotonicReads).toBeGreaterThanOrEqual(reads + 2);
    // Far from the Redis server's clock: refused at once, although the unit has IDs left.
    clock.step(-5000);
    expect(attempt()).toBe('clock');
    await ids.onApplicationShutdown();
  });
});
