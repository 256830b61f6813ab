import type { LoggerService } from '@nestjs/common';
import type { Sleeper } from './async-tools.js';
import { claimLease, type ClaimHost, type PriorLease } from './claim-loop.js';
import { message, type GiveBack } from './give-back.js';
import { leaseBackoff } from './lease.math.js';
import type { HeldLease } from './lease.phase.js';
import type { LeaseRounds } from './lease.rounds.js';
import type { LeaseSettings } from './lease.settings.js';

/** What the way back needs of the lease it works for; the lease alone moves its phase (`adopt`). */
export interface RecoveryHost {
  readonly settings: LeaseSettings;
  readonly sleeper: Sleeper;
  readonly claimHost: ClaimHost;
  readonly rounds: LeaseRounds;
  readonly giveBack: GiveBack;
  readonly logger: LoggerService;
  isStopped(): boolean;
  failed(error: string): void;
  /** Takes a confirmed lease to issue under; called in the turn its claim ended, never after a stop. */
  adopt(lease: HeldLease, why: string): void;
}

/**
 * The way back to a held lease once the one held is lost or given up: a note of the last timestamp under the lost
 * ID, then claims until one holds. Runs on the lease's queue, after the lease has stopped issuing.
 */
export class LeaseRecovery {
  constructor(private readonly host: RecoveryHost) {}

  /** After a loss: leaves the note of `lastMs` (holder ms) under the lost ID, then claims another. */
  async afterLoss(lease: HeldLease, reason: string, lastMs: number): Promise<void> {
    const { host } = this;
    // A server that answers for a lease it let lapse has been paused (SIGSTOP, a VM pause) and runs again: its
    // cluster may have promoted its replica meanwhile, and it serves its old data until it learns it was demoted, a
    // moment later. The note and the claim wait a renew interval, so that they reach the node that serves now.
    if (reason === 'lapsed') {
      await host.sleeper.sleep(host.settings.renewIntervalMs);
      if (host.isStopped()) return;
    }
    // The note comes before any new claim: the claim needs Redis as much as the note does, and without the note
    // the ID's next holder would be bounded by the settling rule alone.
    await host.giveBack.note(lease, lastMs);
    // Lost to a new marker while the namespace settled: the renewal reserved the ID for this token, so the claim
    // names it, and gets it ahead of instances that never booted (claim script).
    const prior = reason === 'marker' ? { id: lease.id, token: lease.token } : undefined;
    await this.reclaim([], `re-claimed after losing worker ID ${lease.workerId}`, prior);
  }

  /** Claims a new ID at run time (no attempt limit: Redis may come back), then hands it to the lease. */
  async reclaim(excluded: number[], why: string, prior?: PriorLease): Promise<void> {
    const { host } = this;
    const { claimHost, rounds, logger } = host;
    const backoff = leaseBackoff(host.settings);
    while (!host.isStopped()) {
      try {
        const lease = await claimLease(claimHost, excluded, Infinity, prior);
        if (host.isStopped()) {
          await rounds.release(lease, lease.floorMs ?? -1).catch(() => undefined);
          return lease.untrack(-1);
        }
        return host.adopt(lease, why);
      } catch (error) {
        if (host.isStopped()) return;
        host.failed(message(error));
        logger.error(`Could not claim another worker ID: ${message(error)}; retrying`);
        await host.sleeper.sleep(backoff.next());
      }
    }
  }
}
