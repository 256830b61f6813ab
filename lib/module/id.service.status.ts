/** What `IdService.status()` reports, read from the binding: the worker, the generator's counters, the lease. */
import type { GeneratorStats } from '../core/generator.options.js';
import { msAtTicks } from '../core/time-units.js';
import { reportsLease, type LeaseStatus } from '../lease/lease.status.js';
import type { WorkerBinding } from '../worker/worker-binding.js';
import type { WorkerIdSource } from '../worker/worker-source.js';

/**
 * What `IdService.status()` reports: the worker, the generator's counters and, with a Redis lease, the lease.
 *
 * @publicApi
 */
export interface SnowflakeStatus extends GeneratorStats {
  source: WorkerIdSource['kind'];
  /** Whether an ID may be issued right now. */
  ready: boolean;
  workerId: number | null;
  datacenterId: number | null;
  /** The last issued timestamp (or the floor before the first ID) as Unix ms; null before any. */
  lastTimestampMs: number | null;
  /** How far the clock stands behind the timestamp it must exceed, in ms; 0 when it is ahead. */
  clockBehindMs: number;
  /**
   * The module's clock when this status was taken, as Unix ms. The other times here (the lease's `expiresAt`,
   * `lastRenewalAt`) are read from that clock, so compare them with this rather than with `Date.now()`.
   */
  nowMs: number;
  /** The lease, when the worker ID comes from Redis. */
  lease?: LeaseStatus;
}

/** The status of a binding's generator and source, now. */
export function statusOf(binding: WorkerBinding): SnowflakeStatus {
  const { generator, layout, source } = binding;
  const stats = generator.stats();
  const lastTimestampMs = stats.lastTimestamp < 0 ? null : msAtTicks(layout, stats.lastTimestamp);
  const nowMs = binding.clock.now();
  const lease = reportsLease(source) ? source.leaseStatus() : undefined;
  const mustExceedMs = Math.max(lastTimestampMs ?? -Infinity, lease?.floorMs ?? -Infinity);
  const assigned = binding.isAssigned;
  return {
    ...stats,
    source: source.kind,
    ready: assigned && (lease === undefined || (lease.state === 'held' && lease.clockInSync)),
    workerId: assigned ? generator.workerId : null,
    datacenterId: assigned ? generator.datacenterId : null,
    lastTimestampMs,
    clockBehindMs: Number.isFinite(mustExceedMs) ? Math.max(0, mustExceedMs - nowMs) : 0,
    nowMs,
    lease,
  };
}
