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

/**
 * Rejects keys an options object does not have (a misspelt `layot`, a `ttl` for `ttlMs`), naming the option path and
 * the closest valid name. Silently ignoring one would leave its default in force without a word.
 *
 * @internal
 */
export function rejectUnknownKeys(path: string, options: object, known: readonly string[], what: string): void {
  const unknown = Object.keys(options).filter((key) => !known.includes(key));
  if (unknown.length === 0) return;
  const key = unknown[0];
  const near = closestName(key, known);
  const others = unknown.length > 1 ? ` (also unknown: ${unknown.slice(1).join(', ')})` : '';
  throw new SnowflakeConfigError(
    path === '' ? key : `${path}.${key}`,
    `${what} has no option ${JSON.stringify(key)}${others}` +
      `${near === undefined ? '.' : `; did you mean \`${near}\`?`} Valid options: ${known.join(', ')}.`,
  );
}

/** The known name closest to `key` (case-insensitive edit distance, or a unit suffix left out), if close enough. */
export function closestName(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const candidate = name.toLowerCase();
    // `ttl` for `ttlMs`, `sequenceBit` for `sequenceBits`: a known name that starts with the key, or the reverse.
    const prefix = candidate.startsWith(lower) || lower.startsWith(candidate);
    const distance = prefix ? Math.abs(candidate.length - lower.length) * 0.5 : editDistance(lower, candidate);
    if (best === undefined || distance < best.distance) best = { name, distance };
  }
  if (best === undefined) return undefined;
  return best.distance <= Math.max(2, Math.floor(key.length / 3)) ? best.name : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j] + 1, current[j - 1] + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length];
}
