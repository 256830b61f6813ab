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
 * What a worker-ID source may ask of the generator it serves: the binding between them, which runs one way (the
 * source hands assignments in; nothing reaches back into the source but `requestSwitch`).
 *
 * @publicApi
 */
export interface WorkerSourceContext {
  readonly layout: Layout;
  readonly clock: Clock;
  readonly logger: LoggerService;
  /** The generator's last issued timestamp in ticks (or its floor before the first ID). */
  lastTimestamp(): number;
  /**
   * Moves the generator to another worker ID, or stops it from issuing (`null`) until the next assignment, with the
   * reason callers see meanwhile: `lost` (the source learnt it lost the ID) or `switching` (the default).
   */
  reassign(assignment: WorkerAssignment | null, reason?: 'lost' | 'switching'): void;
}

/**
 * Where a worker ID comes from: fixed (options, host name), leased from Redis, or an app's own (option
 * `workerSource`). The contract every source keeps, and which `runWorkerSourceConformance` from
 * `nestjs-snowflake/testing` checks:
 * - **exclusive**: while a holder may issue under a worker ID, no other holder (any process) is handed it;
 * - **floor**: a reused ID's assignment carries a `floor` at or above everything its previous holders issued
 *   (their last timestamps or ceilings), whatever their clocks said, and at or above this process's own last
 *   timestamp under that ID;
 * - **ceiling and fence**: the permit never allows a timestamp above what the source has recorded for the ID, and
 *   throws `WorkerUnavailableError` once the source cannot be sure it still holds the ID (for a lease: by
 *   `ttl - margin` after the last confirmed renewal, on the monotonic clock);
 * - **loss**: a source that learns it lost the ID stops issuing at once (`reassign(null)`) and leaves its last
 *   timestamp where the next holder will see it;
 * - **release**: `stop()` records the last timestamp and frees the ID at once for the next holder;
 * - **recovery**: after its backend lost data, no ID is handed out before every holder from before has either
 *   proved its lease or stopped issuing.
 *
 * @publicApi
 */
export interface WorkerIdSource {
  /** What kind of source this is, for `status()` and logs: `static`, `hostname`, `redis`, or the app's own name. */
  readonly kind: 'static' | 'hostname' | 'redis' | (string & {});
  /** Obtains the first worker ID. The module awaits it before the app serves. */
  start(context: WorkerSourceContext): Promise<WorkerAssignment>;
  /** Gives the worker ID back, recording the last issued timestamp (ticks). Idempotent. */
  stop(lastTimestamp: number): Promise<void>;
  /**
   * Asks for another worker ID because the current one cannot go on (the clock stepped back beyond the tolerance).
   * Sources that cannot switch return false, and the error reaches the caller.
   */
  requestSwitch(lastTimestamp: number, reason: string): boolean;
  /**
   * Resolves once IDs may be issued again (after a switch or re-claim); rejects if that cannot happen. The caller
   * bounds the wait with `signal` (the call's `timeoutMs` or the module's `maxAsyncWaitMs`, and the caller's own
   * signal): a source should drop its waiter and reject with `signal.reason` when it aborts. One that ignores the
   * signal still cannot hold a caller past it; the binding stops waiting on its own.
   */
  whenReady(signal?: AbortSignal): Promise<void>;
}
