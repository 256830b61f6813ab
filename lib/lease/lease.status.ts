import { WorkerUnavailableError } from '../core/errors.js';
import { isFenced, type LeasePhase } from './lease.phase.js';
import type { LeaseSettings } from './lease.settings.js';
import type { ServerClock } from './server-clock.js';

/**
 * How many worker IDs of the lease's namespace are held and free, as the last claim or renewal counted them (one
 * O(log N) count in Redis against the server's clock, so the count costs the same however many IDs are held).
 *
 * @publicApi
 */
export interface LeaseCapacity {
  /** Worker IDs in the namespace (datacenter and worker IDs together with `allocateDatacenter`). */
  size: number;
  /** IDs held by a live lease, this instance's included. */
  held: number;
  /** IDs a new instance could claim now: `size - held`. */
  free: number;
  /** Whether `free` is at or below `redis.lowCapacityWarning`. */
  low: boolean;
  /** Local Unix ms of the reply that carried the count. */
  checkedAt: number;
}

/**
 * The state of a Redis worker-ID lease, as the health indicator and `IdService.status()` report it.
 *
 * @publicApi
 */
export interface LeaseStatus {
  /**
   * `held`: IDs may be issued (while the clock is in sync). `settling`: Redis lost the namespace's data and this
   * instance waits for the namespace to settle before it claims. The others: nothing is issued until a new claim
   * succeeds.
   */
  state: 'idle' | 'claiming' | 'settling' | 'held' | 'fenced' | 'lost' | 'switching' | 'released';
  namespace: string;
  workerId: number | null;
  datacenterId: number | null;
  /** When the lease would lapse in Redis if not renewed, as local Unix ms. */
  expiresAt: number | null;
  /** Milliseconds until the holder fences itself (stops issuing) unless a renewal succeeds first. */
  fenceInMs: number | null;
  /**
   * The least `fenceInMs` while renewals succeed: ttl - fence margin - renew interval, when a renewal is due. Lower
   * means renewals are overdue.
   */
  lowestFenceInMs: number;
  /** Local Unix ms of the last successful claim or renewal. */
  lastRenewalAt: number | null;
  /** Renewals that failed in a row (Redis unreachable or slow). */
  renewalFailures: number;
  /**
   * Local wall clock minus Redis server clock, in ms: measured on every round trip and projected to now on the
   * monotonic clock, so that a step of the wall clock shows at once.
   */
  clockOffsetMs: number | null;
  /** Half the round trip of the last measurement: the error of the offset, ms. */
  clockErrorMs: number | null;
  /** The most the offset (plus its error) may be while IDs are issued. */
  maxClockOffsetMs: number;
  /** Whether the offset is within that bound now; IDs are refused (`reason: 'clock'`) while it is not. */
  clockInSync: boolean;
  /** While `settling`: how long until the namespace has settled, ms. */
  settlingInMs: number | null;
  /** The highest timestamp the holder may issue until it renews, as Unix ms. */
  ceilingMs: number | null;
  /** The previous holder's ceiling this holder must stay above, as Unix ms (null for a never-used ID). */
  floorMs: number | null;
  /** Worker-ID switches since start (clock steps back, lost leases). */
  switches: number;
  /**
   * The last error met while claiming or renewing, while it is current: cleared by the next confirmed claim or
   * renewal, so that a recovered lease never reports an error from its past (the log keeps them).
   */
  lastError: string | null;
  /** Held and free IDs of the namespace at the last claim or renewal; null before the first. */
  capacity: LeaseCapacity | null;
  /** `capacity.low` holds at this many free IDs or fewer (`redis.lowCapacityWarning` as a count). */
  lowCapacityAtFree: number;
}

/** A worker-ID source that holds a lease and reports it (the Redis lease does). */
export interface ReportsLease {
  leaseStatus(): LeaseStatus;
}

export function reportsLease(source: object): source is ReportsLease {
  return typeof (source as Partial<ReportsLease>).leaseStatus === 'function';
}

/** What the lease's status is read from. */
export interface LeaseReading {
  phase: LeasePhase;
  settings: LeaseSettings;
  serverClock: ServerClock;
  /** The monotonic and wall clocks, read together. */
  mono: number;
  wall: number;
  lastRenewalAt: number | null;
  renewalFailures: number;
  switches: number;
  lastError: string | null;
  capacity: LeaseCapacity | null;
}

/** The lease's status at one moment: `fenced` is derived from the time, the rest read from the phase. */
export function describeLease(reading: LeaseReading): LeaseStatus {
  const { phase, settings, serverClock, mono, wall } = reading;
  const lease = phase.name === 'held' ? phase.lease : undefined;
  const offsetMs = serverClock.offsetNow(wall, mono);
  return {
    state: lease !== undefined && isFenced(lease, mono) ? 'fenced' : phase.name,
    namespace: settings.namespace,
    workerId: lease?.workerId ?? null,
    datacenterId: lease?.datacenterId ?? null,
    expiresAt: lease === undefined || offsetMs === null ? null : Math.round(lease.serverExpiry + offsetMs),
    fenceInMs: lease === undefined ? null : Math.max(0, Math.round(lease.fenceAt - mono)),
    lowestFenceInMs: settings.ttlMs - settings.fenceMarginMs - settings.renewIntervalMs,
    lastRenewalAt: reading.lastRenewalAt,
    renewalFailures: reading.renewalFailures,
    clockOffsetMs: offsetMs,
    clockErrorMs: serverClock.lastErrorMs,
    maxClockOffsetMs: settings.maxClockOffsetMs,
    clockInSync: serverClock.skewMs(wall, mono) <= serverClock.boundMs,
    settlingInMs: phase.name === 'settling' ? Math.max(0, Math.round(phase.untilMono - mono)) : null,
    ceilingMs: lease?.ceilingMs ?? null,
    floorMs: lease?.floorMs ?? null,
    switches: reading.switches,
    lastError: reading.lastError,
    capacity: reading.capacity,
    lowCapacityAtFree: settings.lowCapacityAtFree,
  };
}

/** What a wait for a worker ID that ran out reports of the lease: its state, in words, and when to retry. */
export interface LeaseWaitReading {
  state: LeaseStatus['state'];
  lastError: string | null;
  detail: string;
  retryAfterMs?: number;
}

/** The lease's part of a `WorkerWaitTimeoutError`: why no worker ID was usable when the wait ran out. */
export function describeLeaseWait(status: LeaseStatus): LeaseWaitReading {
  const { state, lastError, namespace } = status;
  const failures =
    status.renewalFailures === 0
      ? ''
      : `, ${status.renewalFailures} renewal${status.renewalFailures === 1 ? '' : 's'} failed in a row`;
  const unreachable = lastError === null ? '' : ', Redis unreachable or not answering';
  switch (state) {
    case 'settling':
      return {
        state,
        lastError,
        detail:
          `namespace "${namespace}" is settling after Redis lost its data (restart, failover, flush), ` +
          `${status.settlingInMs ?? 0} ms left`,
        retryAfterMs: status.settlingInMs ?? undefined,
      };
    case 'fenced':
      return {
        state,
        lastError,
        detail: `the lease on worker ID ${status.workerId} could not be renewed in time${failures}${unreachable}`,
      };
    case 'held':
      return {
        state,
        lastError,
        detail: status.clockInSync
          ? `the lease on worker ID ${status.workerId} came back as the wait ended`
          : `the lease on worker ID ${status.workerId} is held, but this wall clock stands ` +
            `${status.clockOffsetMs} ms from the Redis server's, beyond redis.maxClockOffsetMs`,
      };
    case 'released':
      return { state, lastError, detail: 'the application is shutting down' };
    default:
      // lost, claiming, switching, idle: no worker ID is held and one is being claimed.
      return { state, lastError, detail: `a worker ID of namespace "${namespace}" is being claimed${unreachable}` };
  }
}

/** Why a wait for a usable lease ran out after `limitMs`, as the error `whenReady()` rejects with. */
export function leaseNotReady(status: LeaseStatus, limitMs: number): WorkerUnavailableError {
  const reason = status.state === 'settling' ? 'settling' : status.state === 'fenced' ? 'fenced' : 'lost';
  const lastError = status.lastError === null ? '' : `: ${status.lastError}`;
  return new WorkerUnavailableError(
    reason,
    `no worker ID could be confirmed within ${limitMs} ms; lease ${status.state}${lastError}`,
    status.settlingInMs ?? undefined,
  );
}
