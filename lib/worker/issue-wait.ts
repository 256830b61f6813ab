import { SnowflakeConfigError } from '../core/errors.js';
import { describeInput } from '../core/describe-input.js';
import type { NextIdOptions } from '../core/generator.options.js';

/**
 * How long one asynchronous call may wait, and what may cut it short: the per-call options of
 * `IdService.nextAsync()` and `nextBatchAsync()`.
 *
 * @publicApi
 */
export interface WaitOptions {
  /**
   * Ends the wait at once when it aborts: the call rejects with the signal's `reason`, as `fetch()` and
   * `signal.throwIfAborted()` do. A signal already aborted rejects the call before it issues anything.
   */
  signal?: AbortSignal;
  /**
   * The longest this call waits for a worker ID (in total, over the call), in ms: replaces the module's
   * `maxAsyncWaitMs` for this call, shorter or longer. `0` fails at once when no worker ID is usable; `Infinity` waits
   * until one is, the app stops, or `signal` aborts. Waits for the next time unit (a used-up sequence) do not count.
   * @default the module option `maxAsyncWaitMs`
   */
  timeoutMs?: number;
}

/**
 * The options of `IdService.nextAsync()` and `nextBatchAsync()`: a shard key, and the wait's bound and signal.
 *
 * @publicApi
 */
export interface AsyncIdOptions extends NextIdOptions, WaitOptions {}

/** The default of the module option `maxAsyncWaitMs`, in ms. The README gives the reasons. @internal */
export const DEFAULT_MAX_ASYNC_WAIT_MS = 5000;

/**
 * One call's budget for waiting on a worker ID: the bound, where it came from, the time spent so far, and the
 * caller's signal. Measured on `performance.now()`, the clock of the timers that wait.
 *
 * @internal
 */
export class IssueWait {
  readonly limitMs: number;
  readonly limitFrom: 'timeoutMs' | 'maxAsyncWaitMs';
  readonly signal: AbortSignal | undefined;
  private spentMs = 0;
  private waitingSince: number | undefined;

  /** @throws SnowflakeConfigError for a `timeoutMs` or `signal` of the wrong kind */
  constructor(options: WaitOptions | undefined, defaultMs: number) {
    const timeoutMs = options?.timeoutMs;
    if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs < 0)) {
      throw new SnowflakeConfigError(
        'timeoutMs',
        `expected a non-negative number of milliseconds (or Infinity), got ${describeInput(timeoutMs)}.`,
      );
    }
    const signal = options?.signal;
    if (signal !== undefined && !isAbortSignal(signal)) {
      throw new SnowflakeConfigError('signal', `expected an AbortSignal, got ${describeInput(signal)}.`);
    }
    this.limitMs = timeoutMs ?? defaultMs;
    this.limitFrom = timeoutMs === undefined ? 'maxAsyncWaitMs' : 'timeoutMs';
    this.signal = signal;
    signal?.throwIfAborted();
  }

  /** What is left of the bound, ms (Infinity for an unbounded call). */
  get leftMs(): number {
    return this.limitMs - this.waitedMs;
  }

  /** The time spent waiting so far, the wait under way included, ms. */
  get waitedMs(): number {
    return this.spentMs + (this.waitingSince === undefined ? 0 : performance.now() - this.waitingSince);
  }

  /** Runs `wait`, counting the time it takes against the bound. */
  async measure<T>(wait: () => Promise<T>): Promise<T> {
    const started = performance.now();
    this.waitingSince = started;
    try {
      return await wait();
    } finally {
      this.waitingSince = undefined;
      this.spentMs += performance.now() - started;
    }
  }
}

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
export function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return new Promise((resolve) => setTimeout(resolve, ms));
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * `promise`, or a rejection with the signal's reason as soon as it aborts, whichever comes first: a source whose
 * `whenReady()` ignores the signal still cannot hold the caller past it.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    // Settles nothing once the signal has won; the handlers keep a later rejection from going unhandled.
    promise.finally(() => signal.removeEventListener('abort', onAbort)).then(resolve, reject);
  });
}

function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AbortSignal).aborted === 'boolean' &&
    typeof (value as AbortSignal).addEventListener === 'function' &&
    typeof (value as AbortSignal).throwIfAborted === 'function'
  );
}
