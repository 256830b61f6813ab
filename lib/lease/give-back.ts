import type { LoggerService } from '@nestjs/common';
import type { Sleeper } from './async-tools.js';
import { leaseBackoff } from './lease.math.js';
import type { HeldLease } from './lease.phase.js';
import type { LeaseRounds, ReleaseOutcome } from './lease.rounds.js';
import type { LeaseSettings } from './lease.settings.js';

/**
 * Giving a worker ID back: released at shutdown, released before a switch, or, when the lease was lost, a note of
 * the last timestamp retried until the backend takes it. Whatever happens, the last timestamp reaches the ID's
 * record before this process claims anything else, so the ID's next holder starts above it.
 */
export class GiveBack {
  constructor(
    private readonly rounds: LeaseRounds,
    private readonly settings: LeaseSettings,
    private readonly logger: LoggerService,
    private readonly sleeper: Sleeper,
    private readonly isStopped: () => boolean,
    private readonly failed: (error: string) => void,
  ) {}

  /** At shutdown: release, or say why the lease's own expiry and ceiling will do. */
  async atShutdown(lease: HeldLease, lastMs: number): Promise<void> {
    try {
      this.log(lease, await this.rounds.release(lease, lastMs), 'at shutdown');
    } catch (error) {
      this.logger.warn(
        `Could not release worker ID ${lease.workerId} (${message(error)}); it becomes free when its lease ` +
          'expires, and its ceiling in Redis covers every timestamp issued under it',
      );
    }
  }

  /** Before a switch: release, else (like a loss) a note of the exact last timestamp. */
  async beforeSwitch(lease: HeldLease, lastMs: number): Promise<void> {
    try {
      const outcome = await this.rounds.release(lease, lastMs);
      if (outcome.kind === 'noted') this.log(lease, outcome, 'when switching');
    } catch (error) {
      this.logger.warn(
        `Could not release worker ID ${lease.workerId} before switching (${message(error)}); leaving a note`,
      );
      await this.note(lease, lastMs);
    }
  }

  /** Leaves a note of `lastMs` on the lease's record, retrying with back-off until it is taken or the app stops. */
  async note(lease: HeldLease, lastMs: number): Promise<void> {
    const backoff = leaseBackoff(this.settings);
    while (!this.isStopped()) {
      try {
        return await this.rounds.note(lease, lastMs);
      } catch (error) {
        this.failed(message(error));
        const waitMs = backoff.next();
        this.logger.warn(
          `Could not leave a note of the last timestamp on worker ID ${lease.workerId} (${message(error)}); ` +
            `retrying in ${waitMs} ms`,
        );
        await this.sleeper.sleep(waitMs);
      }
    }
  }

  private log(lease: HeldLease, outcome: ReleaseOutcome, when: string): void {
    const last = outcome.lastMs < 0 ? 'nothing issued' : `last timestamp ${new Date(outcome.lastMs).toISOString()}`;
    const { namespace } = this.settings;
    if (outcome.kind === 'released') {
      this.logger.log(`Released worker ID ${lease.workerId} in namespace "${namespace}" (${last})`);
    } else {
      this.logger.warn(
        `Worker ID ${lease.workerId} in namespace "${namespace}" was no longer ours ${when} ` +
          `(Redis lost its data or another instance took it); noted ${last} on its record`,
      );
    }
  }
}

export function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
