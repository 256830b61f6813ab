/**
 * The lease's arithmetic, each rule written once and free of I/O: where the fence stands, how high the ceiling
 * goes, how long a reused ID waits for its floor, and which worker ID a leased ID stands for.
 */
import type { Layout } from '../core/layout.js';
import { msAtTicks, ticksAtMs } from '../core/time-units.js';
import { Backoff } from './async-tools.js';
import type { LeaseSettings } from './lease.settings.js';

type Timing = Pick<LeaseSettings, 'ttlMs' | 'fenceMarginMs'>;

/**
 * The monotonic time at which a holder stops issuing unless it renews: `ttl - margin` after the request that
 * confirmed the lease was sent. Counting from the send, not the reply, covers a reply delayed in flight.
 */
export function fenceAtMono(sentMono: number, timing: Timing): number {
  return sentMono + timing.ttlMs - timing.fenceMarginMs;
}

/**
 * The ceiling a claim or renewal stores: one TTL above the holder's clock or its last timestamp, whichever is
 * higher (a clock that jumped ahead issued up to there already). `lastMs` is -1 when nothing was issued.
 */
export function ceilingMsFor(holderNowMs: number, lastMs: number, timing: Pick<Timing, 'ttlMs'>): number {
  return Math.max(holderNowMs, lastMs) + timing.ttlMs;
}

/** How long the wall clock must advance before the first timestamp above `floorMs` can be issued. */
export function floorWaitMs(floorMs: number | null, nowMs: number, layout: Layout): number {
  if (floorMs === null) return 0;
  const firstAllowedMs = msAtTicks(layout, ticksAtMs(layout, floorMs) + 1);
  return Math.max(0, Math.ceil(firstAllowedMs - nowMs));
}

/**
 * The worker and datacenter IDs a leased ID stands for: the worker ID itself, or, when the lease allocates
 * datacenters too, the datacenter in the high bits.
 */
export function workerOf(
  leasedId: number,
  layout: Layout,
  allocateDatacenter: boolean,
  fixedDatacenterId: number,
): { workerId: number; datacenterId: number } {
  if (!allocateDatacenter) return { workerId: leasedId, datacenterId: fixedDatacenterId };
  return { workerId: leasedId & layout.maxWorkerId, datacenterId: Math.floor(leasedId / 2 ** layout.workerBits) };
}

/**
 * The back-off of every retry loop of the lease: from `retryBackoffMs`, doubling, at most one renew interval, so
 * that a renewal is tried again before the fence whatever failed before it.
 */
export function leaseBackoff(settings: Pick<LeaseSettings, 'retryBackoffMs' | 'renewIntervalMs'>): Backoff {
  return new Backoff(settings.retryBackoffMs, Math.max(settings.retryBackoffMs, settings.renewIntervalMs));
}
