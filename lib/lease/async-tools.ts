/**
 * The small async tools the lease is built from: a serial queue, sleeps that shutdown cuts short, and the one
 * back-off policy every retry loop follows.
 */

/** Runs operations one at a time, in the order they were queued; a failure does not stop the ones after it. */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.tail.then(operation);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/** Timers that {@link cancelAll} ends at once, so that none outlives the app; unref'd, so none holds it open. */
export class Sleeper {
  private cancelled = false;
  private readonly pending = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();

  /** Resolves after `ms`, or at once when cancelled. */
  sleep(ms: number): Promise<void> {
    if (this.cancelled) return Promise.resolve();
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.pending.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      entry.timer.unref();
      this.pending.add(entry);
    });
  }

  /** Runs `action` after `ms` unless cancelled first; the returned function cancels it. */
  after(ms: number, action: () => void): () => void {
    if (this.cancelled) return () => undefined;
    const entry = {
      timer: setTimeout(() => {
        this.pending.delete(entry);
        action();
      }, ms),
      resolve: () => undefined,
    };
    entry.timer.unref();
    this.pending.add(entry);
    return () => {
      clearTimeout(entry.timer);
      this.pending.delete(entry);
    };
  }

  cancelAll(): void {
    this.cancelled = true;
    for (const entry of this.pending) {
      clearTimeout(entry.timer);
      entry.resolve();
    }
    this.pending.clear();
  }
}

/**
 * Exponential back-off: `initialMs`, doubling after each failure, never above `maxMs`. Every retry loop of the lease
 * (claim, renewal, note, re-claim) waits by it, so that Redis coming back is met within `maxMs` whatever failed.
 */
export class Backoff {
  private failures = 0;

  constructor(
    private readonly initialMs: number,
    private readonly maxMs: number,
  ) {}

  /** The wait after one more failure. */
  next(): number {
    const ms = Math.min(this.initialMs * 2 ** this.failures, this.maxMs);
    this.failures++;
    return ms;
  }

  get failuresInARow(): number {
    return this.failures;
  }

  reset(): void {
    this.failures = 0;
  }
}

/** Callers waiting for a condition (a lease held again), settled all at once, each after a time limit or its signal. */
export class Waiters {
  private waiting: { resolve: () => void; reject: (error: Error) => void }[] = [];

  /**
   * Waits for {@link resolveAll}; rejects on {@link rejectAll}, with `onTimeout()` after `limitMs` (Infinity for
   * none), or with the signal's reason once it aborts. A waiter that leaves is removed at once.
   */
  wait(limitMs: number, onTimeout: () => Error, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
    return new Promise<void>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const leave = (error: Error): void => {
        done();
        this.waiting = this.waiting.filter((w) => w !== waiter);
        reject(error);
      };
      const waiter = {
        resolve: () => {
          done();
          resolve();
        },
        reject: (error: Error) => {
          done();
          reject(error);
        },
      };
      const onAbort = (): void => leave(signal!.reason as Error);
      const timer = Number.isFinite(limitMs) ? setTimeout(() => leave(onTimeout()), limitMs) : undefined;
      timer?.unref();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /** How many callers wait now. */
  get size(): number {
    return this.waiting.length;
  }

  resolveAll(): void {
    for (const waiter of this.waiting.splice(0)) waiter.resolve();
  }

  rejectAll(error: Error): void {
    for (const waiter of this.waiting.splice(0)) waiter.reject(error);
  }
}
