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

  /** Resolves the callers of `whenReady()` while an {@link outage} lasts; undefined when there is none. */
  private outageEnds: Promise<void> | undefined;

  /**
   * Takes the worker ID away, as a lease does when Redis goes away (the generator refuses with `switching`), and
   * hands the same assignment back after `ms`, as a re-claim does when it returns; without `ms` the outage lasts
   * until the app stops. Meanwhile `whenReady()` (in its `ready` form) resolves when the ID is back, or rejects with
   * the caller's signal when its bound runs out.
   */
  outage(ms?: number): void {
    const context = this.context;
    if (context === undefined) throw new Error('StubWorkerSource.outage(): the source has not been started');
    const assignment = this.assignment();
    context.reassign(null);
    this.outageEnds = new Promise((resolve) => {
      if (ms === undefined) return;
      setTimeout(() => {
        this.outageEnds = undefined;
        context.reassign(assignment);
        resolve();
      }, ms);
    });
  }

  start(context: WorkerSourceContext): Promise<WorkerAssignment> {
    this.context = context;
    const { startDelayMs = 0 } = this.options;
    const assignment = this.assignment();
    if (startDelayMs === 0) return Promise.resolve(assignment);
    return new Promise((resolve) => setTimeout(() => resolve(assignment), startDelayMs));
  }

  private assignment(): WorkerAssignment {
    const { workerId = 0, datacenterId = 0, floor = -1, refusal } = this.options;
    return {
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
        return this.outageEnds === undefined ? Promise.resolve() : untilAborted(this.outageEnds, signal);
      case 'deaf':
        return new Promise(() => undefined);
      case 'until-aborted':
        return new Promise((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
        });
    }
  }
}

/** `promise`, or the signal's reason as soon as it aborts. */
function untilAborted(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return promise;
  return new Promise((resolve, reject) => {
    const abort = () => reject(signal.reason as Error);
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
