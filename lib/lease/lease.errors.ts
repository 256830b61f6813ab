import { SnowflakeError } from '../core/errors.js';

/**
 * Every worker ID of the namespace is held by a live lease.
 *
 * @publicApi
 */
export class LeaseExhaustedError extends SnowflakeError {
  constructor(
    readonly namespace: string,
    readonly held: number,
    readonly capacity: number,
  ) {
    super(
      `All ${capacity} worker IDs of namespace "${namespace}" are held (${held} live leases). ` +
        "Stop an instance, wait for a crashed one's lease to expire, give the layout more worker bits, " +
        'or run this service under its own `redis.namespace`.',
    );
  }
}

/**
 * Redis could not be reached (or did not answer in time) while claiming a worker ID at bootstrap.
 *
 * @publicApi
 */
export class RedisUnavailableError extends SnowflakeError {
  constructor(
    readonly namespace: string,
    readonly attempts: number,
    readonly lastError: string,
  ) {
    super(
      `Could not claim a worker ID in namespace "${namespace}" after ${attempts} attempts: ${lastError}. ` +
        'Check that Redis is reachable at the configured URL, or raise `redis.bootstrapAttempts` / `redis.connectTimeoutMs`.',
    );
  }
}
