/**
 * The lease's arithmetic, each rule written once and free of I/O: where the fence stands, how high the ceiling
 * goes, how long a reused ID waits for its floor, and which worker ID a leased ID stands for.
 */
import type { Layout } from '../core/layout.js';
import { msAtTicks, ticksAtMs } from '../core/time-units.js';
import { Backoff } from './async-tools.js';
import type { LeaseSettings } from './lease.settings.js';
import type { LeaseCapacity } from './lease.status.js';

type Timing = Pick<LeaseSettings, 'ttlMs' | 'fenceMarginMs'>;

/**
 * The monotonic time at which a holder stops issuing unless it renews: `ttl - margin` after the request that
 * confirmed the lease was sent. Counting from the send, not the reply, covers a reply delayed in flight.
 */
export function fenceAtMono(sentMono: number, timing: Timing): number {
  return sentMono + timing.ttlMs - timing.fenceMarginMs;
}

/**
 * When to renew after a confirmed renewal, given how long is left until the new fence: one renew interval, or
 * sooner when a slow round trip left less than two intervals before the fence (at once when the reply came after
 * it), so that a slow renewal does not leave the lease fenced until the next one.
 */
export function nextRenewalInMs(untilFenceMs: number, timing: Pick<LeaseSettings, 'renewIntervalMs'>): number {
  return Math.min(timing.renewIntervalMs, Math.max(0, Math.floor(untilFenceMs - timing.renewIntervalMs)));
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

/**
 * The number of free IDs at or below which a namespace counts as low: `lowCapacityWarning` as a count (an integer,
 * 0 for "only when full") or as a fraction of the namespace (between 0 and 1, rounded up so that any fraction of a
 * namespace of a few IDs still warns before it is full).
 */
export function lowCapacityAtFree(lowCapacityWarning: number, size: number): number {
  if (lowCapacityWarning > 0 && lowCapacityWarning < 1) return Math.ceil(lowCapacityWarning * size);
  return lowCapacityWarning;
}

/** How many IDs of a namespace of `size` are held and free, from the live-lease count a script reply carried. */
export function capacityOf(size: number, held: number, lowAtFree: number, checkedAt: number): LeaseCapacity {
  // A layout change while leases live is refused, so held never exceeds size; clamp all the same for the report.
  const heldNow = Math.min(Math.max(0, held), size);
  const free = size - heldNow;
  return { size, held: heldNow, free, low: free <= lowAtFree, checkedAt };
}

/**
 * How long a claim of a full namespace sleeps before it asks again: until the soonest live lease lapses (server
 * ms, -1 for none known) and a little after, but at most `pollMs` (a holder that stops gracefully releases its ID
 * before its lease would lapse, and the next ask finds it), at least `minMs` (a lease renewed just before it lapsed
 * is not asked about in a tight loop), and never beyond what is left of the bound.
 */
export function freeWaitMs(
  soonestExpiry: number,
  serverNowMs: number,
  leftMs: number,
  bounds: { minMs: number; pollMs: number },
): number {
  const untilExpiry = soonestExpiry < 0 ? bounds.pollMs : soonestExpiry - serverNowMs + 5;
  return Math.max(0, Math.min(leftMs, Math.max(bounds.minMs, Math.min(bounds.pollMs, untilExpiry))));
}
