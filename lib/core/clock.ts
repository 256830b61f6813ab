/**
 * The wall clock the generator reads: Unix time in integer milliseconds. Inject a fake to test time steps.
 *
 * @publicApi
 */
export interface Clock {
  now(): number;
}

/** The system clock (`Date.now`). @publicApi */
export const systemClock: Clock = Object.freeze({ now: Date.now });

/** Milliseconds on a monotonic clock: immune to wall-clock steps, used for bounds and lease fencing. */
export const monotonicNow = (): number => performance.now();
