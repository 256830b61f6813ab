import { SnowflakeError, TransientSnowflakeError } from '../core/errors.js';
import { contractDifferences } from './lease.contract.js';
import { noneFreeOpening } from './lease.messages.js';

/**
 * Every worker ID of the namespace is held by a live lease.
 *
 * @publicApi
 */
export class LeaseExhaustedError extends TransientSnowflakeError {
  constructor(
    readonly namespace: string,
    readonly held: number,
    readonly capacity: number,
    /** Free IDs this instance passed over: the one it switches away from, or ones whose floor its clock is behind. */
    readonly skipped = 0,
    /** How long the claim waited for an ID to become free (`redis.waitForFreeWorkerIdMs`), ms. */
    readonly waitedMs = 0,
  ) {
    super(
      (skipped === 0 && held >= capacity
        ? `All ${capacity} worker IDs of namespace "${namespace}" are held (${held} live leases)`
        : `${noneFreeOpening(namespace, held, capacity)} are held by live leases` +
          (skipped > 0
            ? ` and ${skipped} were passed over (the ID it switches away from, or a previous holder's ceiling too ` +
              'far ahead of this clock)'
            : '') +
          (held + skipped < capacity
            ? ', and the rest are reserved for the instances that held them before a Redis data loss (for one TTL ' +
              'after the namespace settled)'
            : '')) +
        (waitedMs > 0 ? `, still after waiting ${waitedMs} ms (redis.waitForFreeWorkerIdMs). ` : '. ') +
        "Stop an instance, wait for a crashed one's lease to expire, give the layout more worker bits, " +
        'run this service under its own `redis.namespace`, or raise `redis.waitForFreeWorkerIdMs` ' +
        `(${waitedMs} ms) so that a starting instance waits longer for an old one to stop (a rolling deploy with surge).`,
    );
  }
}

/**
 * The namespace is in use by instances with another contract: layout, `redis.ttlMs`, `redis.fenceMarginMs`,
 * `clockBackToleranceMs` or `redis.maxClockOffsetMs`. Every instance of a namespace must share them: a reused worker
 * ID's floor only covers IDs of the same layout, and the arithmetic that keeps IDs unique after a Redis data loss
 * holds only when every holder fences and checks its clock by the same numbers.
 *
 * @publicApi
 */
export class LeaseConfigMismatchError extends SnowflakeError {
  constructor(
    readonly namespace: string,
    /** The configuration the namespace's live holders run with. */
    readonly recorded: string,
    /** This instance's configuration. */
    readonly given: string,
    readonly liveLeases: number,
    /**
     * IDs held back after a Redis data loss for the instances that lost them, which run the namespace's contract and
     * are about to claim them again (one TTL after settling at most).
     */
    readonly heldBackLeases = 0,
  ) {
    const differences = contractDifferences(recorded, given);
    const inUse =
      heldBackLeases > 0
        ? `${liveLeases} live leases, ${heldBackLeases} held back after a data loss for the instances that lost them`
        : `${liveLeases} live leases`;
    super(
      `Namespace "${namespace}" is in use (${inUse}) with another contract than this instance's ` +
        `(${differences.length > 0 ? differences.join('; ') : `${recorded} against ${given}`}). Every instance of a ` +
        'namespace must use the same layout, `redis.ttlMs`, `redis.fenceMarginMs`, `clockBackToleranceMs` and ' +
        '`redis.maxClockOffsetMs`: use the same values (set them explicitly where a default derives from ttlMs), ' +
        'or give this deployment its own `redis.namespace`. A namespace takes a new contract once no lease in it ' +
        'is live (every instance stopped) and none is held back after a data loss.',
    );
  }
}

/**
 * The namespace issued IDs under another layout (epoch, time unit or field widths), and this instance's layout would
 * issue IDs among them: below the highest the old layout may have issued, on any worker ID. Neither the floor nor the
 * time rule can compare IDs of two layouts, so the namespace takes a new layout only once its IDs lie above every
 * old one; it waits for that when it is at most 12 s away, and refuses the instance when it is further.
 *
 * @publicApi
 */
export class LeaseLayoutChangeError extends SnowflakeError {
  constructor(
    readonly namespace: string,
    /** The contract the namespace's last holders ran, with their layout. */
    readonly recorded: string,
    /** This instance's contract. */
    readonly given: string,
    /** How long until this layout's IDs lie above every ID of the recorded one, ms. */
    readonly waitMs: number,
  ) {
    const differences = contractDifferences(recorded, given).filter((part) => /^(layout|unit|epoch):/.test(part));
    super(
      `Namespace "${namespace}" issued IDs under another layout than this instance's ` +
        `(${differences.length > 0 ? differences.join('; ') : `${recorded} against ${given}`}), and this layout's ` +
        `IDs would lie among them for another ${Math.ceil(waitMs / 1000)} s: they could repeat IDs already issued. ` +
        'Keep the recorded layout; or choose one whose IDs lie above the old ones (an earlier epoch, a finer time ' +
        'unit, more bits below the timestamp); or, where no stored ID can meet the new ones (a new table), give ' +
        'this deployment its own `redis.namespace`.',
    );
  }
}

/**
 * Redis could not be reached (or did not answer in time) while claiming a worker ID at bootstrap.
 *
 * @publicApi
 */
export class RedisUnavailableError extends TransientSnowflakeError {
  constructor(
    readonly namespace: string,
    readonly attempts: number,
    readonly lastError: string,
    /** What to do, fitted to the cause (a wrong password, an unknown host, a closed port). */
    advice?: string,
  ) {
    super(
      `Could not claim a worker ID in namespace "${namespace}" after ${attempts} attempt${attempts === 1 ? '' : 's'}: ` +
        `${lastError}. ${advice === undefined ? 'Check that Redis is reachable at the configured URL, or raise `redis.bootstrapAttempts` / `redis.connectTimeoutMs`.' : `To fix: ${advice}.`}`,
    );
  }
}

/**
 * This instance's wall clock disagrees with the Redis server's clock by more than `redis.maxClockOffsetMs`, so it
 * claims no worker ID: after a Redis data loss, the settling rule bounds earlier holders' IDs only for clocks that
 * agree with the server's.
 *
 * @publicApi
 */
export class ClockOutOfSyncError extends SnowflakeError {
  constructor(
    readonly namespace: string,
    /** Local wall clock minus Redis server clock, ms. */
    readonly offsetMs: number,
    /** Half the round trip of the measurement, ms. */
    readonly errorMs: number,
    readonly boundMs: number,
  ) {
    super(
      `The wall clock of this instance stands ${Math.round(offsetMs)} ms from the Redis server's clock ` +
        `(± ${Math.ceil(errorMs)} ms), beyond redis.maxClockOffsetMs (${boundMs} ms), so no worker ID of ` +
        `namespace "${namespace}" is claimed. Synchronise the clocks of this machine and of Redis (NTP), or raise ` +
        'redis.fenceMarginMs (with redis.ttlMs) to allow a larger offset.',
    );
  }
}
