import type { WorkerUnavailableError } from '../../lib/core/errors.js';
import type { WorkerAssignment, WorkerIdSource, WorkerSourceContext } from '../../lib/worker/worker-source.js';

/** How a {@link StubWorkerSource} behaves; every field has the plain default of a source that is always ready. */
export interface StubWorkerSourceOptions {
  /** What `status()` and the logs call it. @default 'stub' */
  kind?: string;
  /** The worker ID it hands in. @default 0 */
  workerId?: number;
  /** @default 0 */
  datacenterId?: number;
  /** The assignment's floor in ticks. @default -1 (none) */
  floor?: number;
  /** Hands the assignment in after this many milliseconds, as a lease that needs a moment does. @default 0 */
  startDelayMs?: number;
  /** An error the assignment's permit throws for every ID: a fenced lease, a clock past the ceiling. */
  refusal?: () => WorkerUnavailableError;
  /**
   * What `whenReady()` does: `ready` resolves at once; `until-aborted` never resolves and rejects with the signal's
   * reason when the caller gives up; `deaf` ignores the signal and never settles. @default 'ready'
   */
  whenReady?: 'ready' | 'until-aborted' | 'deaf';
}

/**
 * An app's own worker-ID source (option `workerSource`) for in-process tests, whose assignment the test chooses and
 * which records what it is told: the context it was started with (through which a test reassigns or suspends the
 * generator by hand), the last timestamp `stop()` was given, and the reason of the last `requestSwitch()`. It never
 * switches. The Redis lease and the other real sources are proven against their backends, not through this.
 */
export class StubWorkerSource implements WorkerIdSource {
  readonly kind: string;
  context: WorkerSourceContext | undefined;
  stoppedAt: number | undefined;
  switchAsked: string | undefined;

  constructor(private readonly options: StubWorkerSourceOptions = {}) {
    this.kind = options.kind ?? 'stub';
  }

  start(context: WorkerSourceContext): Promise<WorkerAssignment> {
    this.context = context;
    const { workerId = 0, datacenterId = 0, floor = -1, refusal, startDelayMs = 0 } = this.options;
    const assignment: WorkerAssignment = {
      workerId,
      datacenterId,
      floor,
      ...(refusal !== undefined && {
        permit: {
          ceiling: () => {
            throw refusal();
          },
        },
      }),
    };
    if (startDelayMs === 0) return Promise.resolve(assignment);
    return new Promise((resolve) => setTimeout(() => resolve(assignment), startDelayMs));
  }

  stop(lastTimestamp: number): Promise<void> {
    this.stoppedAt = lastTimestamp;
    return Promise.resolve();
  }

  requestSwitch(_lastTimestamp: number, reason: string): boolean {
    this.switchAsked = reason;
    return false;
  }

  whenReady(signal?: AbortSignal): Promise<void> {
    switch (this.options.whenReady ?? 'ready') {
      case 'ready':
        return Promise.resolve();
      case 'deaf':
        return new Promise(() => undefined);
      case 'until-aborted':
        return new Promise((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
        });
    }
  }
}
