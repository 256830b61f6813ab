import type { LoggerService } from '@nestjs/common';
import { capacityOf } from './lease.math.js';
import type { LeaseSettings } from './lease.settings.js';
import type { LeaseCapacity } from './lease.status.js';

/**
 * The namespace's held and free worker IDs as the claim and renewal replies count them, with one warning when the
 * free IDs fall to `redis.lowCapacityWarning` and one line when they rise above it again: a namespace running low is
 * said once, not at every renewal.
 */
export class CapacityGauge {
  private last: LeaseCapacity | null = null;

  constructor(
    private readonly settings: Pick<LeaseSettings, 'idCount' | 'lowCapacityAtFree' | 'namespace'>,
    private readonly logger: LoggerService,
  ) {}

  get current(): LeaseCapacity | null {
    return this.last;
  }

  /** A reply counted `held` live leases; `checkedAt` is the local Unix ms of the reply. */
  observe(held: number, checkedAt: number): void {
    const { idCount, lowCapacityAtFree, namespace } = this.settings;
    const wasLow = this.last?.low ?? false;
    const now = capacityOf(idCount, held, lowCapacityAtFree, checkedAt);
    this.last = now;
    if (now.low && !wasLow) {
      this.logger.warn(
        `Namespace "${namespace}" runs low on worker IDs: ${now.free} of ${now.size} free (${now.held} held), at or ` +
          `below redis.lowCapacityWarning (${lowCapacityAtFree} free). New instances fail to start once none is ` +
          'free: give the layout more worker bits, run fewer instances, or give services their own namespaces.',
      );
    } else if (!now.low && wasLow) {
      this.logger.log(
        `Namespace "${namespace}" has worker IDs to spare again: ${now.free} of ${now.size} free (${now.held} held)`,
      );
    }
  }
}
