import { SequenceExhaustedError, WorkerUnavailableError } from '../core/errors.js';
import type { Layout } from '../core/layout.js';

/**
 * Where the ORM integrations take IDs from: what they need of `IdService`. A bare `SnowflakeGenerator` fits too.
 *
 * @publicApi
 */
export interface IdIssuer {
  /** The layout IDs follow: the TypeORM integration refuses `number` properties when it is wider than 53 bits. */
  readonly layout: Pick<Layout, 'totalBits'>;
  /** The next ID, now. @throws SequenceExhaustedError, WorkerUnavailableError when it cannot be issued now */
  next(): bigint;
  /**
   * The next ID, waiting (without blocking) for the sequence of the next time unit or for a lease being re-claimed,
   * so that a write waits instead of failing.
   */
  nextAsync(): Promise<bigint>;
}

/**
 * The least an integration can take IDs from: `next()`, and `nextAsync()` to wait when `next()` cannot issue now
 * (without it, such an error fails the write). The Prisma extension takes it; `IdService` and `SnowflakeGenerator` fit.
 *
 * @publicApi
 */
export type SnowflakeIdSource = Pick<IdIssuer, 'next'> & Partial<Pick<IdIssuer, 'nextAsync'>>;

/**
 * The next ID: issued now when it can be, otherwise a promise of it when waiting can help. A used-up sequence and a
 * lease being re-claimed are worth waiting for when the source can wait; anything else (a clock gone back beyond the
 * tolerance) is thrown as `next()` threw it.
 *
 * The synchronous result lets a caller that fills many rows stay synchronous while IDs come at once, and pay for a
 * promise only when it has to wait.
 *
 * @internal
 */
export function issueOrWait(ids: SnowflakeIdSource): bigint | Promise<bigint> {
  try {
    return ids.next();
  } catch (error) {
    const waitable = error instanceof SequenceExhaustedError || error instanceof WorkerUnavailableError;
    if (!waitable || ids.nextAsync === undefined) throw error;
    return ids.nextAsync();
  }
}
