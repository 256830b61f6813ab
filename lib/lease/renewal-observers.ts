import { redisCause } from './redis/redis-cause.js';

/**
 * One renewal round trip of a worker-ID lease, as its observers see it.
 *
 * @publicApi
 */
export interface LeaseRenewalSample {
  /**
   * `renewed`: the lease was extended. `recovered`: Redis had lost the namespace's data and the lease was taken back
   * into the new data. `lost`: the record is gone or taken (the holder stops issuing and re-claims). `failed`: no
   * answer, or not a confirmed one (the holder retries with back-off).
   */
  outcome: 'renewed' | 'recovered' | 'lost' | 'failed';
  /** From sending the renewal to its answer or error, on the monotonic clock, in ms. */
  durationMs: number;
  /**
   * Why it did not succeed: for `failed`, the error's code (`ECONNREFUSED`, `TIMEOUT`, a Redis reply prefix such
   * as `READONLY`, or `UNKNOWN`); for `lost`, the reason (`marker`, `missing`, `taken`, `config`); else null.
   */
  cause: string | null;
  /** The worker ID the renewal was for. */
  workerId: number;
}

/**
 * Called after each renewal round trip. It runs on the lease's renewal path: keep it short and do not throw (an
 * error is logged and ignored).
 *
 * @publicApi
 */
export type LeaseRenewalListener = (sample: LeaseRenewalSample) => void;

/**
 * A worker-ID source whose renewals can be observed: the Redis lease is one. `onRenewal` returns the function that
 * removes the listener.
 *
 * @publicApi
 */
export interface ObservesRenewals {
  onRenewal(listener: LeaseRenewalListener): () => void;
}

/**
 * Whether `source` (the worker-ID source under `SNOWFLAKE_WORKER_SOURCE`) offers {@link ObservesRenewals.onRenewal}.
 *
 * @publicApi
 */
export function observesRenewals(source: object): source is ObservesRenewals {
  return typeof (source as Partial<ObservesRenewals>).onRenewal === 'function';
}

/** The failure cause of a renewal that threw: the error's code, classified as the lease's errors are. */
export function renewalFailureCause(error: unknown): string {
  return redisCause(error).code;
}

/**
 * The listeners of one lease. The lease asks {@link active} before it reads a clock for a sample, so that nobody
 * listening costs nothing.
 */
/** Reports the outcome of one timed renewal. */
export type RenewalReport = (outcome: LeaseRenewalSample['outcome'], cause?: string | null) => void;

export class RenewalObservers {
  private readonly listeners = new Set<LeaseRenewalListener>();

  constructor(private readonly onListenerError: (error: unknown) => void) {}

  get active(): boolean {
    return this.listeners.size > 0;
  }

  add(listener: LeaseRenewalListener): () => void {
    // A wrapper per registration, so that the same function added twice is called (and removed) twice.
    const entry: LeaseRenewalListener = (sample) => listener(sample);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  /**
   * Starts timing one renewal of `workerId`: the function returned reports its outcome to the listeners. Without
   * listeners when it starts it reads no clock and reports nothing (a listener added during the round trip sees the
   * next one).
   */
  time(monotonicNow: () => number, workerId: number): RenewalReport {
    if (!this.active) return () => undefined;
    const sentMono = monotonicNow();
    return (outcome, cause = null) => this.emit({ outcome, durationMs: monotonicNow() - sentMono, cause, workerId });
  }

  emit(sample: LeaseRenewalSample): void {
    for (const listener of this.listeners) {
      try {
        listener(sample);
      } catch (error) {
        // An observer must never change what the lease does: its error is reported, the renewal goes on.
        this.onListenerError(error);
      }
    }
  }
}
