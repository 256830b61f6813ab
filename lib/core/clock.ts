/**
 * The clocks the generator and the lease read. `now()` is the wall clock: Unix time in integer milliseconds, the
 * time IDs carry. `monotonicNow()` is a clock that never steps, for bounds, waits and lease fencing; a clock that
 * leaves it out gets `performance.now()`. Inject a fake to test time steps: a fake that implements both moves fences
 * and renewals too.
 *
 * @publicApi
 */
export interface Clock {
  now(): number;
  /** Milliseconds on a clock immune to wall-clock steps (any origin). */
  monotonicNow?(): number;
}

/** A clock with both readings, as the library uses it internally. */
export interface Clocks {
  now(): number;
  monotonicNow(): number;
}

/** The system clock (`Date.now`). @publicApi */
export const systemClock: Clock = Object.freeze({ now: Date.now, monotonicNow: () => performance.now() });

/** Both readings of `clock`, the monotonic one from `performance.now()` when the clock has none of its own. */
export function bothClocks(clock: Clock = systemClock): Clocks {
  if (clock === systemClock) return systemClock as Clocks;
  const monotonic = clock.monotonicNow?.bind(clock) ?? (() => performance.now());
  return { now: () => clock.now(), monotonicNow: monotonic };
}
