import type { LoggerService } from '@nestjs/common';
import type { Clock } from '../core/clock.js';
import type { Layout } from '../core/layout.js';
import type { IssuePermit } from '../core/permit.js';

/**
 * A worker ID handed to the generator, and what bounds its use.
 *
 * @publicApi
 */
export interface WorkerAssignment {
  workerId: number;
  datacenterId: number;
  /** Issue only timestamps strictly above this one, in layout ticks (-1 for none). */
  floor: number;
  /** Asked before every ID; absent for sources that never lapse (a static worker ID). */
  permit?: IssuePermit;
}

/**
 * What a worker-ID source may ask of the service that uses it.
 */
export interface WorkerSourceContext {
  readonly layout: Layout;
  readonly clock: Clock;
  readonly logger: LoggerService;
  /** The generator's last issued timestamp in ticks (or its floor before the first ID). */
  lastTimestamp(): number;
  /** Moves the generator to another worker ID, or stops it from issuing (`null`) until the next assignment. */
  reassign(assignment: WorkerAssignment | null): void;
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
  /** The last error met while claiming or renewing, if any. */
  lastError: string | null;
}

/**
 * Where a worker ID comes from: fixed (options, host name) or leased from Redis.
 *
 * @publicApi
 */
export interface WorkerIdSource {
  readonly kind: 'static' | 'hostname' | 'redis';
  /** Obtains the first worker ID. The module awaits it before the app serves. */
  start(context: WorkerSourceContext): Promise<WorkerAssignment>;
  /** Gives the worker ID back, recording the last issued timestamp (ticks). Idempotent. */
  stop(lastTimestamp: number): Promise<void>;
  /**
   * Asks for another worker ID because the current one cannot go on (the clock stepped back beyond the tolerance).
   * Sources that cannot switch return false, and the error reaches the caller.
   */
  requestSwitch(lastTimestamp: number, reason: string): boolean;
  /** Resolves once IDs may be issued again (after a switch or re-claim); rejects if that cannot happen. */
  whenReady(): Promise<void>;
  /** The lease state, for sources that hold one. */
  leaseStatus(): LeaseStatus | undefined;
}
