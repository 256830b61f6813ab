import { WorkerUnavailableError } from '../core/errors.js';
import type { LeasePhase } from './lease.phase.js';
import type { ServerClock } from './server-clock.js';

/**
 * The lease's answer to the generator before the first ID of each time unit: the confirmed ceiling in ticks, unless the lease is not held,
 * may have lapsed (its fence time has come on the monotonic clock) or the wall clock `nowMs` disagrees with the
 * server's beyond the bound, which also asks for an early renewal to measure again.
 *
 * @throws WorkerUnavailableError with the reason: settling, stopped, lost, switching, clock or fenced
 */
export function permittedCeiling(
  phase: LeasePhase,
  nowMs: number,
  mono: number,
  serverClock: ServerClock,
  namespace: string,
  lastError: string | null,
  renewEarly: () => void,
): number {
  if (phase.name !== 'held') {
    if (phase.name === 'settling') {
      const leftMs = Math.max(0, phase.untilMono - mono);
      throw new WorkerUnavailableError('settling', `namespace "${namespace}", ${Math.round(leftMs)} ms left`, leftMs);
    }
    if (phase.name === 'released') throw new WorkerUnavailableError('stopped');
    throw new WorkerUnavailableError(phase.name === 'lost' ? 'lost' : 'switching');
  }
  if (serverClock.skewMs(nowMs, mono) > serverClock.boundMs) {
    renewEarly();
    throw new WorkerUnavailableError(
      'clock',
      `it stands ${serverClock.offsetNow(nowMs, mono)} ms from the server's, bound ${serverClock.boundMs} ms`,
    );
  }
  if (mono >= phase.lease.fenceAt) {
    throw new WorkerUnavailableError('fenced', `worker ID ${phase.lease.workerId}; last error: ${lastError ?? 'none'}`);
  }
  return phase.lease.ceilingTicks;
}
