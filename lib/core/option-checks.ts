import { inspect } from 'node:util';
import { SnowflakeConfigError } from './errors.js';

/**
 * Numeric option checks shared by the generator, the module and the lease: `undefined` takes the default, anything
 * else must be a finite number in range, or a {@link SnowflakeConfigError} names the option. NaN must never pass,
 * since it would silently lift the bound it stands for.
 *
 * @internal
 */
export function nonNegativeOption(option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new SnowflakeConfigError(option, `expected a non-negative number, got ${inspect(value)}.`);
  }
  return value;
}

/** Like {@link nonNegativeOption}, but zero is refused too. @internal */
export function positiveOption(option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new SnowflakeConfigError(option, `expected a positive number, got ${inspect(value)}.`);
  }
  return value;
}
