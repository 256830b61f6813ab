import { describeInput } from './describe-input.js';
import { SnowflakeConfigError } from './errors.js';

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

/**
 * Both readings of `clock`, the monotonic one from `performance.now()` when the clock has none of its own. A clock of
 * the app's is checked on every reading: a string or NaN would pass every comparison it meets (`NaN > t` is false),
 * so IDs would carry no time and time checks would never refuse.
 */
export function bothClocks(clock: Clock = systemClock): Clocks {
  if (clock === systemClock) return systemClock as Clocks;
  const monotonic = clock.monotonicNow?.bind(clock) ?? (() => performance.now());
  return { now: () => readNow(clock), monotonicNow: () => checkedReading(monotonic(), 'monotonicNow') };
}

/**
 * A `clock` option checked where it is given: an object whose `now()` returns finite milliseconds now.
 *
 * @throws SnowflakeConfigError naming `clock`
 * @internal
 */
export function checkClock(clock: unknown): Clock {
  if (typeof clock !== 'object' || clock === null || typeof (clock as Clock).now !== 'function') {
    throw new SnowflakeConfigError('clock', 'expected an object with a now() method.');
  }
  readNow(clock as Clock);
  return clock as Clock;
}

/** `clock.now()`, refused unless it is a finite number. @throws SnowflakeConfigError naming `clock` @internal */
export function readNow(clock: Clock): number {
  return checkedReading(clock.now(), 'now');
}

function checkedReading(value: unknown, method: 'now' | 'monotonicNow'): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new SnowflakeConfigError(
      'clock',
      `clock.${method}() returned ${describeInput(value)}; expected milliseconds as a finite number.`,
    );
  }
  return value;
}
