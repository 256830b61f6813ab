import { inspect } from 'node:util';
import { cut, describeInput } from './describe-input.js';
import { SnowflakeConfigError } from './errors.js';

/**
 * Keys that reach an object's prototype rather than one of its options. `JSON.parse('{"__proto__": {…}}')` makes an
 * own `__proto__` key, which a copy by assignment (as Nest's module builder makes) turns into the prototype of the
 * options, so that an option nobody wrote (`workerId`, `publicIds.checkBits`) is read through it.
 */
const PROTOTYPE_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];
/** How deep {@link rejectPrototypeKeys} looks: deeper than any option nests. */
const MAX_OPTION_DEPTH = 8;

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
    throw new SnowflakeConfigError(option, `expected a non-negative number, got ${shown(value)}.`);
  }
  return value;
}

/** Like {@link nonNegativeOption}, but zero is refused too. @internal */
export function positiveOption(option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new SnowflakeConfigError(option, `expected a positive number, got ${shown(value)}.`);
  }
  return value;
}

/** A true-or-false option: `undefined` takes the default; anything else but a boolean names the option. @internal */
export function booleanOption(option: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean')
    throw new SnowflakeConfigError(option, `expected true or false, got ${shown(value)}.`);
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
  const at = path === '' ? cut(key) : `${path}.${cut(key)}`;
  if (PROTOTYPE_KEYS.includes(key)) throw prototypeKeyError(at, what);
  const near = closestName(key, known);
  const others =
    unknown.length === 1
      ? ''
      : ` (also unknown: ${unknown
          .slice(1, 4)
          .map((name) => cut(name))
          .join(', ')}${unknown.length > 4 ? ', …' : ''})`;
  throw new SnowflakeConfigError(
    at,
    `${what} has no option ${describeInput(key)}${others}` +
      `${near === undefined ? '.' : `; did you mean \`${near}\`?`} Valid options: ${known.join(', ')}.`,
  );
}

/**
 * Refuses own `__proto__`, `constructor` and `prototype` keys anywhere in plain objects and arrays of options, before
 * anything copies them: `forRoot()` runs it on what it is given, since Nest's module builder copies options by
 * assignment before the module reads them.
 *
 * @throws SnowflakeConfigError naming the key's path
 * @internal
 */
export function rejectPrototypeKeys(path: string, options: unknown, what: string): void {
  const seen = new Set<object>();
  const visit = (value: unknown, at: string, depth: number): void => {
    if (typeof value !== 'object' || value === null || depth > MAX_OPTION_DEPTH || seen.has(value)) return;
    seen.add(value);
    if (!Array.isArray(value) && !isPlainObject(value)) return;
    for (const key of Object.keys(value)) {
      const next = Array.isArray(value) ? `${at}[${key}]` : at === '' ? cut(key) : `${at}.${cut(key)}`;
      if (PROTOTYPE_KEYS.includes(key)) throw prototypeKeyError(next, what);
      visit((value as Record<string, unknown>)[key], next, depth + 1);
    }
  };
  visit(options, path, 0);
}

function prototypeKeyError(at: string, what: string): SnowflakeConfigError {
  return new SnowflakeConfigError(
    at,
    `${what} refuses the keys ${PROTOTYPE_KEYS.join(', ')}: they reach the prototype of the options instead of ` +
      'setting one (options parsed from JSON keep them as own keys). Remove the key.',
  );
}

/** An object literal, `JSON.parse` output or `Object.create(null)`: not a class instance, a Date or a Map. @internal */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** An option's value as a message shows it: short, and without running its own `inspect` or `toString`. */
function shown(value: unknown): string {
  return cut(
    inspect(value, { customInspect: false, depth: 0, maxArrayLength: 3, maxStringLength: 40, breakLength: Infinity }),
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
