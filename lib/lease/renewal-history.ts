import type { LoggerService } from '@nestjs/common';
import type { Backoff } from './async-tools.js';
import { leaseBackoff } from './lease.math.js';
import type { LeaseSettings } from './lease.settings.js';

/**
 * What a lease remembers of its renewals (when the last one succeeded, how many failed since, the last error of any
 * round trip, which the status and a refused ID report) and what it says of them: every failure is a warning, and a
 * renewal that succeeds is worth a line only when it ends failures, or follows a fence time that passed without one
 * failing (the event loop or the process stood still).
 */
export class RenewalHistory {
  lastRenewalAt: number | null = null;
  lastError: string | null = null;
  private readonly backoff: Backoff;

  constructor(settings: Pick<LeaseSettings, 'retryBackoffMs' | 'renewIntervalMs'>) {
    this.backoff = leaseBackoff(settings);
  }

  get failuresInARow(): number {
    return this.backoff.failuresInARow;
  }

  /** A lease held (claimed, or renewed): nothing has failed since `now`. */
  succeeded(now: number): void {
    this.backoff.reset();
    this.lastRenewalAt = now;
    this.lastError = null;
  }

  /** A renewal that kept the lease on `workerId`. */
  renewed(workerId: number, wasFenced: boolean, now: number, logger: LoggerService): void {
    const failures = this.backoff.failuresInARow;
    if (failures > 0) {
      logger.log(`Lease on worker ID ${workerId} renewed again after ${failures} failures`);
    } else if (wasFenced) {
      logger.log(
        `Lease on worker ID ${workerId} renewed after its fence time passed with no renewal failing (the ` +
          'event loop or the process stood still); IDs are issued again',
      );
    }
    this.succeeded(now);
  }

  /** A renewal of `workerId` that failed with `error`: warns, and returns how long to wait before the next try. */
  failed(workerId: number, error: string, logger: LoggerService): number {
    this.lastError = error;
    const waitMs = this.backoff.next();
    logger.warn(`Renewing the lease on worker ID ${workerId} failed (${this.failuresInARow} in a row): ${error}`);
    return waitMs;
  }
}
